package queries_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestOfflineModelSaysWhatItCannotAnswer is a new user's first questions to the sample calculator, served over HTTP,
// on a platform with no model configured: what its examples fit is answered, signs and all; what they do not fit
// is answered with what the offline model cannot do and how to configure a real model, and the func is never
// called with the examples' values.
func TestOfflineModelSaysWhatItCannotAnswer(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	var log funcLog
	a := calc.Agent()
	inner := a.Funcs["calc"]
	a.Funcs["calc"] = func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
		log.add(c.Message.Text)
		return inner(ctx, c)
	}
	url := serveAgent(t, a).URL
	if _, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: "calc", FuncURL: &url}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"square root of 144", "What's the capital of France?", "What is 12 times 7 squared?"} {
		_, reply := ask(t, n, p, "calc", q)
		if reply.Type != "response" || !strings.HasPrefix(reply.Text, offline.NeedsModel) ||
			!strings.Contains(reply.Text, "OPENAI_BASE_URL") || !strings.Contains(reply.Text, "--model") {
			t.Errorf("%q: answered %q (%s), want that it needs a real model and how to configure one", q, reply.Text, reply.Type)
		}
	}
	if calls := log.all(); len(calls) != 0 {
		t.Fatalf("calc was called with %q for questions its examples do not fit", calls)
	}
	answered := []struct{ q, answer, call string }{
		{"What is 12 times 7?", "12 times 7 is 84.", "12 * 7"},
		{"What is 3 minus 5?", "3 minus 5 is -2.", "3 - 5"},
		{"10 minus -4", "10 minus -4 is 14.", "10 - -4"},
		{"what is 2+2", "2+2 is 4.", "2+2"},
		{"3 plus 4", "3 plus 4 is 7.", "3 + 4"},
	}
	var want []string
	for _, c := range answered {
		if _, reply := ask(t, n, p, "calc", c.q); reply.Text != c.answer {
			t.Errorf("%q answered %q, want %q", c.q, reply.Text, c.answer)
		}
		want = append(want, c.call)
	}
	if calls := log.all(); !slices.Equal(calls, want) {
		t.Fatalf("calc was called with %q, want %q", calls, want)
	}
}

// TestOfflineHelpListsTheAgents asks the front agent, on the offline model, what it can do: the answer lists the
// agents the user can ask with their sample queries, not the offline model's notice.
func TestOfflineHelpListsTheAgents(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	url := serveAgent(t, calc.Agent()).URL
	if _, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: "calc", FuncURL: &url}); err != nil {
		t.Fatal(err)
	}
	// Another account's unpublished agent is none of ada's business.
	bob, _ := n.NewAccount(t, "bob")
	secret := serveAgent(t, calc.Agent()).URL
	if _, err := n.RegisterAgent(context.Background(), bob, commands.AgentInput{Handle: "bobsecret", FuncURL: &secret}); err != nil {
		t.Fatal(err)
	}
	// The routing index takes the agents in the background.
	for deadline := time.Now().Add(30 * time.Second); n.Index.Candidates(p.AccountID) == 0 || n.Index.Candidates(bob.AccountID) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the routing index never took the agents in")
		}
	}
	for _, q := range []string{"What can you do?", "help"} {
		_, reply := ask(t, n, p, "fixie", q)
		t.Logf("%s → %s", q, reply.Text)
		for _, want := range []string{"- calc", `"What is 12 times 7?"`, "OPENAI_API_KEY"} {
			if !strings.Contains(reply.Text, want) {
				t.Errorf("%q answered %q, want it to hold %q", q, reply.Text, want)
			}
		}
		if reply.Text == offline.Notice || strings.Contains(reply.Text, "bobsecret") {
			t.Errorf("%q answered with the notice, or another account's agent: %q", q, reply.Text)
		}
	}
	// Another question no agent fits still gets the notice, which says in two sentences what the offline model can
	// do and how to configure a real one.
	if _, reply := ask(t, n, p, "fixie", "Tell me a story about dragons"); reply.Text != offline.Notice {
		t.Errorf("a story answered %q, want the notice", reply.Text)
	}
}
