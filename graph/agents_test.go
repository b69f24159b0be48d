package graph_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

const agentFields = `agentId handle name description queries moreInfoUrl published owner { username } queryUrl funcUrl kind created modified`

type agentJSON struct {
	AgentID     string   `json:"agentId"`
	Handle      string   `json:"handle"`
	Name        *string  `json:"name"`
	Queries     []string `json:"queries"`
	Published   bool     `json:"published"`
	Owner       *struct{ Username string }
	QueryURL    *string `json:"queryUrl"`
	FuncURL     *string `json:"funcUrl"`
	Kind        string  `json:"kind"`
	MoreInfoURL *string `json:"moreInfoUrl"`
}

// TestAgentRegistry: Fixie's agent queries and mutations, with tenancy: unpublished agents are their owner's only.
func TestAgentRegistry(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, aliceKey := n.NewAccount(t, "alice")
	_, bobKey := n.NewAccount(t, "bob")
	alice := client{t: t, n: n, key: aliceKey}
	bob := client{t: t, n: n, key: bobKey}

	var created struct{ CreateAgent struct{ Agent agentJSON } }
	alice.do(`mutation { createAgent(agentData: {handle: "genrand", name: "Random numbers", description: "Makes random numbers",
  funcUrl: "http://127.0.0.1:9/genrand", queries: ["Generate a random number between 0 and 19"]}) { agent { `+agentFields+` } } }`, nil, &created)
	a := created.CreateAgent.Agent
	if !strings.HasPrefix(a.AgentID, "agt_") || a.Handle != "genrand" || a.Kind != "codeshot" || a.Published ||
		a.Owner == nil || a.Owner.Username != "alice" || len(a.Queries) != 1 {
		t.Fatalf("created agent %+v", a)
	}

	// The owner sees it by ID and handle, beside the built-in agents (fixie, router); bob does not see it at all.
	var all struct{ AllAgents []agentJSON }
	alice.do(`{ allAgents { `+agentFields+` } }`, nil, &all)
	if len(all.AllAgents) != 3 || all.AllAgents[0].AgentID != "fixie" || all.AllAgents[0].Owner != nil ||
		all.AllAgents[1].AgentID != "router" || all.AllAgents[2].AgentID != a.AgentID {
		t.Fatalf("alice's allAgents: %+v", all.AllAgents)
	}
	alice.do(`query($h: String!) { agentByHandle(handle: $h) { agentId } }`, map[string]any{"h": "genrand"}, nil)
	bob.fail(`query($id: String!) { agentById(agentId: $id) { agentId } }`, map[string]any{"id": a.AgentID}, "NOT_FOUND")
	bob.fail(`{ agentByHandle(handle: "genrand") { agentId } }`, nil, "NOT_FOUND")
	bob.do(`{ allAgents { agentId } }`, nil, &all)
	if len(all.AllAgents) != 2 {
		t.Fatalf("bob sees %+v, want only the built-ins", all.AllAgents)
	}
	bob.fail(`mutation { updateAgent(agentData: {handle: "genrand", published: true}) { agent { agentId } } }`, nil, "NOT_FOUND")

	// Handles are unique per owner; built-ins cannot be taken or changed.
	alice.fail(`mutation { createAgent(agentData: {handle: "genrand"}) { agent { agentId } } }`, nil, "CONFLICT")
	alice.fail(`mutation { createAgent(agentData: {handle: "fixie"}) { agent { agentId } } }`, nil, "BAD_USER_INPUT")
	alice.fail(`mutation { createAgent(agentData: {handle: "Bad Handle"}) { agent { agentId } } }`, nil, "BAD_USER_INPUT")
	alice.fail(`mutation { createAgent(agentData: {handle: "x", queryUrl: "ftp://x"}) { agent { agentId } } }`, nil, "BAD_USER_INPUT")
	alice.fail(`mutation { deleteAgent(handle: "fixie") { agent { handle } } }`, nil, "FORBIDDEN")
	bob.do(`mutation { createAgent(agentData: {handle: "genrand", queryUrl: "http://127.0.0.1:9/"}) { agent { agentId } } }`, nil, nil)

	// Published and renamed, it is readable by everyone, by ID and handle.
	var upd struct{ UpdateAgent struct{ Agent agentJSON } }
	alice.do(`mutation { updateAgent(agentData: {handle: "genrand", newHandle: "random", published: true}) { agent { `+agentFields+` } } }`, nil, &upd)
	if u := upd.UpdateAgent.Agent; u.AgentID != a.AgentID || u.Handle != "random" || !u.Published || *u.Name != "Random numbers" {
		t.Fatalf("updated agent %+v", u)
	}
	var byID struct{ AgentByID agentJSON }
	bob.do(`query($id: String!) { agentById(agentId: $id) { `+agentFields+` } }`, map[string]any{"id": a.AgentID}, &byID)
	if byID.AgentByID.Owner == nil || byID.AgentByID.Owner.Username != "alice" {
		t.Fatalf("bob reads alice's published agent as %+v", byID.AgentByID)
	}
	var byHandle struct{ AgentByHandle agentJSON }
	bob.do(`{ agentByHandle(handle: "random") { agentId } }`, nil, &byHandle)
	if byHandle.AgentByHandle.AgentID != a.AgentID {
		t.Fatalf("bob's agentByHandle(random) = %+v", byHandle.AgentByHandle)
	}
	// bob's own genrand comes before anything published; alice's old handle is free again.
	bob.do(`{ agentByHandle(handle: "genrand") { agentId owner { username } } }`, nil, &byHandle)
	if byHandle.AgentByHandle.Owner.Username != "bob" {
		t.Fatalf("bob's agentByHandle(genrand) = %+v", byHandle.AgentByHandle)
	}
	alice.fail(`{ agentByHandle(handle: "genrand") { agentId } }`, nil, "NOT_FOUND")
	// An owner's daily usage is not shown to others.
	var usage struct {
		AgentByID struct {
			Owner struct {
				Username        string
				DailyQueryLimit *int
			}
		}
	}
	bob.do(`query($id: String!) { agentById(agentId: $id) { owner { username dailyQueryLimit } } }`, map[string]any{"id": a.AgentID}, &usage)
	if usage.AgentByID.Owner.DailyQueryLimit != nil {
		t.Fatal("bob sees alice's daily query limit")
	}

	// Deleted, it is gone for everyone.
	alice.do(`mutation { deleteAgent(handle: "random") { agent { handle } } }`, nil, nil)
	bob.fail(`query($id: String!) { agentById(agentId: $id) { agentId } }`, map[string]any{"id": a.AgentID}, "NOT_FOUND")
	alice.fail(`mutation { deleteAgent(handle: "random") { agent { handle } } }`, nil, "NOT_FOUND")
	alice.do(`mutation { createAgent(agentData: {handle: "random"}) { agent { agentId } } }`, nil, nil)
}

