package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/contrailhq/contrail/graph/generated"
)

// The bad-input sweep's inputs (see sweep_test.go): a valid body for every route that takes one, the query
// parameters routes read, and a valid value for every GraphQL argument. The sweep replaces each value in turn;
// "{param}" takes the owner's value of a route matrix parameter.

// bodyTemplates are valid bodies, by route, with every field the route reads.
func bodyTemplates(m *matrix) map[string]any {
	assistant := `"model": "gpt-4o-mini", "name": "n", "description": "d", "instructions": "i",
		"tools": [{"type": "function", "function": {"name": "f", "description": "d", "parameters": {"type": "object"}}}],
		"tool_resources": {}, "metadata": {"k": "v"}, "temperature": 1, "top_p": 1, "response_format": "auto",
		"reasoning_effort": "low"`
	message := `{"role": "user", "content": "hi", "metadata": {"k": "v"}}`
	parts := `{"role": "user", "content": [{"type": "text", "text": "t"},
		{"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "low"}},
		{"type": "image_file", "image_file": {"file_id": "{file_id}", "detail": "auto"}}]}`
	thread := `{"messages": [` + message + `, ` + parts + `], "metadata": {"k": "v"}, "tool_resources": {}}`
	run := `"assistant_id": "{assistant_id}", "model": "gpt-4o-mini", "instructions": "i", "additional_instructions": "a",
		"additional_messages": [` + message + `], "tools": [{"type": "function", "function": {"name": "f"}}],
		"tool_choice": "auto", "parallel_tool_calls": true, "response_format": "auto", "temperature": 1, "top_p": 1,
		"max_prompt_tokens": 1000, "max_completion_tokens": 1000, "truncation_strategy": {"type": "auto"},
		"metadata": {"k": "v"}, "reasoning_effort": "low"`
	raw := map[string]string{
		"POST /v1/assistants":                                            "{" + assistant + "}",
		"POST /v1/assistants/{assistant_id}":                             "{" + assistant + "}",
		"POST /v1/threads":                                               thread,
		"POST /v1/threads/runs":                                          "{" + run + `, "thread": ` + thread + "}",
		"POST /v1/threads/{thread_id}":                                   `{"metadata": {"k": "v"}, "tool_resources": {}}`,
		"POST /v1/threads/{thread_id}/messages":                          parts,
		"POST /v1/threads/{thread_id}/messages/{message_id}":             `{"metadata": {"k": "v"}}`,
		"POST /v1/threads/{thread_id}/runs":                              "{" + run + "}",
		"POST /v1/threads/{thread_id}/runs/{run_id}":                     `{"metadata": {"k": "v"}}`,
		"POST /v1/threads/{thread_id}/runs/{run_id}/submit_tool_outputs": `{"tool_outputs": [{"tool_call_id": "call_1", "output": "o"}]}`,
		"POST /admin/keys":                                               `{"name": "n"}`,
		"POST /admin/accounts":                                           `{"name": "n", "admin": false, "daily_query_limit": 10}`,
		"POST /admin/accounts/{accountID}/limits":                        `{"daily_query_limit": 1000000, "requests_per_minute": 1000000}`,
		"POST /api/userstorage/{agentId}/{key}":                          `{"data": "\"v\""}`,
		// Julep's (the /julep face).
		"POST /julep/agents": `{"name": "n", "about": "a", "model": "gpt-4o-mini", "instructions": ["i"], "metadata": {"k": "v"},
			"default_settings": {"temperature": 1}, "default_system_template": "{{agent.name}}", "canonical_name": "c"}`,
		"POST /julep/users": `{"name": "n", "about": "a", "metadata": {"k": "v"}}`,
		"POST /julep/sessions": `{"agent": "{agent_id}", "user": "{user_id}", "situation": "s", "system_template": "t",
			"token_budget": 1000, "context_overflow": "truncate", "recall_options": {"mode": "text", "limit": 3}, "metadata": {"k": "v"}}`,
		"POST /julep/sessions/{session_id}/chat": `{"messages": [{"role": "user", "content": "hi", "name": "n"}], "agent": "{agent_id}",
			"model": "gpt-4o-mini", "stop": ["x"], "metadata": {"k": "v"}, "recall": false}`,
		"POST /julep/agents/{agent_id}/tools":  `{"name": "f", "type": "function", "description": "d", "function": {"parameters": {"type": "object"}}}`,
		"POST /julep/agents/{agent_id}/docs":   `{"title": "t", "content": ["c"], "metadata": {"k": "v"}}`,
		"POST /julep/agents/{agent_id}/search": `{"text": "t", "limit": 3, "metadata_filter": {"k": "v"}}`,
		"POST /julep/embed":                    `{"text": ["t"]}`,
	}
	out := map[string]any{}
	for r, body := range raw {
		var v any
		if err := json.Unmarshal([]byte(fill(body, m.values)), &v); err != nil {
			panic(fmt.Sprintf("sweep template of %s: %v", r, err))
		}
		out[r] = v
	}
	return out
}

