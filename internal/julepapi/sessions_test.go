package julepapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// Users: the same operations as agents.
func TestUsers(t *testing.T) {
	e := newEnv(t)
	u := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "Grace", "about": "admiral", "metadata": map[string]any{"a": 1}})
	id := u["id"].(string)
	p := e.must(t, http.StatusOK, "PATCH", "/users/"+id, map[string]any{"metadata": map[string]any{"b": 2}})
	if p["about"] != "admiral" || len(p["metadata"].(map[string]any)) != 2 {
		t.Fatalf("patch user: %v", p)
	}
	if put := e.must(t, http.StatusOK, "PUT", "/users/"+id, map[string]any{"name": "G"}); put["about"] != "" || put["name"] != "G" {
		t.Fatalf("put user: %v", put)
	}
	chosen := "5b9c3c4e-2222-4e2b-9d3c-0123456789ab"
	e.must(t, http.StatusOK, "POST", "/users/"+chosen, map[string]any{"name": "Linus"})
	if list := items(t, e.must(t, http.StatusOK, "GET", "/users?direction=desc", nil)); len(list) != 2 || list[0]["id"] != chosen {
		t.Fatalf("list users: %v", list)
	}
	e.must(t, http.StatusAccepted, "DELETE", "/users/"+id, nil)
	if r := e.do(t, "GET", "/users/"+id, nil); r.status != http.StatusNotFound {
		t.Fatalf("get a deleted user: %d", r.status)
	}
	if r := e.do(t, "POST", "/users", map[string]any{"name": []int{1}}); r.status != 422 {
		t.Fatalf("bad user: %d %s", r.status, r.body)
	}
}

// Sessions: several agents and users, Julep's settings with their defaults, PATCH and PUT, list and delete; a
// session's members must be the caller's.
func TestSessions(t *testing.T) {
	e := newEnv(t)
	a1, u1 := e.persona(t)
	a2 := e.agent(t, map[string]any{"name": "Bob"})
	u2 := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "Linus"})["id"].(string)
	s := e.must(t, http.StatusCreated, "POST", "/sessions", map[string]any{"agents": []string{a1, a2}, "users": []string{u1, u2},
		"situation": "planning", "token_budget": 2000, "context_overflow": "truncate", "recall_options": map[string]any{"mode": "hybrid", "alpha": 0.7},
		"metadata": map[string]any{"k": "v"}})
	id := s["id"].(string)
	ro := s["recall_options"].(map[string]any)
	if s["kind"] != "multi_agent_multi_user" || s["render_templates"] != true || s["situation"] != "planning" ||
		ro["mode"] != "hybrid" || ro["alpha"] != 0.7 || ro["limit"] != float64(10) || ro["num_search_messages"] != float64(4) {
		t.Fatalf("created session: %v", s)
	}
	p := e.must(t, http.StatusOK, "PATCH", "/sessions/"+id, map[string]any{"recall_options": map[string]any{"limit": 3}, "metadata": map[string]any{"x": 1}})
	if ro := p["recall_options"].(map[string]any); ro["limit"] != float64(3) || ro["alpha"] != 0.7 || len(p["metadata"].(map[string]any)) != 2 || p["situation"] != "planning" {
		t.Fatalf("patched session: %v", p)
	}
	put := e.must(t, http.StatusOK, "PUT", "/sessions/"+id, map[string]any{"situation": "new"})
	if put["recall_options"] != nil || put["token_budget"] != nil || len(put["agents"].([]any)) != 2 {
		t.Fatalf("put session: %v", put)
	}
	got := e.must(t, http.StatusOK, "GET", "/sessions/"+id, nil)
	if got["situation"] != "new" {
		t.Fatalf("get session: %v", got)
	}
	e.session(t, map[string]any{"agent": a2})
	if list := items(t, e.must(t, http.StatusOK, "GET", "/sessions", nil)); len(list) != 2 {
		t.Fatalf("sessions: %v", list)
	}
	e.must(t, http.StatusAccepted, "DELETE", "/sessions/"+id, nil)
	for _, path := range []string{"/sessions/" + id, "/sessions/" + id + "/history"} {
		if r := e.do(t, "GET", path, nil); r.status != http.StatusNotFound {
			t.Fatalf("GET %s of a deleted session: %d", path, r.status)
		}
	}
	if r := e.do(t, "POST", "/sessions/"+id+"/chat", userMsg("hi")); r.status != http.StatusNotFound {
		t.Fatalf("chat with a deleted session: %d %s", r.status, r.body)
	}

	_, otherKey := e.node.NewAccount(t, "other")
	bad := []struct {
		key  string
		body map[string]any
		want string
	}{
		{e.key, map[string]any{}, "agent"},
		{e.key, map[string]any{"agent": "00000000-0000-4000-8000-000000000000"}, `["body","agent"]`},
		{e.key, map[string]any{"agent": "nope"}, `["body","agent"]`},
		{otherKey, map[string]any{"agent": a1}, `["body","agent"]`},
		{e.key, map[string]any{"agent": a1, "context_overflow": "drop"}, "context_overflow"},
		{e.key, map[string]any{"agent": a1, "context_overflow": "truncate"}, "token_budget"},
		{e.key, map[string]any{"agent": a1, "recall_options": map[string]any{"mode": "fuzzy"}}, "recall_options.mode"},
		{e.key, map[string]any{"agent": a1, "recall_options": map[string]any{"limit": 500}}, "recall_options.limit"},
		{e.key, map[string]any{"agent": a1, "token_budget": "lots"}, "token_budget"},
	}
	for _, c := range bad {
		r := e.doAs(t, c.key, "POST", "/sessions", c.body)
		if r.status != 422 || !strings.Contains(string(r.body), c.want) {
			t.Errorf("%v: %d %s, want a 422 naming %s", c.body, r.status, r.body, c.want)
		}
	}
	if r := e.do(t, "GET", "/sessions/ses_01ABC", nil); r.status != http.StatusBadRequest {
		t.Errorf("a Fixie session ID on /julep: %d", r.status)
	}
}

