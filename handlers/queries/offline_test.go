package queries_test

import (
	"context"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestOfflineModelSaysWhatItCannotAnswer is a new user's first questions to the sample calculator, served over HTTP,
// on a platform with no model configured: what its examples fit is answered; what they do not fit is answered
// with what the offline model cannot do and how to configure a real model, and the func is never called with the
// examples' values.
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
	for _, q := range []string{"what is 2+2", "square root of 144", "What's the capital of France?"} {
		_, reply := ask(t, n, p, "calc", q)
		if reply.Type != "response" || !strings.HasPrefix(reply.Text, offline.NeedsModel) ||
			!strings.Contains(reply.Text, "OPENAI_BASE_URL") || !strings.Contains(reply.Text, "--model") {
			t.Errorf("%q: answered %q (%s), want that it needs a real model and how to configure one", q, reply.Text, reply.Type)
		}
	}
	if calls := log.all(); len(calls) != 0 {
		t.Fatalf("calc was called with %q for questions its examples do not fit", calls)
	}
	if _, reply := ask(t, n, p, "calc", "What is 12 times 7?"); reply.Text != "12 times 7 is 84." {
		t.Fatalf("What is 12 times 7? answered %q", reply.Text)
	}
	if calls := log.all(); len(calls) != 1 || calls[0] != "12 * 7" {
		t.Fatalf("calc was called with %q", calls)
	}
}