// queryParamsOf lists the query parameters a route reads.
func queryParamsOf(r route) []string {
	switch {
	case r.Method != http.MethodGet:
		return nil
	case r.Pattern == "/v1/assistants", strings.HasSuffix(r.Pattern, "/runs"), strings.HasSuffix(r.Pattern, "/steps"):
		return []string{"limit", "order", "after", "before"}
	case strings.HasSuffix(r.Pattern, "/messages"):
		return []string{"limit", "order", "after", "before", "run_id"}
	case r.Pattern == "/v1/files":
		return []string{"limit", "order", "after", "purpose"}
	case r.Pattern == "/admin/keys":
		return []string{"account"}
	case r.Pattern == "/api/sessions/{handle}/events":
		return []string{"from", "follow"}
	case r.Pattern == "/api/embeds/{id}/content":
		return []string{"exp", "sig"}
	}
	return nil
}

// mutation is a document with one value replaced.
type mutation struct {
	at, name string
	doc      any
	sent     string
}

// mutations replaces each value of doc in turn: a string by each hostile string; a number by a string, -1 and a
// number beyond any range; a boolean by a string; a list by a thousand of its first item; metadata by a thousand
// pairs.
func mutations(doc any, hs []hostile) []mutation {
	var out []mutation
	var walk func(path []any, v any)
	walk = func(path []any, v any) {
		with := func(name string, x any, sent string) {
			out = append(out, mutation{at: pathString(path), name: name, doc: setAt(doc, path, x), sent: sent})
		}
		switch v := v.(type) {
		case string:
			for _, h := range hs {
				with(h.name, h.v, h.v)
			}
		case float64, int:
			with("as a string", "*", "")
			with("-1", -1, "")
			with("1e300", 1e300, "")
		case bool:
			with("as a string", "*", "")
		case []any:
			if len(v) > 0 {
				many := make([]any, 1000)
				for i := range many {
					many[i] = v[0]
				}
				with("of 1000 items", many, "")
			}
			for i, x := range v {
				walk(append(slices.Clone(path), i), x)
			}
		case map[string]any:
			if len(path) > 0 && path[len(path)-1] == "metadata" {
				many := map[string]any{}
				for i := range 1000 {
					many[fmt.Sprintf("k%d", i)] = "v"
				}
				with("of 1000 pairs", many, "")
			}
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(append(slices.Clone(path), k), v[k])
			}
		}
	}
	walk(nil, doc)
	return out
}

