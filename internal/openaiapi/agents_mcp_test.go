package openaiapi_test

import (
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// agentsMCPRun is what testdata/agents/mcp.mjs saw.
type agentsMCPRun struct {
	Client struct {
		Tools []string `json:"tools"`
		Final string   `json:"final"`
		Items []string `json:"items"`
	} `json:"client"`
	Interruptions []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"interruptions"`
	Hosted struct {
		Final string                               `json:"final"`
		Items []struct{ Type, Raw, Output string } `json:"items"`
	} `json:"hosted"`
}

// bearerTransport adds an API key to each request of an MCP client.
type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// waitMCPTool waits until the node's /mcp lists the tool to the key's account (tasks are listed from their read
// model).
func waitMCPTool(t *testing.T, url, key, tool string) {
	t.Helper()
	ctx := ctxFor(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url,
			HTTPClient: &http.Client{Transport: bearerTransport(key)}}, nil)
		if err != nil {
			t.Fatalf("connect to /mcp: %v", err)
		}
		list, err := s.ListTools(ctx, nil)
		s.Close()
		if err != nil {
			t.Fatalf("list tools: %v", err)
		}
		if slices.ContainsFunc(list.Tools, func(x *mcp.Tool) bool { return x.Name == tool }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/mcp does not list %s after 10 s", tool)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAgentsSDKWithMCPBothWays: the OpenAI Agents SDK 0.20.0, with only its base URL changed, uses MCP both ways
// through Contrail: Contrail's /mcp as the agent's MCP server (the SDK lists the account's task among its tools and
// calls it; the task runs and its output reaches the model), and a hosted MCP tool that Contrail's responses call
// (held for approval: the SDK's run stops with the approval as an interruption, the SDK approves it through the
// run's state and sends the whole turn again without previous_response_id, and Contrail then makes the call, once).
func TestAgentsSDKWithMCPBothWays(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	srv := serveMCP(t)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) {
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	}))
	r := e.node.Do(t, e.key, "POST", "/julep/agents", map[string]any{"name": "runner"})
	var agent struct{ ID string }
	r.JSON(t, &agent)
	if r.Status != http.StatusCreated {
		t.Fatalf("create a Julep agent: %d %s", r.Status, r.Body)
	}
	r = e.node.Do(t, e.key, "POST", "/julep/agents/"+agent.ID+"/tasks", `{"name": "double", "description": "Doubles a number",
		"input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
		"main": [{"evaluate": {"x": "$ _.n * 2"}}]}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("create a task: %d %s", r.Status, r.Body)
	}
	waitMCPTool(t, e.node.URL+"/mcp", e.key, "task_double")

	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		offered := func(name string) bool {
			return slices.ContainsFunc(req.Tools, func(t llm.Tool) bool { return t.Name == name })
		}
		switch {
		case last.Role == llm.RoleTool && strings.Contains(last.Content, "the sum is 42"):
			return llmtest.Text("20 and 22 make 42.")
		case last.Role == llm.RoleTool && strings.Contains(last.Content, "42"):
			return llmtest.Text("21 doubled is 42.")
		case last.Role == llm.RoleTool:
			return llmtest.Text("The tool said: " + last.Content)
		case offered("task_double"):
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_double", Name: "task_double", Arguments: `{"n":21}`})
		case offered("add"):
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_add", Name: "add", Arguments: `{"a":20,"b":22}`})
		}
		return llmtest.Text("I have no tool for that.")
	})

	var out agentsMCPRun
	npmtest.RunJSON(t, agentsDir, "mcp.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key,
		"CONTRAIL_MCP_URL=" + e.node.URL + "/mcp", "MCP_URL=" + srv.URL}, &out)

	t.Logf("the SDK saw: %+v", out)
	if !slices.Contains(out.Client.Tools, "task_double") {
		t.Errorf("the SDK listed %v from Contrail's /mcp, want task_double among them", out.Client.Tools)
	}
	if out.Client.Final != "21 doubled is 42." || !slices.Contains(out.Client.Items, "tool_call_output_item") {
		t.Errorf("the run over Contrail's /mcp: final %q, items %v", out.Client.Final, out.Client.Items)
	}

	if len(out.Interruptions) != 1 || out.Interruptions[0].Type != "tool_approval_item" {
		t.Fatalf("the hosted tool's run stopped with %+v, want one approval", out.Interruptions)
	}
	if out.Interruptions[0].Name != "add" {
		t.Errorf("the approval the SDK was asked for names %q, want add", out.Interruptions[0].Name)
	}
	if !slices.ContainsFunc(out.Hosted.Items, func(it struct{ Type, Raw, Output string }) bool {
		return it.Raw == "hosted_tool_call" && it.Output == "the sum is 42"
	}) {
		t.Errorf("the approved run's items are %+v, want the call with its output", out.Hosted.Items)
	}
	if out.Hosted.Final != "20 and 22 make 42." {
		t.Errorf("the approved run ended with %q (items %+v), want the model's answer from the call's output", out.Hosted.Final, out.Hosted.Items)
	}
	if n := srv.count("tools/call"); n != 1 {
		t.Errorf("the MCP server was called %d times, want once (after the approval)", n)
	}
}
