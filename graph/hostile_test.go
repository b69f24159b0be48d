package graph_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestRequestsGqlgenRefusesAreInTheFacesShape: what gqlgen itself refuses (a missing variable, a body over the
// limit or not JSON, a method /graphql does not have) is a GraphQL error with extensions.code that names what is
// wrong, with the right status, and never repeats the request (issue 10, item 4).
func TestRequestsGqlgenRefusesAreInTheFacesShape(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	errorOf := func(r platformtest.Response) gqlError {
		t.Helper()
		var out gqlResponse
		if err := json.Unmarshal(r.Body, &out); err != nil || len(out.Errors) != 1 {
			t.Fatalf("want one GraphQL error, got %d %.300s", r.Status, r.Body)
		}
		return out.Errors[0]
	}

	r := n.Do(t, key, "POST", "/graphql", map[string]any{"query": `query($handle: String!) { sessionByHandle(handle: $handle) { handle } }`})
	e := errorOf(r)
	if r.Status != 422 || e.code() != "GRAPHQL_VALIDATION_FAILED" || e.Extensions["field"] != "handle" || !strings.Contains(e.Message, "$handle") {
		t.Errorf("a missing variable: %d %+v; want 422 naming $handle", r.Status, e)
	}
	r = n.Do(t, key, "POST", "/graphql", map[string]any{"query": `query($n: Int) { allAgents(first: $n) { handle } }`, "variables": map[string]any{"n": "many"}})
	if e := errorOf(r); r.Status != 422 || e.Extensions["field"] != "n" {
		t.Errorf("a variable of the wrong type: %d %+v; want 422 naming n", r.Status, e)
	}

	huge := strings.Repeat("A", 16<<20)
	r = n.Do(t, key, "POST", "/graphql", `{"query": "{ user { username } }", "pad": "`+huge+`"}`)
	if e := errorOf(r); r.Status != 413 || e.code() != "PAYLOAD_TOO_LARGE" {
		t.Errorf("a body over the limit: %d %+v; want 413 PAYLOAD_TOO_LARGE", r.Status, e)
	}
	r = n.Do(t, key, "POST", "/graphql", "not JSON "+huge[:1<<20])
	if e := errorOf(r); r.Status != 400 || e.code() != "BAD_USER_INPUT" || e.Extensions["field"] != "body" || len(r.Body) > 1000 {
		t.Errorf("a body that is not JSON: %d %.300s; want 400 naming the body, without repeating it", r.Status, r.Body)
	}
	for _, m := range []string{"PUT", "DELETE", "PATCH"} {
		r = n.Do(t, key, m, "/graphql", `{}`)
		if e := errorOf(r); r.Status != 405 || e.code() != "METHOD_NOT_ALLOWED" {
			t.Errorf("%s /graphql: %d %+v; want 405 METHOD_NOT_ALLOWED", m, r.Status, e)
		}
	}
}

// TestArgumentsThatCannotNameAnythingAreRefusedByName: every argument that names a session, agent or message is
// checked before it names a subject or a key; a long or wildcard one is a BAD_USER_INPUT naming the argument, and
// the node's connection to NATS survives (a 4 kB handle used to close it for good: issue 10, item 1).
func TestArgumentsThatCannotNameAnythingAreRefusedByName(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")
	long := "ses_" + strings.Repeat("A", 4000)
	ops := []struct {
		query, field string
		// agentRef: the argument may be an agent's handle, which can be "*"; only what no handle can be is refused.
		agentRef bool
	}{
		{`query($v: String!) { sessionByHandle(handle: $v) { handle } }`, "handle", false},
		{`mutation($v: String!) { deleteSession(handle: $v) { session { handle } } }`, "handle", false},
		{`mutation($v: String!) { sendSessionMessage(messageData: {session: $v, text: "hi"}) { message { id } } }`, "session", false},
		{`mutation($v: String!, $h: String!) { sendSessionMessage(messageData: {session: $h, text: "hi", inReplyTo: $v}) { message { id } } }`, "inReplyTo", false},
		{`query($v: String!) { agentById(agentId: $v) { handle } }`, "agentId", true},
		{`query($v: String!) { agentByHandle(handle: $v) { handle } }`, "handle", true},
	}
	for _, v := range []string{long, "*", ">", "ses_*", "ses_a.b", "ses_ a", "ses_\x00"} {
		for _, op := range ops {
			if op.agentRef && v != long && v != "ses_\x00" {
				continue
			}
			out, _ := c.post(op.query, map[string]any{"v": v, "h": handle})
			if len(out.Errors) == 0 || out.Errors[0].code() != "BAD_USER_INPUT" || out.Errors[0].Extensions["field"] != op.field {
				t.Errorf("%s with %.20q: %+v; want BAD_USER_INPUT naming %s", firstLine(op.query), v, out.Errors, op.field)
				continue
			}
			if strings.Contains(out.Errors[0].Message, strings.Repeat("A", 300)) {
				t.Errorf("%s: the message repeats the argument", firstLine(op.query))
			}
		}
	}
	// A websocket subscription's handle becomes part of a subject: checked before the subscription listens.
	ws := connect(t, n, transportWS, key)
	subs := ws.route("long", "wild")
	ws.subscribe("long", messagesSub, map[string]any{"h": long})
	ws.subscribe("wild", messagesSub, map[string]any{"h": "*"})
	for _, id := range []string{"long", "wild"} {
		select {
		case es := <-subs[id].errs:
			if len(es) == 0 || es[0].code() != "BAD_USER_INPUT" || es[0].Extensions["field"] != "handle" {
				t.Errorf("sessionMessages(%s): %+v; want BAD_USER_INPUT naming handle", id, es)
			}
		case d := <-subs[id].data:
			t.Errorf("sessionMessages(%s) was accepted: %s", id, d)
		case <-time.After(20 * time.Second):
			t.Fatalf("sessionMessages(%s): no answer within 20s", id)
		}
	}
	if !n.NC.IsConnected() {
		t.Fatalf("the node's NATS connection did not survive: %v", n.NC.LastError())
	}
	if r := n.Do(t, "", "GET", "/readyz", nil); r.Status != 200 {
		t.Fatalf("/readyz after the requests: %d %s", r.Status, r.Body)
	}
}

// TestSessionAndAgentInputIsBounded: a blank frontend agent, an agent URL that is empty or has an absurd host, and
// a string over its limit are refused by name (issue 10, items 3 and 4).
func TestSessionAndAgentInputIsBounded(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	createAgent := `mutation($in: AgentInput!) { createAgent(agentData: $in) { agent { agentId } } }`
	for _, tc := range []struct {
		name, query string
		vars        map[string]any
		field       string
	}{
		{"a blank frontend agent", `mutation { createSession(sessionData: {frontendAgentId: " "}) { session { handle } } }`, nil, "frontendAgentId"},
		{"an empty query URL", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": ""}}, "queryUrl"},
		{"an empty func URL", createAgent, map[string]any{"in": map[string]any{"handle": "a", "funcUrl": ""}}, "funcUrl"},
		{"a host of 5000 characters", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "http://" + strings.Repeat("h", 5000) + ".test/"}}, "queryUrl"},
		{"a host of 300 characters", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "http://" + strings.Repeat("h.", 150) + "test/"}}, "queryUrl"},
		{"a file URL", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "file:///etc/passwd"}}, "queryUrl"},
		{"a model name of 100 kB", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "http://127.0.0.1:9/", "model": strings.Repeat("m", 100<<10)}}, "model"},
		{"an audience of 100 kB", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "http://127.0.0.1:9/", "audience": strings.Repeat("a", 100<<10)}}, "audience"},
		{"a description of 5 MB", createAgent, map[string]any{"in": map[string]any{"handle": "a", "queryUrl": "http://127.0.0.1:9/", "description": strings.Repeat("d", 5<<20)}}, "description"},
		{"a route query of 100 kB", `query($q: String!) { route(query: $q) { score } }`, map[string]any{"q": strings.Repeat("q", 100<<10)}, "query"},
	} {
		e := c.fail(tc.query, tc.vars, "BAD_USER_INPUT")
		if e.Extensions["field"] != tc.field {
			t.Errorf("%s: %+v; want the error to name %s", tc.name, e, tc.field)
		}
		if len(e.Message) > 600 {
			t.Errorf("%s: a message of %d bytes", tc.name, len(e.Message))
		}
	}
}
