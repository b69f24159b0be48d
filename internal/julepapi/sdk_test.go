package julepapi_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
)

// sdkDir holds the Node program that drives Julep's npm SDK, its package.json and its lockfile.
const sdkDir = "testdata/sdk"

// nodeModules installs Julep's SDK from the lockfile unless it is there already.
func nodeModules(t *testing.T) {
	t.Helper()
	npmtest.Install(t, sdkDir, filepath.Join("@julep", "sdk", "package.json"), "Julep's npm SDK")
}

// The official npm SDK, @julep/sdk 2.7.2, against the node with only its base URL changed: agents, users, a tool,
// docs searched right after they are made, a session with its own template and recall, chat plain and streamed, a
// function tool call, a chat the SDK times out on and retries, history, lists under metadata_filter, and errors.
func TestJulepNpmSDK(t *testing.T) {
	nodeModules(t)
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		switch last := req.LastMessage(); {
		case last.Role == "tool":
			return llmtest.Text("It is sunny in Paris.")
		case strings.Contains(last.Content, "Eiffel"):
			return llmtest.Text("330 metres.")
		case strings.Contains(last.Content, "Count"):
			return llmtest.Text("one two three four")
		case strings.Contains(last.Content, "Weather"):
			return llmtest.ToolCalls(llmtestCall("call_w", "get_weather", `{"city":"Paris"}`))
		case strings.Contains(last.Content, "slow"):
			return llmtest.Text("worth the wait").WithDelay(1500 * time.Millisecond)
		}
		return llmtest.Text("?")
	})
	var out map[string]any
	npmtest.RunJSON(t, sdkDir, "sdk.mjs", []string{"JULEP_BASE_URL=" + e.node.URL + "/julep", "JULEP_API_KEY=" + e.key}, &out)
	get := func(path string) any {
		var v any = out
		for _, p := range strings.Split(path, ".") {
			switch x := v.(type) {
			case map[string]any:
				v = x[p]
			case []any:
				i := 0
				for _, c := range p {
					i = i*10 + int(c-'0')
				}
				if i >= len(x) {
					return nil
				}
				v = x[i]
			default:
				return nil
			}
		}
		return v
	}
	checks := []struct {
		path string
		want any
	}{
		{"agentGet.name", "Ada"},
		{"agentPatched.about", "counts things"},
		{"agentPatched.metadata.team", "x"},
		{"agentChosen.id", "7a2b3c4d-3333-4e2b-9d3c-0123456789ab"},
		{"agentReset.about", "reset"},
		{"deletedAgentGet.status", 404.0},
		{"deletedAgentGet.name", "NotFoundError"},
		{"userGet.name", "Grace"},
		{"tool.name", "get_weather"},
		{"docSearch.docs.0.title", "Tower"},
		{"docGet.title", "Tower"},
		{"session.situation", "a quiz about Paris"},
		{"render.messages.0.content", "You are Ada, talking to Grace in a quiz about Paris."},
		{"chat.choices.0.message.content", "330 metres."},
		{"streamContentType", "text/event-stream; charset=utf-8"},
		{"toolChat.choices.0.finish_reason", "tool_calls"},
		{"toolChat.choices.0.message.tool_calls.0.function.name", "get_weather"},
		{"toolAnswer.choices.0.message.content", "It is sunny in Paris."},
		{"slowChat.choices.0.message.content", "worth the wait"},
		{"missingSession.status", 404.0},
		{"badAgent.status", 422.0},
		{"badAgent.name", "UnprocessableEntityError"},
		{"task.name", "Add"},
		{"taskList.0", get("task.id")},
		{"waiting.status", "awaiting_input"},
		{"execution.status", "succeeded"},
		{"execution.output.n", 42.0},
		{"transitions.0", "init"},
		{"transitions.4", "finish"},
		{"badInput.status", 400.0},
		{"badInput.name", "BadRequestError"},
	}
	for _, c := range checks {
		if got := get(c.path); got != c.want {
			t.Errorf("%s = %v, want %v", c.path, got, c.want)
		}
	}
	if n := len(get("agentList").([]any)); n != 2 {
		t.Errorf("listed %d agents, want 2", n)
	}
	// metadata_filter as the SDK writes it (dot notation) filters agents, users and docs.
	for path, want := range map[string]string{"filtered.agents": "Ada", "filtered.agentsNone": "", "filtered.users": "Alan", "filtered.docs": "Rome"} {
		var got []string
		for _, n := range get(path).([]any) {
			got = append(got, n.(string))
		}
		if strings.Join(got, ",") != want {
			t.Errorf("%s = %v, want [%s]", path, got, want)
		}
	}
	titles := map[any]bool{}
	for _, d := range get("chat.docs").([]any) {
		titles[d.(map[string]any)["title"]] = true
	}
	if !titles["Tower"] || !titles["Grace"] {
		t.Errorf("the chat recalled %v", get("chat.docs"))
	}
	var streamed strings.Builder
	for _, c := range get("streamChunks").([]any) {
		streamed.WriteString(c.(map[string]any)["choices"].([]any)[0].(map[string]any)["delta"].(map[string]any)["content"].(string))
	}
	if streamed.String() != "one two three four" {
		t.Errorf("streamed %q", streamed.String())
	}
	if n := len(get("embed.vectors.0").([]any)); n == 0 {
		t.Errorf("embed: %v", get("embed"))
	}
	// The slow chat was one turn however many times the SDK sent it.
	slow := 0
	for _, en := range get("history.entries").([]any) {
		if en.(map[string]any)["content"] == "A slow question" {
			slow++
		}
	}
	asked := 0
	for _, r := range e.model.Requests() {
		if r.LastMessage().Content == "A slow question" {
			asked++
		}
	}
	if slow != 1 || asked != 1 {
		t.Errorf("the retried slow chat is in the history %d times, and the model was asked %d times", slow, asked)
	}
	// Five chats were sent; the SDK sent the slow one again at least once.
	sid, _ := get("session.id").(string)
	if posts := strings.Count(e.node.Logs.String(), `"path":"/julep/sessions/`+sid+`/chat"`); posts < 6 {
		t.Errorf("%d chat requests reached the node: the SDK did not retry the slow chat", posts)
	}
}
