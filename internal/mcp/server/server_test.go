package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"

	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// env is a node with two accounts: a has a Fixie agent of its own, two Julep tasks and a vector store; b has
// nothing of its own.
type env struct {
	node         *platformtest.Node
	keyA, keyB   string
	store        string
	doubleTaskID string
}

// doubleTask doubles n; waitTask asks for input before it ends.
const (
	doubleTask = `{"name": "double", "description": "Doubles a number", "input_schema": {"type": "object",
		"properties": {"n": {"type": "integer"}}, "required": ["n"]}, "main": [{"evaluate": {"x": "$ _.n * 2"}}]}`
	waitTask = `{"name": "ask me", "main": [{"wait_for_input": {"info": {"q": "more"}}}]}`
)

func start(t *testing.T, withStore bool) *env {
	t.Helper()
	n := platformtest.Start(t)
	pa, keyA := n.NewAccount(t, "alice")
	_, keyB := n.NewAccount(t, "bob")
	// A Code Shot agent served over real HTTP (genrand, the sample); on the offline model it answers that it needs
	// a real model, without calling its func.
	kit, err := agentkit.New(genrand.Agent())
	if err != nil {
		t.Fatal(err)
	}
	agentSrv := httptest.NewServer(kit)
	t.Cleanup(agentSrv.Close)
	shots := []string{genrand.FewShots}
	if _, err := n.RegisterAgent(context.Background(), pa, commands.AgentInput{Handle: "greeter", FewShots: &shots,
		BasePrompt: ptr(genrand.BasePrompt), FuncURL: ptr(agentSrv.URL), Description: ptr("draws random numbers")}); err != nil {
		t.Fatal(err)
	}
	e := &env{node: n, keyA: keyA, keyB: keyB}
	r := n.Do(t, keyA, "POST", "/julep/agents", map[string]any{"name": "runner"})
	var agent struct{ ID string }
	r.JSON(t, &agent)
	if r.Status != http.StatusCreated {
		t.Fatalf("create a Julep agent: %d %s", r.Status, r.Body)
	}
	for i, src := range []string{doubleTask, waitTask} {
		r := n.Do(t, keyA, "POST", "/julep/agents/"+agent.ID+"/tasks", src)
		if r.Status != http.StatusCreated {
			t.Fatalf("create a task: %d %s", r.Status, r.Body)
		}
		if i == 0 {
			var task struct{ ID string }
			r.JSON(t, &task)
			e.doubleTaskID = task.ID
		}
	}
	if withStore {
		file := upload(t, n, keyA, "kb.txt", "Contrail keeps every decision on one log. The llama of the docs is named Ferdinand.")
		r := n.Do(t, keyA, "POST", "/v1/vector_stores", map[string]any{"name": "kb", "file_ids": []string{file}})
		var vs struct{ ID string }
		r.JSON(t, &vs)
		if r.Status != http.StatusOK {
			t.Fatalf("create a vector store: %d %s", r.Status, r.Body)
		}
		e.store = vs.ID
		waitProcessed(t, n, keyA, vs.ID)
	}
	waitListed(t, n, keyA)
	return e
}

func ptr[T any](v T) *T { return &v }

// waitListed waits until the account's tasks are in their read model, which /mcp lists them from.
func waitListed(t *testing.T, n *platformtest.Node, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := connect(t, n.URL, key)
		tools := toolNames(t, s)
		s.Close()
		if tools["task_double"] && tools["task_ask_me"] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tasks are not listed after 10 s: %v", tools)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func upload(t *testing.T, n *platformtest.Node, key, name, content string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "assistants")
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	_ = mw.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", n.URL+"/v1/files", &body)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var f struct{ ID string }
	if err := json.NewDecoder(resp.Body).Decode(&f); err != nil || f.ID == "" {
		t.Fatalf("upload: %d %v", resp.StatusCode, err)
	}
	return f.ID
}

