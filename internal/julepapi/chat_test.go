package julepapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// persona is an agent and a user to chat with.
func (e *env) persona(t testing.TB) (agent, user string) {
	t.Helper()
	agent = e.agent(t, map[string]any{"name": "Ada", "about": "a mathematician", "model": "gpt-4o-mini",
		"instructions": []string{"be brief", "cite numbers"}})
	user = e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "Grace", "about": "an admiral"})["id"].(string)
	return agent, user
}

func (e *env) session(t testing.TB, body map[string]any) string {
	t.Helper()
	return e.must(t, http.StatusCreated, "POST", "/sessions", body)["id"].(string)
}

func userMsg(text string) map[string]any {
	return map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}}
}

// A chat with Julep's default system template: the prompt carries the agent, the user and the instructions as
// seed 004's template renders them, the answer is Julep's ChatResponse, and the history keeps the turn for the next.
func TestChatWithDefaultTemplate(t *testing.T) {
	e := newEnv(t)
	agent, user := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent, "user": user, "situation": "a quiz"})
	e.model.Enqueue(llmtest.Text("Paris."), llmtest.Text("About 2.1 million."))

	resp := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("Capital of France?"))
	choice := resp["choices"].([]any)[0].(map[string]any)
	if msg := choice["message"].(map[string]any); msg["content"] != "Paris." || msg["role"] != "assistant" || choice["finish_reason"] != "stop" {
		t.Fatalf("chat answer: %v", resp)
	}
	if u := resp["usage"].(map[string]any); u["total_tokens"].(float64) <= 0 {
		t.Errorf("usage: %v", u)
	}
	req := e.model.Requests()[0]
	system := req.Messages[0]
	// Seed 004's template verbatim: {{" "}} and then " and their name" make two spaces, as Jinja renders it.
	want := "You are Ada. About you: Ada. You are talking to a user  and their name is Grace. About the user: an admiral.\n\nInstructions:\n- be brief\n- cite numbers"
	if system.Role != "system" || system.Content != want {
		t.Fatalf("system message:\n%q\nwant\n%q", system.Content, want)
	}
	if req.Model != "gpt-4o-mini" || req.LastMessage().Content != "Capital of France?" {
		t.Fatalf("model request: %s %v", req.Model, req.Messages)
	}

	e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("And its population?"))
	second := e.model.Requests()[1].Messages
	var contents []string
	for _, m := range second {
		contents = append(contents, m.Role+": "+m.Content)
	}
	if got := strings.Join(contents[1:], " | "); got != "user: Capital of France? | assistant: Paris. | user: And its population?" {
		t.Fatalf("second prompt's history: %s", got)
	}
	hist := e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)
	entries := hist["entries"].([]any)
	if len(entries) != 4 || entries[1].(map[string]any)["content"] != "Paris." || entries[0].(map[string]any)["source"] != "api_request" {
		t.Fatalf("history: %v", hist)
	}
}

// A session's own system template sees Julep's variables, renders the input when render_templates is on, and
// render answers the prompt without asking the model or recording anything.
func TestSystemTemplateAndRender(t *testing.T) {
	e := newEnv(t)
	agent, user := e.persona(t)
	tpl := `{{agent.name}} helps {{user.name}} ({{users|length}} user) in {{session.situation}}; ` +
		`{{situation}}; tools: {{tools|length}}; lang={{metadata.lang}}`
	sid := e.session(t, map[string]any{"agent": agent, "user": user, "situation": "a quiz", "system_template": tpl,
		"metadata": map[string]any{"lang": "fr"}})
	body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "Hi, I am {{user.name}}"}}}
	rendered := e.must(t, http.StatusOK, "POST", "/sessions/"+sid+"/render", body)
	msgs := rendered["messages"].([]any)
	if first := msgs[0].(map[string]any); first["content"] != "Ada helps Grace (1 user) in a quiz; a quiz; tools: 0; lang=fr" {
		t.Fatalf("rendered system: %v", first)
	}
	if last := msgs[len(msgs)-1].(map[string]any); last["content"] != "Hi, I am Grace" {
		t.Fatalf("rendered input: %v", last)
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("render asked the model %d times", n)
	}
	if entries := e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any); len(entries) != 0 {
		t.Fatalf("render recorded %v", entries)
	}
	e.must(t, http.StatusOK, "PATCH", "/sessions/"+sid, map[string]any{"render_templates": false})
	raw := e.must(t, http.StatusOK, "POST", "/sessions/"+sid+"/render", body)["messages"].([]any)
	if last := raw[len(raw)-1].(map[string]any); last["content"] != "Hi, I am {{user.name}}" {
		t.Fatalf("render_templates false still renders: %v", last)
	}
	r := e.do(t, "PATCH", "/sessions/"+sid, map[string]any{"system_template": "{{ nope( }}"})
	if status, msg, _ := errorOf(t, r); status != 422 || !strings.Contains(string(r.body), "system_template") || !strings.Contains(msg, "line 1") {
		t.Fatalf("a template that does not compile: %d %s", status, r.body)
	}
	// A template that compiles but fails when rendered fails the chat with a 400 that says where.
	e.must(t, http.StatusOK, "PATCH", "/sessions/"+sid, map[string]any{"system_template": "{{ 1/0 }}"})
	r = e.do(t, "POST", "/sessions/"+sid+"/chat", body)
	if status, msg, _ := errorOf(t, r); status != 400 || !strings.Contains(msg, "system_template") {
		t.Fatalf("a template that fails: %d %s", status, r.body)
	}
}

