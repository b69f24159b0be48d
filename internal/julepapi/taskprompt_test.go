package julepapi_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// A prompt step offers the model its system and api_call tools, not only its functions. With auto_run_tools the
// platform runs the tool the model calls and asks again with the result; the step's output is the final answer.
// Without it (Julep's default) the step's output is the model's answer with its tool calls, as Julep's is.
func TestPromptStepTools(t *testing.T) {
	var apiCalls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		apiCalls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"rate": 1.08}`))
	}))
	t.Cleanup(api.Close)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.APICallHosts = []string{strings.TrimPrefix(api.URL, "http://")} }))
	agent := e.agent(t, map[string]any{"name": "Runner", "about": "runs errands", "model": "gpt-4o-mini"})
	task := func(auto string) string {
		return e.task(t, agent, `
name: ask
tools:
- name: whoami
  type: system
  system: {resource: agent, operation: get}
- name: rate
  type: api_call
  api_call: {method: GET, url: "`+api.URL+`/rate"}
- name: shout
  type: function
  function: {parameters: {type: object, properties: {text: {type: string}}}}
main:
- prompt: Who are you?
`+auto)
	}

	e.model.Enqueue(llmtest.ToolCalls(llmtestCall("c1", "whoami", `{}`)), llmtest.Text("I am Runner."))
	x := e.waitExecution(t, e.execute(t, task("  auto_run_tools: true\n"), map[string]any{}), "succeeded", "failed")
	msg := x["output"].(map[string]any)["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)
	if x["status"] != "succeeded" || msg["content"] != "I am Runner." {
		t.Fatalf("auto_run_tools: %v", x)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(reqs))
	}
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Name)
	}
	if got := strings.Join(slices.Sorted(slices.Values(offered)), ","); got != "rate,shout,whoami" {
		t.Errorf("the model was offered %v, want whoami, rate and shout", offered)
	}
	if last := reqs[1].LastMessage(); last.Role != "tool" || last.ToolCallID != "c1" || !strings.Contains(last.Content, "Runner") {
		t.Errorf("the system tool's result given to the model: %+v", last)
	}

	// Without auto_run_tools the calls are the step's output; nothing runs, and the model is asked once.
	e.model.Enqueue(llmtest.ToolCalls(llmtestCall("c2", "whoami", `{}`)))
	x = e.waitExecution(t, e.execute(t, task(""), map[string]any{}), "succeeded", "failed")
	choice := x["output"].(map[string]any)["choices"].([]any)[0].(map[string]any)
	calls, _ := choice["message"].(map[string]any)["tool_calls"].([]any)
	if x["status"] != "succeeded" || len(calls) != 1 || choice["finish_reason"] != "tool_calls" {
		t.Fatalf("without auto_run_tools: %v", x)
	}
	if n := len(e.model.Requests()); n != 3 {
		t.Errorf("the model was asked %d times in all, want 3", n)
	}

	// With auto_run_tools, an answer that also calls a function tool ends the step with its calls before any tool
	// runs: the api_call beside it does not go out.
	e.model.Enqueue(llmtest.ToolCalls(llmtestCall("c3", "rate", `{}`), llmtestCall("c4", "shout", `{"text":"hi"}`)))
	x = e.waitExecution(t, e.execute(t, task("  auto_run_tools: true\n"), map[string]any{}), "succeeded", "failed")
	choice = x["output"].(map[string]any)["choices"].([]any)[0].(map[string]any)
	calls, _ = choice["message"].(map[string]any)["tool_calls"].([]any)
	if x["status"] != "succeeded" || len(calls) != 2 {
		t.Fatalf("a function tool beside an api_call: %v", x)
	}
	if n := apiCalls.Load(); n != 0 {
		t.Errorf("the api_call went out %d times although the step ended with the calls", n)
	}
}
