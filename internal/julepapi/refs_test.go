package julepapi_test

import (
	"net/http"
	"strings"
	"testing"
)

// Every place a Julep body names an agent, a user or a task refuses another account's as it refuses an ID that
// names nothing: a 404, or a 400/422 naming the field. Account A owns the objects; account B names them.
func TestJulepReferencesStayInTheAccount(t *testing.T) {
	e := newEnv(t)
	_, bKey := e.node.NewAccount(t, "other")
	aAgent, aUser := e.persona(t)
	b := &env{node: e.node, model: e.model, key: bKey}
	bAgent, bUser := b.persona(t)
	bSession := b.session(t, map[string]any{"agent": bAgent, "user": bUser})

	system := func(resource, op, id string) map[string]any {
		return map[string]any{"name": "lookup", "type": "system", "system": map[string]any{"resource": resource, "operation": op, "resource_id": id}}
	}
	task := func(tools ...any) map[string]any {
		return map[string]any{"name": "T", "tools": tools, "main": []any{map[string]any{"evaluate": map[string]any{"x": "$ 1"}}}}
	}
	say := []any{map[string]any{"role": "user", "content": "hi"}}
	cases := []struct {
		name, method, path string
		body               any
		id, field          string
	}{
		{"session agent", "POST", "/sessions", map[string]any{"agent": aAgent}, aAgent, "agent"},
		{"session agents", "POST", "/sessions", map[string]any{"agents": []string{bAgent, aAgent}}, aAgent, "agents[1]"},
		{"session agent and agents", "POST", "/sessions", map[string]any{"agent": bAgent, "agents": []string{aAgent}}, aAgent, "agents[0]"},
		{"session user", "POST", "/sessions", map[string]any{"agent": bAgent, "user": aUser}, aUser, "user"},
		{"session users", "POST", "/sessions", map[string]any{"agent": bAgent, "users": []string{aUser}}, aUser, "users[0]"},
		{"chat agent", "POST", "/sessions/" + bSession + "/chat", map[string]any{"agent": aAgent, "messages": say}, aAgent, "agent"},
		{"chat tool", "POST", "/sessions/" + bSession + "/chat", map[string]any{"messages": say,
			"tools": []any{system("agent", "get", aAgent)}}, aAgent, "tools[0].system.resource_id"},
		{"agent tool", "POST", "/agents/" + bAgent + "/tools", system("user", "get", aUser), aUser, "tool.system.resource_id"},
		{"task tool", "POST", "/agents/" + bAgent + "/tasks", task(system("agent", "get", aAgent)), aAgent, "tools[0].system.resource_id"},
		{"task doc search", "POST", "/agents/" + bAgent + "/tasks", task(map[string]any{"name": "find", "type": "system",
			"system": map[string]any{"resource": "user", "subresource": "doc", "operation": "search", "resource_id": aUser}}), aUser, "tools[0].system.resource_id"},
		{"task agent", "POST", "/agents/" + aAgent + "/tasks", task(), aAgent, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := b.do(t, c.method, c.path, c.body)
			status, msg, body := errorOf(t, r)
			if status != http.StatusNotFound && status != http.StatusBadRequest && status != http.StatusUnprocessableEntity {
				t.Fatalf("%s %s naming A's %s: %d %s, want a 404 or a 400 naming the field", c.method, c.path, c.id, status, r.body)
			}
			// A 422 names the field in the error's field; a 404 in its message.
			if c.field != "" && body["field"] != c.field && !(status == http.StatusNotFound && strings.Contains(msg, c.field)) {
				t.Errorf("field %v, want %s: %s", body["field"], c.field, r.body)
			}
			if !strings.Contains(msg, c.id) {
				t.Errorf("the message does not name %s: %s", c.id, r.body)
			}
		})
	}
}

// A task's tools are checked when the task is made, as an agent's are: a tool this server cannot run is refused
// then, naming it, not accepted to fail when the task runs.
func TestTaskToolsCheckedAtCreate(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	task := func(tools []any, main ...any) map[string]any {
		if len(main) == 0 {
			main = []any{map[string]any{"evaluate": map[string]any{"x": "$ 1"}}}
		}
		return map[string]any{"name": "T", "tools": tools, "main": main}
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"integration", task([]any{map[string]any{"name": "search", "type": "integration", "integration": map[string]any{"provider": "brave"}}}), "tools[0]"},
		{"unknown system operation", task([]any{map[string]any{"name": "wipe", "type": "system", "system": map[string]any{"resource": "agent", "operation": "explode"}}}), "tools[0].system"},
		{"function without a schema object", task([]any{map[string]any{"name": "f", "type": "function", "function": map[string]any{"parameters": "nope"}}}), "tools[0].function.parameters"},
		{"prompt step's inline tool", task(nil, map[string]any{"prompt": "hi", "tools": []any{map[string]any{"name": "search", "type": "integration",
			"integration": map[string]any{"provider": "brave"}}}}), "main[0].tools[0]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do(t, "POST", "/agents/"+agent+"/tasks", c.body)
			status, msg, body := errorOf(t, r)
			if status/100 != 4 || (body["field"] != c.field && !strings.Contains(msg, c.field)) {
				t.Fatalf("%d %s, want a 4xx naming %s", status, r.body, c.field)
			}
		})
	}
	// What an agent may have, a task may have.
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/tasks", task([]any{
		map[string]any{"name": "find", "type": "system", "system": map[string]any{"resource": "agent", "subresource": "doc", "operation": "search"}},
		map[string]any{"name": "f", "type": "function", "function": map[string]any{"parameters": map[string]any{"type": "object"}}},
	}))
}
