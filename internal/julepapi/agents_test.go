package julepapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/jinja"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// An agent's life: create, get, PATCH (only the named fields; metadata merged), PUT (replaces), create-or-update at
// a chosen UUID, list with Julep's parameters, delete; what is gone is a 404.
func TestAgents(t *testing.T) {
	e := newEnv(t)
	a := e.must(t, http.StatusCreated, "POST", "/agents", map[string]any{
		"name": "Ada", "about": "a mathematician", "model": "gpt-4o-mini",
		"instructions": []string{"be brief", "be kind"}, "metadata": map[string]any{"team": "x", "rank": 1},
		"default_settings": map[string]any{"temperature": 0.2},
	})
	id := a["id"].(string)
	if len(id) != 36 || a["created_at"] == nil || a["default_system_template"] != jinja.DefaultSystemTemplate {
		t.Fatalf("created agent: %v", a)
	}
	got := e.must(t, http.StatusOK, "GET", "/agents/"+id, nil)
	if got["name"] != "Ada" || got["about"] != "a mathematician" || len(got["instructions"].([]any)) != 2 {
		t.Fatalf("get: %v", got)
	}

	p := e.must(t, http.StatusOK, "PATCH", "/agents/"+id, map[string]any{"about": "counts", "metadata": map[string]any{"rank": 2}})
	if p["name"] != "Ada" || p["about"] != "counts" || p["model"] != "gpt-4o-mini" {
		t.Fatalf("patch changed more than it named: %v", p)
	}
	if md := p["metadata"].(map[string]any); md["team"] != "x" || md["rank"] != float64(2) {
		t.Fatalf("patch did not merge metadata: %v", md)
	}

	put := e.must(t, http.StatusOK, "PUT", "/agents/"+id, map[string]any{"name": "Ada II", "instructions": "one rule"})
	if put["about"] != "" || put["model"] != "" || put["instructions"] != "one rule" || len(put["metadata"].(map[string]any)) != 0 {
		t.Fatalf("put did not replace: %v", put)
	}

	chosen := "6f1c5d2a-1111-4e2b-9d3c-0123456789ab"
	c := e.must(t, http.StatusOK, "POST", "/agents/"+strings.ToUpper(chosen), map[string]any{"name": "Bob"})
	if c["id"] != chosen {
		t.Fatalf("create-or-update made %v at %s", c["id"], chosen)
	}
	u := e.must(t, http.StatusOK, "POST", "/agents/"+chosen, map[string]any{"name": "Bob 2", "about": "again"})
	if u["name"] != "Bob 2" || u["created_at"] != c["created_at"] {
		t.Fatalf("create-or-update of an existing agent: %v (first %v)", u, c)
	}

	list := items(t, e.must(t, http.StatusOK, "GET", "/agents?sort_by=created_at&direction=desc&limit=10", nil))
	if len(list) != 2 || list[0]["id"] != chosen || list[1]["id"] != id {
		t.Fatalf("list desc: %v", list)
	}
	if page := items(t, e.must(t, http.StatusOK, "GET", "/agents?limit=1&offset=1", nil)); len(page) != 1 || page[0]["id"] != chosen {
		t.Fatalf("offset page: %v", page)
	}
	e.must(t, http.StatusOK, "PATCH", "/agents/"+chosen, map[string]any{"metadata": map[string]any{"env": "prod"}})
	filtered := items(t, e.must(t, http.StatusOK, `GET`, `/agents?metadata_filter=%7B%22env%22%3A%22prod%22%7D`, nil))
	if len(filtered) != 1 || filtered[0]["id"] != chosen {
		t.Fatalf("metadata_filter: %v", filtered)
	}
	if b := items(t, e.must(t, http.StatusOK, "GET", "/agents?metadata_filter[env]=prod", nil)); len(b) != 1 {
		t.Fatalf("metadata_filter[env]: %v", b)
	}

	d := e.must(t, http.StatusAccepted, "DELETE", "/agents/"+id, nil)
	if d["id"] != id || d["deleted_at"] == nil {
		t.Fatalf("delete: %v", d)
	}
	for _, req := range [][2]string{{"GET", "/agents/" + id}, {"PATCH", "/agents/" + id}, {"DELETE", "/agents/" + id},
		{"GET", "/agents/" + "00000000-0000-4000-8000-000000000000"}} {
		r := e.do(t, req[0], req[1], map[string]any{})
		if status, msg, _ := errorOf(t, r); status != http.StatusNotFound || !strings.Contains(msg, "agent") {
			t.Errorf("%s %s: %d %s, want a 404 about the agent", req[0], req[1], status, r.body)
		}
	}
	if list := items(t, e.must(t, http.StatusOK, "GET", "/agents", nil)); len(list) != 1 {
		t.Fatalf("list after delete: %v", list)
	}
}

// Another account sees none of an account's agents. As in Julep, each account has its own IDs: another account's
// create-or-update at the same UUID makes its own agent and leaves the first account's alone.
func TestAgentsOfAnotherAccount(t *testing.T) {
	e := newEnv(t)
	id := e.agent(t, map[string]any{"name": "mine"})
	_, other := e.node.NewAccount(t, "other")
	if r := e.doAs(t, other, "GET", "/agents/"+id, nil); r.status != http.StatusNotFound {
		t.Fatalf("another account reads the agent: %d %s", r.status, r.body)
	}
	for _, m := range []string{"PATCH", "PUT", "DELETE"} {
		if r := e.doAs(t, other, m, "/agents/"+id, map[string]any{"name": "x"}); r.status != http.StatusNotFound {
			t.Fatalf("another account's %s: %d %s", m, r.status, r.body)
		}
	}
	if r := e.doAs(t, other, "POST", "/agents/"+id, map[string]any{"name": "theirs"}); r.status != http.StatusOK || r.obj(t)["id"] != id {
		t.Fatalf("another account's create-or-update at the same UUID: %d %s", r.status, r.body)
	}
	if got := e.must(t, http.StatusOK, "GET", "/agents/"+id, nil); got["name"] != "mine" {
		t.Fatalf("the first account's agent changed: %v", got)
	}
	if list := items(t, e.doAs(t, other, "GET", "/agents", nil).obj(t)); len(list) != 1 || list[0]["name"] != "theirs" {
		t.Fatalf("another account lists: %v", list)
	}
}