// TestUserAndPagination: user { username dailyQueryLimit dailyUsedQueries }, and cursors over allSessions.
func TestUserAndPagination(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	var u struct {
		User struct {
			Username         string
			DailyQueryLimit  int
			DailyUsedQueries int
		}
	}
	c.do(`{ user { username dailyQueryLimit dailyUsedQueries } }`, nil, &u)
	if u.User.Username != "ada" || u.User.DailyQueryLimit != 1000 {
		t.Fatalf("user %+v", u.User)
	}
	var made []string
	for range 5 {
		made = append(made, newSession(t, c, ""))
	}
	var seen []string
	after := ""
	for {
		var p struct {
			AllSessions []struct{ Handle, Cursor string }
		}
		c.do(`query($after: String) { allSessions(first: 2, after: $after) { handle cursor } }`, map[string]any{"after": after}, &p)
		if len(p.AllSessions) == 0 {
			break
		}
		for _, s := range p.AllSessions {
			seen = append(seen, s.Handle)
		}
		after = p.AllSessions[len(p.AllSessions)-1].Cursor
	}
	if len(seen) != len(made) {
		t.Fatalf("pages gave %v, want %d sessions", seen, len(made))
	}
	for i := range made {
		if seen[i] != made[len(made)-1-i] {
			t.Fatalf("pages gave %v, want newest first: %v", seen, made)
		}
	}
}