// setAt returns doc with the value at path (keys and indices) replaced by x; doc itself is not changed.
func setAt(doc any, path []any, x any) any {
	if len(path) == 0 {
		return x
	}
	switch p := path[0].(type) {
	case string:
		m := maps.Clone(doc.(map[string]any))
		m[p] = setAt(m[p], path[1:], x)
		return m
	case int:
		l := slices.Clone(doc.([]any))
		l[p] = setAt(l[p], path[1:], x)
		return l
	}
	panic(fmt.Sprintf("setAt: a path step of type %T", path[0]))
}

// pathString writes a path as error messages name fields: messages[0].content.
func pathString(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p)
		case int:
			fmt.Fprintf(&b, "[%d]", p)
		}
	}
	return b.String()
}

// graphqlDefaults are valid values of GraphQL arguments, by "field.argument": the owner's objects where an argument
// names one. An argument without an entry takes a value of its type.
func graphqlDefaults(m *matrix) map[string]any {
	agent := func(handle string) map[string]any {
		return map[string]any{"handle": handle, "newHandle": handle, "name": "n", "description": "d",
			"queryUrl": "http://127.0.0.1:9/", "moreInfoUrl": "https://example.com/", "published": false,
			"queries": []any{"q"}, "kind": "standalone", "model": "gpt-4o-mini", "audience": "https://example.com/"}
	}
	return map[string]any{
		"allAgents.first": 10, "allAgents.after": m.values["agentId"],
		"agentById.agentId":      m.values["agentId"],
		"agentByHandle.handle":   "private",
		"allSessions.first":      10,
		"allSessions.after":      m.values["handle"],
		"sessionByHandle.handle": m.values["handle"],
		"route.query":            "what is the weather", "route.first": 3,
		"createAgent.agentData":     agent("sweep"),
		"updateAgent.agentData":     agent("private"),
		"deleteAgent.handle":        "nobody",
		"refreshAgent.handle":       "private",
		"createSession.sessionData": map[string]any{"frontendAgentId": "fixie", "name": "n", "description": "d"},
		"deleteSession.handle":      "ses_nobody",
		"sendSessionMessage.messageData": map[string]any{"session": m.values["handle"], "text": "hello #k",
			"embeds": []any{map[string]any{"key": "k", "embedId": m.values["id"], "contentType": "text/plain"}}},
		"sendSessionMessage.wait": false, "sendSessionMessage.timeoutSeconds": 1,
		"sessionMessages.handle": m.values["handle"],
		"sessionEvents.handle":   m.values["handle"], "sessionEvents.fromSequence": 0,
	}
}

// graphql sweeps every root field of the schema: each argument's value (and each value inside an input object) in
// turn replaced, queries and mutations over HTTP, subscriptions over a websocket. As another account (other) it
// sends only the short strings and checks that no answer holds the owner's data.
func (s *sweep) graphql(o owner, other bool) {
	schema := generated.NewExecutableSchema(generated.Config{}).Schema()
	defaults := graphqlDefaults(s.m)
	hs := append(hostileStrings, huge)
	if other {
		hs = nil
		for _, h := range hostileStrings {
			if len(h.v) <= 64 {
				hs = append(hs, h)
			}
		}
	}
	for _, op := range []struct {
		kind string
		def  *ast.Definition
	}{{"query", schema.Query}, {"mutation", schema.Mutation}, {"subscription", schema.Subscription}} {
		for _, fd := range op.def.Fields {
			if strings.HasPrefix(fd.Name, "__") || len(fd.Arguments) == 0 {
				continue
			}
			query, vars := operation(schema, op.kind, fd, defaults)
			for _, mu := range mutations(vars, hs) {
				if op.kind == "subscription" && !subscriptionFails(mu, fd) || s.skipHuge("graphql", mu) {
					continue
				}
				what := fmt.Sprintf("%s %s with $%s %s", op.kind, fd.Name, mu.at, mu.name)
				var status int
				var body []byte
				if op.kind == "subscription" {
					var tooBig bool
					status, body, tooBig = s.subscribe(o.Key, query, mu.doc)
					if tooBig {
						// A subscribe message over the websocket's read limit (1 MiB) is answered as websockets
						// answer one: the server closes with 1009, message too big. The socket's 413.
						s.requests++
						s.statuses[http.StatusRequestEntityTooLarge]++
						continue
					}
				} else {
					r := s.n.Do(s.t, o.Key, "POST", "/graphql", map[string]any{"query": query, "variables": mu.doc})
					status, body = r.Status, r.Body
				}
				s.check(what, "/graphql", "POST", status, body, []string{mu.sent})
				if other {
					checkNoLeak(s.t, what, "", mu.doc, body, s.m.secrets)
				}
			}
		}
	}
}

