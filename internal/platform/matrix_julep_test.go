package platform_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// julepFixture is the owner's Julep objects: an agent with a tool and a doc, a user with a doc, and a session with
// one chat answered (by the offline model). Another account must not read, change, delete or chat with any of them;
// its create-or-update at their UUIDs makes objects of its own (Julep's IDs are per account), and the owner's stay
// as they were, in the log too.
func julepFixture() fixture {
	var made struct {
		agent, user, session, doc, tool string
		task, execution, transition     string
		logs                            map[events.Ref]int
	}
	secret := "secret-" + events.RandomToken(6)
	return fixture{
		Name:   "julep: agent, tool, user, docs, session",
		Params: []string{"agent_id", "user_id", "session_id", "doc_id", "tool_id", "task_id", "execution_id", "transition_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			post := func(path string, body any) map[string]any {
				var out map[string]any
				r := n.Do(t, o.Key, "POST", "/julep"+path, body)
				if r.Status != http.StatusCreated {
					t.Fatalf("POST /julep%s: %d %s", path, r.Status, r.Body)
				}
				r.JSON(t, &out)
				return out
			}
			made.agent = post("/agents", map[string]any{"name": "agent " + secret, "instructions": "instructions " + secret})["id"].(string)
			made.tool = post("/agents/"+made.agent+"/tools", map[string]any{"name": "lookup", "type": "function",
				"function": map[string]any{"description": "tool " + secret}})["id"].(string)
			made.doc = post("/agents/"+made.agent+"/docs", map[string]any{"title": "doc " + secret, "content": "content " + secret})["id"].(string)
			made.user = post("/users", map[string]any{"name": "user", "about": "about " + secret})["id"].(string)
			post("/users/"+made.user+"/docs", map[string]any{"title": "user doc", "content": "user content " + secret})
			made.session = post("/sessions", map[string]any{"agent": made.agent, "user": made.user, "situation": "situation " + secret})["id"].(string)
			post("/sessions/"+made.session+"/chat", map[string]any{"messages": []map[string]string{{"role": "user", "content": "question " + secret}}})
			made.task = post("/agents/"+made.agent+"/tasks", map[string]any{"name": "task " + secret,
				"main": []any{map[string]any{"wait_for_input": map[string]any{"info": "waiting"}}}})["id"].(string)
			made.execution = post("/tasks/"+made.task+"/executions", map[string]any{"input": map[string]any{"secret": "input " + secret}})["id"].(string)
			for i := 0; made.transition == ""; i++ {
				var list struct{ Items []map[string]any }
				n.Do(t, o.Key, "GET", "/julep/executions/"+made.execution+"/transitions", nil).JSON(t, &list)
				for _, tr := range list.Items {
					if tr["type"] == "wait" {
						made.transition = tr["id"].(string)
					}
				}
				if i > 500 {
					t.Fatal("the fixture's execution never waits for input")
				}
				time.Sleep(10 * time.Millisecond)
			}
			made.logs = map[events.Ref]int{}
			for _, ref := range []events.Ref{
				{Type: julep.AgentAggregate, ID: events.JulepAggregateID(o.AccountID, made.agent)},
				{Type: julep.UserAggregate, ID: events.JulepAggregateID(o.AccountID, made.user)},
				{Type: julep.DocAggregate, ID: events.JulepAggregateID(o.AccountID, made.doc)},
				{Type: session.Aggregate, ID: events.JulepAggregateID(o.AccountID, made.session)},
				{Type: julep.TaskAggregate, ID: events.JulepAggregateID(o.AccountID, made.task)},
				{Type: execution.Aggregate, ID: events.JulepAggregateID(o.AccountID, made.execution)},
			} {
				made.logs[ref] = logLength(t, n, ref)
			}
			return objects{Params: map[string]string{"agent_id": made.agent, "user_id": made.user, "session_id": made.session,
				"doc_id": made.doc, "tool_id": made.tool, "task_id": made.task, "execution_id": made.execution,
				"transition_id": made.transition}, Secrets: []string{secret}}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			for path, want := range map[string]string{
				"/julep/agents/" + made.agent:                  "agent " + secret,
				"/julep/agents/" + made.agent + "/tools":       "tool " + secret,
				"/julep/docs/" + made.doc:                      "content " + secret,
				"/julep/users/" + made.user:                    "about " + secret,
				"/julep/sessions/" + made.session:              "situation " + secret,
				"/julep/sessions/" + made.session + "/history": "question " + secret,
				"/julep/tasks/" + made.task:                    "task " + secret,
				"/julep/executions/" + made.execution:          "awaiting_input",
			} {
				r := n.Do(t, o.Key, "GET", path, nil)
				if r.Status != http.StatusOK || !contains(r.Body, want) {
					t.Errorf("account A's %s after account B's requests: %d %.300s", path, r.Status, r.Body)
				}
			}
			r := n.Do(t, o.Key, "POST", "/julep/agents/"+made.agent+"/search", map[string]string{"text": "content " + secret})
			if r.Status != http.StatusOK || !contains(r.Body, made.doc) {
				t.Errorf("account A's doc search after account B's requests: %d %.300s", r.Status, r.Body)
			}
			for ref, want := range made.logs {
				checkLog(t, n, o, ref, want)
			}
		},
		// Another account's create-or-update names a UUID in its own scope: it makes its own object.
		OwnScope: []string{"POST /julep/agents/{agent_id}", "POST /julep/users/{user_id}", "POST /julep/sessions/{session_id}"},
		Caller: func(t *testing.T, n *platformtest.Node, o owner) map[string]string {
			var a map[string]any
			r := n.Do(t, o.Key, "POST", "/julep/agents", map[string]string{"name": "caller's"})
			r.JSON(t, &a)
			return map[string]string{"agent_id": a["id"].(string)}
		},
		Bodies: map[string]any{
			"POST /julep/agents/{agent_id}":                  map[string]string{"name": "planted"},
			"PUT /julep/agents/{agent_id}":                   map[string]string{"name": "planted"},
			"PATCH /julep/agents/{agent_id}":                 map[string]string{"name": "planted"},
			"POST /julep/users/{user_id}":                    map[string]string{"name": "planted"},
			"PUT /julep/users/{user_id}":                     map[string]string{"name": "planted"},
			"PATCH /julep/users/{user_id}":                   map[string]string{"name": "planted"},
			"POST /julep/sessions/{session_id}":              `{"agent":"{caller.agent_id}","situation":"planted"}`,
			"PUT /julep/sessions/{session_id}":               map[string]string{"situation": "planted"},
			"PATCH /julep/sessions/{session_id}":             map[string]string{"situation": "planted"},
			"POST /julep/sessions/{session_id}/chat":         map[string]any{"messages": []map[string]string{{"role": "user", "content": "planted"}}},
			"POST /julep/sessions/{session_id}/render":       map[string]any{"messages": []map[string]string{{"role": "user", "content": "planted"}}},
			"POST /julep/agents/{agent_id}/tools":            map[string]any{"name": "planted", "type": "function", "function": map[string]any{}},
			"PUT /julep/agents/{agent_id}/tools/{tool_id}":   map[string]any{"name": "planted", "type": "function", "function": map[string]any{}},
			"PATCH /julep/agents/{agent_id}/tools/{tool_id}": map[string]any{"name": "planted"},
			"POST /julep/agents/{agent_id}/docs":             map[string]string{"title": "planted", "content": "planted"},
			"POST /julep/users/{user_id}/docs":               map[string]string{"title": "planted", "content": "planted"},
			"POST /julep/agents/{agent_id}/search":           map[string]string{"text": "content"},
			"POST /julep/users/{user_id}/search":             map[string]string{"text": "content"},
			"POST /julep/agents/{agent_id}/tasks":            plantedTask,
			"POST /julep/agents/{agent_id}/tasks/{task_id}":  plantedTask,
			"POST /julep/tasks/{task_id}/executions":         map[string]any{"input": map[string]any{}},
			"PUT /julep/executions/{execution_id}":           map[string]any{"status": "cancelled"},
		},
		Probes: []probe{
			{Method: "GET", Path: "/julep/agents"},
			{Method: "GET", Path: "/julep/sessions"},
			{Method: "GET", Path: "/julep/users"},
			{Method: "POST", Path: "/julep/sessions", Body: `{"agent":"{agent_id}"}`},
			{Method: "POST", Path: "/julep/sessions", Body: `{"agent":"{caller.agent_id}","user":"{user_id}"}`},
			{Method: "POST", Path: "/julep/sessions/{session_id}/chat", Body: `{"messages":[{"role":"user","content":"x"}],"stream":true}`},
			{Method: "POST", Path: "/julep/agents/{caller.agent_id}/docs", Body: `{"title":"t","content":"content"}`},
			{Method: "GET", Path: "/api/sessions/{session_id}/events"},
		},
	}
}

// plantedTask is a task another account tries to make or change.
var plantedTask = map[string]any{"name": "planted", "main": []any{map[string]any{"evaluate": map[string]any{"x": "$ 1"}}}}

func contains(body []byte, s string) bool { return strings.Contains(string(body), s) }