// A multi-agent session answers with its first agent unless the chat names another; metadata is merged with the
// session's over the user's over the agent's, and x-tool-parameters fix a tool's arguments by the same order: the
// model is never asked for them, and the call carries them.
func TestAgentChoiceMetadataAndToolParameters(t *testing.T) {
	e := newEnv(t)
	a1 := e.agent(t, map[string]any{"name": "First", "metadata": map[string]any{"tone": "agent", "x-tool-parameters": map[string]any{"favorite": "Emma Watson"}}})
	a2 := e.agent(t, map[string]any{"name": "Second"})
	e.must(t, http.StatusCreated, "POST", "/agents/"+a1+"/tools", map[string]any{"name": "send_fan_mail", "type": "function",
		"function": map[string]any{"parameters": map[string]any{"type": "object", "properties": map[string]any{
			"favorite": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}, "required": []string{"favorite", "text"}}}})
	e.must(t, http.StatusCreated, "POST", "/agents/"+a1+"/tools", map[string]any{"name": "check_account_status", "type": "function",
		"function": map[string]any{"parameters": map[string]any{"type": "object", "properties": map[string]any{
			"customer_id": map[string]any{"type": "string"}}, "required": []string{"customer_id"}}}})
	user := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "U", "metadata": map[string]any{"tone": "user",
		"x-tool-parameters": map[string]any{"favorite": "Emma Roberts", "function:check_account_status": map[string]any{"customer_id": 42}}}})["id"].(string)
	sid := e.session(t, map[string]any{"agents": []string{a1, a2}, "user": user, "system_template": "{{agent.name}} tone={{metadata.tone}}",
		"metadata": map[string]any{"tone": "session", "x-tool-parameters": map[string]any{"favorite": "Emma Stone"}}})

	e.model.Enqueue(llmtest.Text("from second"))
	body := userMsg("hi")
	body["agent"] = a2
	e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body)
	if sys := e.model.Requests()[0].Messages[0].Content; sys != "Second tone=session" {
		t.Fatalf("chosen agent's prompt: %q", sys)
	}

	e.model.Enqueue(llmtest.ToolCalls(
		llmtestCall("c1", "send_fan_mail", `{"text":"hello","favorite":"someone else"}`),
		llmtestCall("c2", "check_account_status", `{}`)))
	resp := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("write"))
	req := e.model.Requests()[1]
	if sys := req.Messages[0].Content; sys != "First tone=session" {
		t.Fatalf("first agent's prompt: %q", sys)
	}
	for _, tool := range req.Tools {
		if strings.Contains(string(tool.Parameters), "favorite") || strings.Contains(string(tool.Parameters), "customer_id") {
			t.Errorf("the model is asked for a fixed parameter: %s %s", tool.Name, tool.Parameters)
		}
	}
	calls := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["tool_calls"].([]any)
	args := map[string]string{}
	for _, c := range calls {
		fn := c.(map[string]any)["function"].(map[string]any)
		args[fn["name"].(string)] = fn["arguments"].(string)
	}
	if !strings.Contains(args["send_fan_mail"], `"favorite":"Emma Stone"`) || !strings.Contains(args["send_fan_mail"], `"text":"hello"`) ||
		!strings.Contains(args["check_account_status"], `"customer_id":42`) {
		t.Fatalf("calls with the fixed arguments: %v", args)
	}
	if r := e.do(t, "POST", "/sessions/"+sid+"/chat", map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}},
		"agent": "00000000-0000-4000-8000-000000000000"}); r.status != 422 {
		t.Fatalf("an agent not of the session: %d %s", r.status, r.body)
	}
}

// Bad chats are a 4xx naming the field.
func TestChatBadInput(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent})
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{}, "messages"},
		{map[string]any{"messages": []any{map[string]any{"role": "robot", "content": "x"}}}, "messages[0].role"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": 7}}}, "messages[0].content"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}}, "temperature": 9}, "temperature"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": "x"}}, "tools": []any{map[string]any{"name": "t", "type": "integration"}}}, "integration"},
		{map[string]any{"messages": []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_url"}}}}}, "image_url"},
	}
	for _, c := range cases {
		r := e.do(t, "POST", "/sessions/"+sid+"/chat", c.body)
		if r.status != 400 && r.status != 422 || !strings.Contains(string(r.body), c.field) {
			t.Errorf("%v: %d %s, want a 4xx naming %s", c.body, r.status, r.body, c.field)
		}
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("bad chats asked the model %d times", n)
	}
}
