package julepapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// With auto_run_tools the platform runs the system and api_call tools the model asks for and calls the model again
// with their results: a doc search of the agent's docs, and an HTTP call to a host the operator allows. The turn's
// tool calls and results are in the history, and replay shows every step.
func TestAutoRunTools(t *testing.T) {
	var apiCalls atomic.Int64
	var lastQuery atomic.Value
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		apiCalls.Add(1)
		lastQuery.Store(r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"rate": 1.08}`))
	}))
	t.Cleanup(api.Close)
	host := strings.TrimPrefix(api.URL, "http://")
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.APICallHosts = []string{host} }))
	agent, _ := e.persona(t)
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "Secret", "content": "The secret word is xylophone."})
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "search_docs", "type": "system",
		"system": map[string]any{"resource": "agent", "subresource": "doc", "operation": "search"}})
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "get_rate", "type": "api_call",
		"api_call": map[string]any{"method": "GET", "url": api.URL + "/rate", "params_schema": map[string]any{"type": "object",
			"properties": map[string]any{"currency": map[string]any{"type": "string"}}}}})
	sid := e.session(t, map[string]any{"agent": agent, "auto_run_tools": true})
	e.model.Enqueue(
		llmtest.ToolCalls(llmtestCall("c1", "search_docs", `{"text":"secret word"}`)),
		llmtest.ToolCalls(llmtestCall("c2", "get_rate", `{"currency":"EUR"}`)),
		llmtest.Text("The word is xylophone and the rate is 1.08."))
	resp := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("What is the secret word, and the EUR rate?"))
	if got := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "The word is xylophone and the rate is 1.08." {
		t.Fatalf("answer: %v", resp)
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("the model was asked %d times", len(reqs))
	}
	if last := reqs[1].LastMessage(); last.Role != "tool" || last.ToolCallID != "c1" || !strings.Contains(last.Content, "xylophone") {
		t.Fatalf("the doc search's result: %+v", last)
	}
	if last := reqs[2].LastMessage(); last.Role != "tool" || !strings.Contains(last.Content, `"rate":1.08`) || !strings.Contains(last.Content, `"status_code":200`) {
		t.Fatalf("the api call's result: %+v", last)
	}
	if q, _ := url.ParseQuery(lastQuery.Load().(string)); q.Get("currency") != "EUR" || apiCalls.Load() != 1 {
		t.Fatalf("the api was called %d times with %v", apiCalls.Load(), lastQuery.Load())
	}
	entries := e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any)
	var sources []string
	for _, en := range entries {
		sources = append(sources, en.(map[string]any)["source"].(string))
	}
	if got := strings.Join(sources, ","); got != "api_request,tool_request,tool_response,tool_request,tool_response,api_response" {
		t.Fatalf("history sources: %s", got)
	}

	lines := timeline(t, e, sid)
	want := []string{"Julep session opened", "chat ", "rendered for gpt-4o-mini", "model call 1 asks for search_docs",
		"system tool search_docs → ", "model call 2 asks for get_rate", "api_call tool get_rate → ", "answer "}
	joined := strings.Join(lines, "\n")
	t.Logf("contrail replay session %s:\n%s", sid, joined)
	at := 0
	for _, w := range want {
		i := strings.Index(joined[at:], w)
		if i < 0 {
			t.Fatalf("the timeline lacks %q after position %d:\n%s", w, at, joined)
		}
		at += i + len(w)
	}
}

// timeline is a session's events as `contrail replay session` prints them (from the endpoint it reads).
func timeline(t testing.TB, e *env, sid string) []string {
	t.Helper()
	r := e.node.Do(t, e.key, "GET", "/api/sessions/"+sid+"/events", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	reg := events.NewRegistry()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		d, err := reg.Decode(ev.Type, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		line, ok := session.Describe(events.Envelope{Type: ev.Type, Event: d})
		if !ok {
			t.Fatalf("replay has no line for %s", ev.Type)
		}
		out = append(out, line)
	}
	return out
}

// A stream with auto_run_tools that would run tools is refused as Julep refuses it; without them it streams.
func TestStreamWithAutoRunTools(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "who", "type": "system",
		"system": map[string]any{"resource": "agent", "operation": "get"}})
	sid := e.session(t, map[string]any{"agent": agent, "auto_run_tools": true})
	body := userMsg("hi")
	body["stream"] = true
	if r := e.do(t, "POST", "/sessions/"+sid+"/chat", body); r.status != 422 || !strings.Contains(string(r.body), "auto_run_tools") {
		t.Fatalf("stream with tools to run: %d %s", r.status, r.body)
	}
	body["auto_run_tools"] = false
	e.model.Enqueue(llmtest.Text("hello"))
	if r := e.do(t, "POST", "/sessions/"+sid+"/chat", body); r.status != http.StatusOK {
		t.Fatalf("stream without running tools: %d %s", r.status, r.body)
	}
}
