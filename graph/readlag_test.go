package graph_test

import (
	"context"
	"strings"
	"testing"
	"time"
)

const sessionMessages = `query($h: String!) { sessionByHandle(handle: $h) { messages { id text type } } }`

// TestASessionsMessagesAreReadFromTheLogWhileTheirReadModelStandsStill: while the sessions read model applies
// nothing, a session's query and its agent's reply, posted meanwhile, are listed all the same, past the read wait,
// from the log, in the log's order; and when the session's log cannot be read either, the read is an error saying
// the model is behind, not the model's chat log without them.
func TestASessionsMessagesAreReadFromTheLogWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")

	release := n.HoldLease(t, "projection.sessions_v2")
	defer release()
	posted := send(t, c, handle, "Hello, what can you do?", true)
	reply := posted.SendSessionMessage.Response
	if reply == nil {
		t.Fatalf("no reply: %+v", posted)
	}
	var got struct {
		SessionByHandle struct {
			Messages []struct{ ID, Text, Type string }
		}
	}
	c.do(sessionMessages, map[string]any{"h": handle}, &got)
	msgs := got.SessionByHandle.Messages
	if len(msgs) != 2 || msgs[0].ID != posted.SendSessionMessage.Message.ID || msgs[1].ID != reply.ID ||
		msgs[1].Text != reply.Text {
		t.Fatalf("the session's messages %+v, want the query and its reply", msgs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.JS.Publish(ctx, n.Layout.Names.EventSubject("session", handle, "message_posted"),
		[]byte("not an event")); err != nil {
		t.Fatalf("append an undecodable event: %v", err)
	}
	if e := c.fail(sessionMessages, map[string]any{"h": handle}, "SERVICE_UNAVAILABLE"); !strings.Contains(e.Message,
		"read model is behind") {
		t.Fatalf("the session's messages with its log unreadable: %q", e.Message)
	}
}

// TestAListWhoseReadModelStandsStillIsUnavailable: an account's sessions and the agents it may see span many
// aggregates and are not folded from the log, so past the read wait such a list whose read model stands still is
// an error saying the model is behind, not the list without what was just made.
func TestAListWhoseReadModelStandsStillIsUnavailable(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}

	releaseSessions := n.HoldLease(t, "projection.sessions_v2")
	defer releaseSessions()
	newSession(t, c, "")
	if e := c.fail(`{ allSessions { handle } }`, nil, "SERVICE_UNAVAILABLE"); !strings.Contains(e.Message, "read model is behind") {
		t.Fatalf("allSessions: %q", e.Message)
	}

	releaseAgents := n.HoldLease(t, "projection.agents")
	defer releaseAgents()
	// The mutation's own wait for the model runs out; the agent is made, and answered, all the same.
	c.do(`mutation { createAgent(agentData: {handle: "genrand", funcUrl: "http://127.0.0.1:9/genrand"}) { agent { agentId } } }`, nil, nil)
	if e := c.fail(`{ allAgents { agentId } }`, nil, "SERVICE_UNAVAILABLE"); !strings.Contains(e.Message, "read model is behind") {
		t.Fatalf("allAgents: %q", e.Message)
	}
}

// TestASessionAndAnAgentAreReadFromTheLogWhileTheirReadModelStandsStill: while the sessions read model applies
// nothing, a session deleted meanwhile is not found by its handle and one made meanwhile is; while the agents read
// model applies nothing, an agent changed meanwhile is found by its ID as it is now, with its owner, and one
// deleted is not found: past the read wait they are folded from the log, not answered as the model last showed
// them. When the log cannot be read either, the read is an error saying the model is behind.
func TestASessionAndAnAgentAreReadFromTheLogWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	const byHandle = `query($h: String!) { sessionByHandle(handle: $h) { handle } }`
	gone, broken := newSession(t, c, ""), newSession(t, c, "")
	var agents [2]struct {
		CreateAgent struct{ Agent struct{ AgentID string } }
	}
	for i, h := range []string{"genrand", "dice"} {
		c.do(`mutation($h: String!) { createAgent(agentData: {handle: $h, funcUrl: "http://127.0.0.1:9/genrand"}) {
			agent { agentId } } }`, map[string]any{"h": h}, &agents[i])
	}
	renamed, deleted := agents[0].CreateAgent.Agent.AgentID, agents[1].CreateAgent.Agent.AgentID

	releaseSessions := n.HoldLease(t, "projection.sessions_v2")
	defer releaseSessions()
	c.do(`mutation($h: String!) { deleteSession(handle: $h) { session { handle } } }`, map[string]any{"h": gone}, nil)
	c.fail(byHandle, map[string]any{"h": gone}, "NOT_FOUND")
	made := newSession(t, c, "")
	var got struct{ SessionByHandle struct{ Handle string } }
	c.do(byHandle, map[string]any{"h": made}, &got)
	if got.SessionByHandle.Handle != made {
		t.Fatalf("the session made meanwhile: %+v", got)
	}
	if _, err := n.JS.Publish(ctxFor(t), n.Layout.Names.EventSubject("session", broken, "message_posted"),
		[]byte("not an event")); err != nil {
		t.Fatalf("append an undecodable event: %v", err)
	}
	if e := c.fail(byHandle, map[string]any{"h": broken}, "SERVICE_UNAVAILABLE"); !strings.Contains(e.Message,
		"read model is behind") {
		t.Fatalf("the session with its log unreadable: %q", e.Message)
	}

	releaseAgents := n.HoldLease(t, "projection.agents")
	defer releaseAgents()
	// The mutations' own waits for the model run out; the changes are made, and answered, all the same.
	c.do(`mutation { updateAgent(agentData: {handle: "genrand", name: "Random numbers"}) { agent { agentId } } }`, nil, nil)
	c.do(`mutation { deleteAgent(handle: "dice") { agent { agentId } } }`, nil, nil)
	const byID = `query($id: String!) { agentById(agentId: $id) { agentId name owner { username } } }`
	var agent struct {
		AgentByID struct {
			AgentID, Name string
			Owner         struct{ Username string }
		}
	}
	c.do(byID, map[string]any{"id": renamed}, &agent)
	if agent.AgentByID.AgentID != renamed || agent.AgentByID.Name != "Random numbers" || agent.AgentByID.Owner.Username != "ada" {
		t.Fatalf("the agent changed meanwhile: %+v", agent)
	}
	c.fail(byID, map[string]any{"id": deleted}, "NOT_FOUND")
}