// TestDailyQuota: a posted message counts against the account's daily quota (user shows it); past the quota a post
// is RATE_LIMITED with the time to wait.
func TestDailyQuota(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, key := n.NewAccount(t, "ada")
	n.SetLimits(t, p.AccountID, 2, 0)
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")
	send(t, c, handle, "one", false)
	send(t, c, handle, "two", false)
	var u struct {
		User struct{ DailyQueryLimit, DailyUsedQueries int }
	}
	c.do(`{ user { dailyQueryLimit dailyUsedQueries } }`, nil, &u)
	if u.User.DailyQueryLimit != 2 || u.User.DailyUsedQueries != 2 {
		t.Fatalf("user %+v, want 2 of 2 used", u.User)
	}
	e := c.fail(sendMessage, map[string]any{"s": handle, "t": "three"}, "RATE_LIMITED")
	if secs, _ := e.Extensions["retryAfterSeconds"].(float64); secs <= 0 {
		t.Fatalf("RATE_LIMITED without retryAfterSeconds: %+v", e)
	}
}

// TestAgentByFixieName: agentById takes the name Fixie gave agents and tokens carry in "aid", "<username>/<handle>",
// as well as the agent's ID, with the same tenancy; a malformed name is BAD_USER_INPUT naming agentId.
func TestAgentByFixieName(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, aliceKey := n.NewAccount(t, "alice")
	_, bobKey := n.NewAccount(t, "bob")
	alice := client{t: t, n: n, key: aliceKey}
	bob := client{t: t, n: n, key: bobKey}
	var created struct{ CreateAgent struct{ Agent agentJSON } }
	alice.do(`mutation { createAgent(agentData: {handle: "dice", queryUrl: "http://127.0.0.1:9/"}) { agent { agentId } } }`, nil, &created)
	id := created.CreateAgent.Agent.AgentID

	byName := `query($id: String!) { agentById(agentId: $id) { agentId handle owner { username } } }`
	var got struct{ AgentByID agentJSON }
	alice.do(byName, map[string]any{"id": "alice/dice"}, &got)
	if got.AgentByID.AgentID != id || got.AgentByID.Owner == nil || got.AgentByID.Owner.Username != "alice" {
		t.Fatalf("agentById(alice/dice) = %+v, want %s", got.AgentByID, id)
	}
	bob.fail(byName, map[string]any{"id": "alice/dice"}, "NOT_FOUND")
	alice.fail(byName, map[string]any{"id": "alice/nope"}, "NOT_FOUND")
	alice.do(`mutation { updateAgent(agentData: {handle: "dice", published: true}) { agent { agentId } } }`, nil, nil)
	bob.do(byName, map[string]any{"id": "alice/dice"}, &got)
	if got.AgentByID.AgentID != id {
		t.Fatalf("bob's agentById(alice/dice) = %+v", got.AgentByID)
	}
	// Account names need not be unique; a name stands for the first account that needed it in an agent name, and
	// another account of that name goes by its ID.
	twin, twinKey := n.NewAccount(t, "alice")
	client{t: t, n: n, key: twinKey}.do(`mutation { createAgent(agentData: {handle: "dice", queryUrl: "http://127.0.0.1:9/"}) { agent { agentId } } }`, nil, &created)
	if name, err := n.Commands.Agents.FixieName(t.Context(), twin.AccountID, "dice"); err != nil || name != twin.AccountID+"/dice" {
		t.Fatalf("the second alice's agent is named %q (%v), want %s/dice", name, err, twin.AccountID)
	}
	client{t: t, n: n, key: twinKey}.do(byName, map[string]any{"id": twin.AccountID + "/dice"}, &got)
	if got.AgentByID.AgentID != created.CreateAgent.Agent.AgentID {
		t.Fatalf("agentById(<account>/dice) = %+v", got.AgentByID)
	}
	bob.do(byName, map[string]any{"id": "alice/dice"}, &got)
	if got.AgentByID.AgentID != id {
		t.Fatalf("alice/dice names %s, want the first alice's %s", got.AgentByID.AgentID, id)
	}
	for _, bad := range []string{"alice/dice/x", "al ice/dice", "alice/Dice", "/dice", "alice/", "*/>", "alice/" + strings.Repeat("d", 65),
		strings.Repeat("a", 4000) + "/dice"} {
		e := alice.fail(byName, map[string]any{"id": bad}, "BAD_USER_INPUT")
		if e.Extensions["field"] != "agentId" || len(e.Message) > 200 {
			t.Errorf("agentById(%.40q): %q, field %v; want a short message naming agentId", bad, e.Message, e.Extensions["field"])
		}
	}
}