// subscriptionFails reports whether a mutated subscription is sure to be refused at once (any hostile handle; a
// negative sequence): a valid one would stream, and the sweep reads one answer.
func subscriptionFails(mu mutation, _ *ast.FieldDefinition) bool {
	return mu.at == "handle" || mu.name == "-1" || mu.name == "as a string"
}

// operation writes a GraphQL operation that calls one root field with every argument as a variable, and the
// variables' valid values.
func operation(schema *ast.Schema, kind string, fd *ast.FieldDefinition, defaults map[string]any) (string, map[string]any) {
	var params, args []string
	vars := map[string]any{}
	for _, a := range fd.Arguments {
		params = append(params, "$"+a.Name+": "+a.Type.String())
		args = append(args, a.Name+": $"+a.Name)
		if v, ok := defaults[fd.Name+"."+a.Name]; ok {
			vars[a.Name] = v
		} else {
			vars[a.Name] = valueOf(a.Type)
		}
	}
	selection := ""
	if def := schema.Types[a0(fd.Type)]; def != nil && (def.Kind == ast.Object || def.Kind == ast.Interface) {
		selection = " { __typename }"
	}
	return fmt.Sprintf("%s(%s) { %s(%s)%s }", kind, strings.Join(params, ", "), fd.Name, strings.Join(args, ", "), selection), vars
}

// a0 is the named type under any list and non-null wrappers.
func a0(t *ast.Type) string {
	for t.Elem != nil {
		t = t.Elem
	}
	return t.NamedType
}

// valueOf is a value of a scalar type (input objects all have defaults).
func valueOf(t *ast.Type) any {
	if t.Elem != nil {
		return []any{valueOf(t.Elem)}
	}
	switch t.NamedType {
	case "Int":
		return 1
	case "Float":
		return 1.0
	case "Boolean":
		return false
	}
	return "x"
}

// subscribe runs one subscription over a graphql-transport-ws websocket and returns its first answer as a GraphQL
// response body (an error frame's errors under "errors"), or tooBig when the server closed the socket with 1009.
func (s *sweep) subscribe(key, query string, vars any) (status int, body []byte, tooBig bool) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.n.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + key}},
	})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		s.t.Errorf("subscribe: dial: %v", err)
		return status, nil, false
	}
	defer conn.CloseNow()
	conn.SetReadLimit(16 << 20)
	type frame struct {
		ID      string          `json:"id,omitempty"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload,omitempty"`
	}
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	for _, f := range []frame{{Type: "connection_init"}, {ID: "1", Type: "subscribe", Payload: payload}} {
		if err := wsjson.Write(ctx, conn, f); err != nil {
			s.t.Errorf("subscribe: write %s: %v", f.Type, err)
			return 0, nil, false
		}
	}
	for {
		var f frame
		if err := wsjson.Read(ctx, conn, &f); err != nil {
			if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
				return 0, nil, true
			}
			s.t.Errorf("subscribe: no answer to %.200s: %v", payload, err)
			return 0, nil, false
		}
		switch f.Type {
		case "error":
			return 200, append(append([]byte(`{"errors":`), f.Payload...), '}'), false
		case "next":
			return 200, f.Payload, false
		case "complete":
			return 200, []byte(`{}`), false
		}
	}
}