// A streamed chat is Julep's server-sent chunks, choices[].delta, whose words make the answer; the last chunk says
// why it finished.
func TestChatStream(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent})
	e.model.Enqueue(llmtest.Text("one two three four"))
	body := userMsg("count")
	body["stream"] = true
	r := e.do(t, "POST", "/sessions/"+sid+"/chat", body)
	if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %v %s", r.status, r.header, r.body)
	}
	var text strings.Builder
	var finish any
	chunks := 0
	sc := bufio.NewScanner(bytes.NewReader(r.body))
	for sc.Scan() {
		line, found := strings.CutPrefix(sc.Text(), "data: ")
		if !found {
			continue
		}
		var c map[string]any
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		chunks++
		ch := c["choices"].([]any)[0].(map[string]any)
		text.WriteString(ch["delta"].(map[string]any)["content"].(string))
		finish = ch["finish_reason"]
		if c["id"] == nil || c["docs"] == nil {
			t.Errorf("chunk without id or docs: %s", line)
		}
	}
	if text.String() != "one two three four" || finish != "stop" || chunks < 2 {
		t.Fatalf("streamed %q in %d chunks, finish %v:\n%s", text.String(), chunks, finish, r.body)
	}
	if !e.model.Requests()[0].Stream {
		t.Errorf("the model was not asked to stream")
	}
}

// A function tool the model calls goes back to the client (finish_reason tool_calls); the client's tool message
// in the next chat carries the result to the model.
func TestFunctionToolCall(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/tools", map[string]any{"name": "get_weather", "type": "function",
		"function": map[string]any{"description": "weather in a city", "parameters": map[string]any{"type": "object",
			"properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}}}})
	sid := e.session(t, map[string]any{"agent": agent})
	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}),
		llmtest.Text("It is sunny in Paris."))
	resp := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("Weather in Paris?"))
	choice := resp["choices"].([]any)[0].(map[string]any)
	calls := choice["message"].(map[string]any)["tool_calls"].([]any)
	call := calls[0].(map[string]any)
	if choice["finish_reason"] != "tool_calls" || call["id"] != "call_1" || call["function"].(map[string]any)["name"] != "get_weather" {
		t.Fatalf("tool call answer: %v", resp)
	}
	if tools := e.model.Requests()[0].Tools; len(tools) != 1 || tools[0].Name != "get_weather" {
		t.Fatalf("tools offered: %v", tools)
	}
	resp = e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", map[string]any{"messages": []map[string]any{
		{"role": "tool", "tool_call_id": "call_1", "content": `{"sky":"sunny"}`}}})
	if got := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "It is sunny in Paris." {
		t.Fatalf("answer after the tool: %v", resp)
	}
	prompt := e.model.Requests()[1].Messages
	n := len(prompt)
	if prompt[n-2].Role != "assistant" || len(prompt[n-2].ToolCalls) != 1 || prompt[n-1].Role != "tool" || prompt[n-1].ToolCallID != "call_1" {
		t.Fatalf("second prompt: %+v", prompt)
	}
}
