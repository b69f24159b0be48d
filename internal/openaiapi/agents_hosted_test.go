package openaiapi_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
)

// agentsHostedRun is what testdata/agents/hosted.mjs saw.
type agentsHostedRun struct {
	Search struct {
		Final, Call, Status string
		Items               []string
		ResponseID          string `json:"responseId"`
	}
	Chained struct {
		Final      string
		ResponseID string `json:"responseId"`
	}
	Conversation struct{ Items []string }
	Code         struct {
		Final, Call, Status string
		Items, Events       []string
	}
}

// TestAgentsSDKHostedTools: the OpenAI Agents SDK 0.20.0, with only its base URL changed, runs Contrail's hosted
// tools and keeps its state on the server: fileSearchTool over a vector store (the search a hosted tool call, the
// answer citing it), a follow-up chained with previousResponseId (the model sees the first exchange though the SDK
// sends only the new input), a run in a conversation (its items land there), and codeInterpreterTool in an auto
// container, streamed, where the sandbox can run.
func TestAgentsSDKHostedTools(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	e := newEnv(t)
	_, store := e.manualStore(t)
	csv := e.upload(t, "sales.csv", []byte("region,amount\nnorth,10\nsouth,20\neast,30\n"))
	code := canSandbox()
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		switch {
		case last.Role == llm.RoleTool && strings.Contains(last.Content, "descaling"):
			return llmtest.Text("Descale it every three months" + searchMarker.FindString(last.Content) + ".")
		case last.Role == llm.RoleTool:
			return llmtest.Text("The total is " + strings.TrimSpace(last.Content) + ".")
		case last.Content == "How do I descale?":
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`})
		case last.Content == "And how often?":
			if !slices.ContainsFunc(req.Messages, func(m llm.Message) bool { return m.Content == "How do I descale?" }) {
				return llmtest.Text("I do not know what you asked before.")
			}
			return llmtest.Text("Every three months, as I said.")
		case last.Content == "Total sales?":
			return codeCall("call_sum", "import csv\nrows = list(csv.DictReader(open('/mnt/data/sales.csv')))\nprint(sum(int(r['amount']) for r in rows))")
		}
		return llmtest.Text("It covers the boiler.")
	})
	env := []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key, "STORE_ID=" + store.ID, "CSV_ID=" + csv}
	if code {
		env = append(env, "CODE=1")
	}
	var out agentsHostedRun
	npmtest.RunJSON(t, agentsDir, "hosted.mjs", env, &out)
	t.Logf("the SDK saw: %+v", out)

	if out.Search.Final != "Descale it every three months." || out.Search.Status != "completed" ||
		!slices.Equal(out.Search.Items, []string{"hosted_tool_call", "message"}) {
		t.Errorf("the file_search run: %+v", out.Search)
	}
	if out.Chained.Final != "Every three months, as I said." || out.Chained.ResponseID == out.Search.ResponseID {
		t.Errorf("the chained run: %+v", out.Chained)
	}
	if !slices.Equal(out.Conversation.Items, []string{"message", "message"}) {
		t.Errorf("the conversation holds %v, want the question and the answer", out.Conversation.Items)
	}
	if !code {
		t.Log("no sandbox on this machine: the code_interpreter part was not run (`make deps` installs bubblewrap)")
		return
	}
	if out.Code.Final != "The total is 60." || out.Code.Status != "completed" || !slices.Equal(out.Code.Items, []string{"hosted_tool_call", "message"}) {
		t.Errorf("the code_interpreter run: %+v", out.Code)
	}
	for _, want := range []string{"response.code_interpreter_call.completed", "response.output_text.delta", "response.completed"} {
		if !slices.Contains(out.Code.Events, want) {
			t.Errorf("the streamed run's events %v lack %s", out.Code.Events, want)
		}
	}
}
