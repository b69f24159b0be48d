package queries_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestKilledMidLoopTheQueryCompletesOnce kills the node while a Code Shot agent's func call is under way, starts a
// node on the same data, and lets the func finish: the query completes with one reply, and the func ran once (the
// repeated call carries the same idempotency key, and the agent answers it from memory).
func TestKilledMidLoopTheQueryCompletesOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := platformtest.Start(t, platformtest.WithDataDir(dir))
	p, _ := n.NewAccount(t, "ada")

	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var runs atomic.Int32
	a := genrand.Agent(genrand.WithSeed(5, 6))
	inner := a.Funcs["genrand"]
	a.Funcs["genrand"] = func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
		runs.Add(1)
		entered <- struct{}{}
		<-release // the node dies while the func works
		return inner(context.WithoutCancel(ctx), c)
	}
	url := serveAgent(t, a).URL
	ctx := context.Background()
	if _, err := n.Commands.CreateAgent(ctx, p, commands.AgentInput{Handle: "genrand", FuncURL: &url}); err != nil {
		t.Fatal(err)
	}
	s, err := n.SessionCommands.Create(ctx, p, commands.NewSession{FrontendAgent: "genrand"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SessionCommands.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: "Generate a random number between 5 and 50"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the func was never called")
	}
	n.Crash()

	again := platformtest.Start(t, platformtest.WithDataDir(dir))
	close(release)
	reply := waitAnswer(t, again, s.ID, 1)
	if reply.Type != events.MessageResponse || !strings.HasPrefix(reply.Text, "The random number is ") {
		t.Fatalf("reply after the restart: %+v", reply)
	}
	if runs.Load() != 1 {
		t.Fatalf("the func ran %d times, want once", runs.Load())
	}
	// Let any second attempt show itself before counting.
	time.Sleep(300 * time.Millisecond)
	sess, _, err := again.Sessions.Get(ctx, s.ID, events.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	answers := 0
	for _, m := range sess.Messages {
		if m.Type != events.MessageQuery {
			answers++
		}
	}
	got := steps(t, again, s.ID)
	if answers != 1 || len(got) != 3 {
		t.Fatalf("%d answers and steps %v, want one answer and three steps (ask, result, answer)", answers, got)
	}
	number := strings.TrimSuffix(strings.TrimPrefix(reply.Text, "The random number is "), ".")
	if got[1] != "genrand: func_says genrand "+number {
		t.Fatalf("the answer's number %s is not the func's result: %v", number, got)
	}
}