// Bad input: a 422 naming the field for a bad body, a 400 for a path ID that is no UUID, Julep's error shape.
func TestAgentBadInput(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		body   any
		status int
		field  string
	}{
		{map[string]any{"about": "no name"}, 422, "name"},
		{map[string]any{"name": 42}, 422, "name"},
		{map[string]any{"name": "x", "instructions": 3}, 422, "instructions"},
		{map[string]any{"name": "x", "instructions": []any{"ok", 3}}, 422, "instructions"},
		{map[string]any{"name": "x", "metadata": []int{1}}, 422, "metadata"},
		{map[string]any{"name": strings.Repeat("n", 256)}, 422, "name"},
		{map[string]any{"name": "x", "default_system_template": "{% if %}"}, 422, "default_system_template"},
		{`{"name": "x"`, 422, "body"},
	}
	for _, c := range cases {
		r := e.do(t, "POST", "/agents", c.body)
		status, msg, obj := errorOf(t, r)
		if status != c.status {
			t.Errorf("%v: status %d, want %d: %s", c.body, status, c.status, r.body)
			continue
		}
		details, _ := obj["details"].([]any)
		if len(details) == 0 || !strings.Contains(strings.ToLower(msg+string(r.body)), c.field) {
			t.Errorf("%v: the error does not name %s: %s", c.body, c.field, r.body)
		}
	}
	r := e.do(t, "GET", "/agents/not-a-uuid", nil)
	if status, msg, _ := errorOf(t, r); status != http.StatusBadRequest || !strings.Contains(msg, "agent_id") {
		t.Errorf("bad path id: %d %s", status, r.body)
	}
	if r := e.do(t, "GET", "/agents/*", nil); r.status != http.StatusBadRequest {
		t.Errorf("wildcard id: %d %s", r.status, r.body)
	}
	if r := e.do(t, "GET", "/agents?limit=0", nil); r.status != 422 {
		t.Errorf("limit 0: %d %s", r.status, r.body)
	}
}

// An agent's tools: function, system and api_call tools made, listed, changed and removed; integrations and
// api_calls to hosts the operator did not allow are a clear 400.
func TestAgentTools(t *testing.T) {
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.APICallHosts = []string{"api.example.com"} }))
	id := e.agent(t, map[string]any{"name": "toolsmith"})
	fn := e.must(t, http.StatusCreated, "POST", "/agents/"+id+"/tools", map[string]any{
		"name": "get_weather", "type": "function", "description": "the weather",
		"function": map[string]any{"parameters": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}},
	})
	e.must(t, http.StatusCreated, "POST", "/agents/"+id+"/tools", map[string]any{
		"name": "search_docs", "type": "system", "system": map[string]any{"resource": "agent", "subresource": "doc", "operation": "search"},
	})
	e.must(t, http.StatusCreated, "POST", "/agents/"+id+"/tools", map[string]any{
		"name": "lookup", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": "https://api.example.com/v1/lookup"},
	})
	if list := items(t, e.must(t, http.StatusOK, "GET", "/agents/"+id+"/tools", nil)); len(list) != 3 {
		t.Fatalf("tools: %v", list)
	}
	toolID := fn["id"].(string)
	p := e.must(t, http.StatusOK, "PATCH", "/agents/"+id+"/tools/"+toolID, map[string]any{"description": "today's weather"})
	if p["description"] != "today's weather" || p["name"] != "get_weather" || p["function"] == nil {
		t.Fatalf("patch tool: %v", p)
	}
	e.must(t, http.StatusAccepted, "DELETE", "/agents/"+id+"/tools/"+toolID, nil)
	if list := items(t, e.must(t, http.StatusOK, "GET", "/agents/"+id+"/tools", nil)); len(list) != 2 {
		t.Fatalf("tools after delete: %v", list)
	}

	refused := []struct {
		tool map[string]any
		want string
	}{
		{map[string]any{"name": "brave", "type": "integration", "integration": map[string]any{"provider": "brave"}}, "integration tools are not supported"},
		{map[string]any{"name": "evil", "type": "api_call", "api_call": map[string]any{"method": "GET", "url": "http://169.254.169.254/latest"}}, "--api-call-hosts"},
		{map[string]any{"name": "odd", "type": "system", "system": map[string]any{"resource": "task", "operation": "create"}}, "not a system operation"},
		{map[string]any{"name": "get_weather2", "type": "function"}, "function"},
		{map[string]any{"name": "bad name!", "type": "function", "function": map[string]any{}}, "name"},
	}
	for _, c := range refused {
		r := e.do(t, "POST", "/agents/"+id+"/tools", c.tool)
		if status, msg, _ := errorOf(t, r); (status != 400 && status != 422) || !strings.Contains(msg, c.want) {
			t.Errorf("%v: %d %s, want a 400 saying %q", c.tool, status, msg, c.want)
		}
	}
	if r := e.do(t, "DELETE", "/agents/"+id+"/tools/"+toolID, nil); r.status != http.StatusNotFound {
		t.Errorf("delete a deleted tool: %d %s", r.status, r.body)
	}
}