func waitProcessed(t *testing.T, n *platformtest.Node, key, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var vs struct {
			Counts struct {
				InProgress int `json:"in_progress"`
				Completed  int `json:"completed"`
			} `json:"file_counts"`
		}
		r := n.Do(t, key, "GET", "/v1/vector_stores/"+id, nil)
		r.JSON(t, &vs)
		if r.Status == 200 && vs.Counts.InProgress == 0 && vs.Counts.Completed == 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("vector store %s still processing after 30s: %d %s", id, r.Status, r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// bearer adds the key to every request of the MCP client.
type bearer struct {
	key  string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return b.next.RoundTrip(r)
}

// connect opens a session of the Go SDK's client with /mcp.
func connect(t testing.TB, base, key string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "contrail-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{key, http.DefaultTransport}, Timeout: 2 * time.Minute}}
	s, err := c.Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect to /mcp: %v", err)
	}
	return s
}

func toolNames(t testing.TB, s *mcp.ClientSession) map[string]bool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	out := map[string]bool{}
	for _, tool := range res.Tools {
		out[tool.Name] = true
	}
	return out
}

func call(t testing.TB, s *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// TestGoClient drives /mcp with the Go SDK's client: the tools of an account, an agent asked, a task run to its
// end and to a wait for input, a store searched, the resources read, bad input as tool errors, and another
// account that sees none of it.
func TestGoClient(t *testing.T) {
	e := start(t, true)
	s := connect(t, e.node.URL, e.keyA)
	defer s.Close()
	tools := toolNames(t, s)
	for _, want := range []string{"ask_fixie", "ask_greeter", "task_double", "task_ask_me", "search_" + e.store} {
		if !tools[want] {
			t.Errorf("tools/list lacks %s: %v", want, tools)
		}
	}
	list, _ := s.ListTools(context.Background(), nil)
	for _, tool := range list.Tools {
		if tool.Name == "task_double" {
			schema, _ := json.Marshal(tool.InputSchema)
			if !strings.Contains(string(schema), `"required":["n"]`) {
				t.Errorf("task_double's input schema is %s, want the task's input_schema", schema)
			}
		}
	}

	// An agent: the built-in one answers on the offline model.
	r := call(t, s, "ask_fixie", map[string]any{"query": "What is Contrail?"})
	if r.IsError || text(r) == "" {
		t.Fatalf("ask_fixie: error %v, %q", r.IsError, text(r))
	}
	var answer struct{ Session, Status string }
	raw, _ := json.Marshal(r.StructuredContent)
	_ = json.Unmarshal(raw, &answer)
	if answer.Status != "answered" || !strings.HasPrefix(answer.Session, "ses_") {
		t.Errorf("ask_fixie's structured answer is %s", raw)
	}
	// The same session goes on, and its transcript is a resource.
	r = call(t, s, "ask_fixie", map[string]any{"query": "And again?", "session": answer.Session})
	if r.IsError {
		t.Fatalf("ask_fixie in a session: %s", text(r))
	}
	res, err := s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "contrail://sessions/" + answer.Session})
	if err != nil {
		t.Fatalf("read the transcript: %v", err)
	}
	if got := res.Contents[0].Text; !strings.Contains(got, "What is Contrail?") || !strings.Contains(got, "And again?") {
		t.Errorf("transcript: %s", got)
	}

	// A task runs to its end; its output comes back.
	r = call(t, s, "task_double", map[string]any{"n": 21})
	if r.IsError || !strings.Contains(text(r), "42") {
		t.Fatalf("task_double: error %v, %q", r.IsError, text(r))
	}
	var run struct {
		ExecutionID string `json:"execution_id"`
		Status      string
	}
	raw, _ = json.Marshal(r.StructuredContent)
	_ = json.Unmarshal(raw, &run)
	if run.Status != "succeeded" || run.ExecutionID == "" {
		t.Errorf("task_double's structured answer: %s", raw)
	}
	res, err = s.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "contrail://executions/" + run.ExecutionID + "/transitions"})
	if err != nil || !strings.Contains(res.Contents[0].Text, `"finish"`) {
		t.Errorf("read the transitions: %v %v", err, res)
	}
	// One that waits for input answers its ID and status.
	r = call(t, s, "task_ask_me", map[string]any{})
	if r.IsError || !strings.Contains(text(r), "awaiting_input") {
		t.Errorf("task_ask_me: error %v, %q", r.IsError, text(r))
	}

	// A store's search finds the chunk with its file and score.
	r = call(t, s, "search_"+e.store, map[string]any{"query": "what is the llama named"})
	if r.IsError || !strings.Contains(text(r), "Ferdinand") || !strings.Contains(text(r), "file-") {
		t.Errorf("search: error %v, %q", r.IsError, text(r))
	}

	// Bad input is a tool error naming the field, never a protocol error.
	for _, c := range []struct {
		tool  string
		args  any
		field string
	}{
		{"ask_fixie", map[string]any{}, "query"},
		{"ask_fixie", map[string]any{"query": "  "}, "query"},
		{"ask_fixie", map[string]any{"query": "hi", "session": "ses_nope"}, "session"},
		{"task_double", map[string]any{"n": "twenty"}, "n"},
		{"task_double", map[string]any{}, "n"},
		{"search_" + e.store, map[string]any{"query": ""}, "query"},
		{"search_" + e.store, map[string]any{"query": "x", "max_num_results": 99}, "max_num_results"},
	} {
		r := call(t, s, c.tool, c.args)
		if !r.IsError || !strings.Contains(text(r), c.field) {
			t.Errorf("%s %v: error %v, %q; want a tool error naming %s", c.tool, c.args, r.IsError, text(r), c.field)
		}
		t.Logf("%s %v: %s", c.tool, c.args, text(r))
	}

	// Another account sees none of it, and cannot call it or read it.
	sb := connect(t, e.node.URL, e.keyB)
	defer sb.Close()
	toolsB := toolNames(t, sb)
	if !toolsB["ask_fixie"] {
		t.Errorf("b's tools lack the built-in agent: %v", toolsB)
	}
	for name := range tools {
		if name != "ask_fixie" && name != "ask_router" && toolsB[name] {
			t.Errorf("b's tools list a's %s", name)
		}
	}
	for _, name := range []string{"ask_greeter", "task_double", "search_" + e.store} {
		if r, err := sb.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"query": "x", "n": 1}}); err == nil && !r.IsError {
			t.Errorf("b called a's %s: %q", name, text(r))
		}
	}
	if _, err := sb.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "contrail://sessions/" + answer.Session}); err == nil {
		t.Errorf("b read a's session")
	}
	if _, err := sb.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "contrail://executions/" + run.ExecutionID + "/transitions"}); err == nil {
		t.Errorf("b read a's execution")
	}
	r = call(t, sb, "ask_fixie", map[string]any{"query": "hi", "session": answer.Session})
	if !r.IsError || !strings.Contains(text(r), "session") {
		t.Errorf("b posted to a's session: %q", text(r))
	}
}

// TestKeys: no key, a wrong key, and an agent's missing bearer are 401s in JSON-RPC's error shape.
func TestKeys(t *testing.T) {
	n := platformtest.Start(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, key := range []string{"", "ctr_wrong"} {
		r := n.Do(t, key, "POST", "/mcp", init)
		if r.Status != http.StatusUnauthorized || !strings.Contains(string(r.Body), `"jsonrpc":"2.0"`) {
			t.Errorf("key %q: %d %s, want 401 with a JSON-RPC error", key, r.Status, r.Body)
		}
	}
	_, key := n.NewAccount(t, "carol")
	c := mcp.NewClient(&mcp.Implementation{Name: "x", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: n.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer{"ctr_" + strings.Repeat("x", 43), http.DefaultTransport}}}
	if s, err := c.Connect(context.Background(), tr, nil); err == nil {
		s.Close()
		t.Errorf("connected with a wrong key")
	}
	s := connect(t, n.URL, key)
	s.Close()
}