// TestAgentMutationsAndReadsByNameAnswerWhileTheirReadModelStandsStill: while the agents read model applies
// nothing, an agent's mutations are answered as done once their wait for the model runs out (the write went in: a
// timeout would be retried into a second one), with the agent as it is now and its owner; and the agent made
// meanwhile is found by its handle and by its Fixie name with its owner, folded from the log past the read wait,
// not shown ownerless as the model, which does not hold it yet, would show it. Once it is deleted, its handle is
// an error saying the model is behind (another account may have published the handle meanwhile).
func TestAgentMutationsAndReadsByNameAnswerWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	type agent struct {
		AgentID, Handle, Name string
		Owner                 struct{ Username string }
	}
	const fields = `agentId handle name owner { username }`

	release := n.HoldLease(t, "projection.agents")
	defer release()
	var created struct{ CreateAgent struct{ Agent agent } }
	c.do(`mutation { createAgent(agentData: {handle: "genrand", funcUrl: "http://127.0.0.1:9/genrand"}) { agent { `+
		fields+` } } }`, nil, &created)
	made := created.CreateAgent.Agent
	if made.AgentID == "" || made.Handle != "genrand" || made.Owner.Username != "ada" {
		t.Fatalf("createAgent answered %+v, want genrand of ada's", made)
	}

	var byHandle struct{ AgentByHandle agent }
	c.do(`{ agentByHandle(handle: "genrand") { `+fields+` } }`, nil, &byHandle)
	var byName struct{ AgentByID agent }
	c.do(`query($id: String!) { agentById(agentId: $id) { `+fields+` } }`, map[string]any{"id": "ada/genrand"}, &byName)
	for how, got := range map[string]agent{"by handle": byHandle.AgentByHandle, "by name": byName.AgentByID} {
		if got.AgentID != made.AgentID || got.Owner.Username != "ada" {
			t.Fatalf("the agent made meanwhile, found %s: %+v, want %s of ada's", how, got, made.AgentID)
		}
	}

	var updated struct{ UpdateAgent struct{ Agent agent } }
	c.do(`mutation { updateAgent(agentData: {handle: "genrand", name: "Random numbers"}) { agent { `+fields+` } } }`,
		nil, &updated)
	if got := updated.UpdateAgent.Agent; got.AgentID != made.AgentID || got.Name != "Random numbers" ||
		got.Owner.Username != "ada" {
		t.Fatalf("updateAgent answered %+v", got)
	}
	var deleted struct{ DeleteAgent struct{ Agent agent } }
	c.do(`mutation { deleteAgent(handle: "genrand") { agent { `+fields+` } } }`, nil, &deleted)
	if got := deleted.DeleteAgent.Agent; got.AgentID != made.AgentID {
		t.Fatalf("deleteAgent answered %+v", got)
	}
	// No agent of ada's holds the handle now, and the agents model, standing still, cannot tell whether another
	// account published one a moment ago: the read says so, rather than "not found".
	if e := c.fail(`{ agentByHandle(handle: "genrand") { agentId } }`, nil, "SERVICE_UNAVAILABLE"); !strings.Contains(
		e.Message, "read model is behind") {
		t.Fatalf("the agent deleted meanwhile, by handle: %q", e.Message)
	}
}

func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
