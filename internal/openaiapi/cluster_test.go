package openaiapi_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestTwoNodesOneWorkerPerRun: two nodes share one NATS, so both run workers take runs off the shared consumer;
// every run is still driven once: one start, one answer, one end each.
func TestTwoNodesOneWorkerPerRun(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("Answer to " + req.LastMessage().Content).WithDelay(30 * time.Millisecond)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	withModel := platformtest.WithConfig(func(c *config.Config) { c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test" })
	n1 := platformtest.Start(t, withModel, platformtest.WithConfig(func(c *config.Config) { c.NATSListen, c.NATSListenSet = addr, true }))
	n2 := platformtest.Start(t, withModel, platformtest.WithConfig(func(c *config.Config) { c.NATSURL = "nats://" + addr }))
	_, key := n1.NewAccount(t, "two")
	e1 := &env{node: n1, model: model, client: sdk(n1, key), key: key}
	e2 := &env{node: n2, model: model, client: sdk(n2, key), key: key}
	ctx := ctxFor(t)
	a := e1.assistant(t)

	type started struct{ thread, run string }
	var runs []started
	for i := 0; i < 12; i++ {
		e := e1
		if i%2 == 1 {
			e = e2
		}
		th := e.thread(t, "question")
		run, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
		if err != nil {
			t.Fatalf("create run on node %d: %v", i%2+1, apiErr(err))
		}
		runs = append(runs, started{th.ID, run.ID})
	}
	for _, s := range runs {
		if r := e2.waitRun(t, s.thread, s.run); r.Status != openai.RunStatusCompleted {
			t.Fatalf("run: %s", r.RawJSON())
		}
		history, _, err := n2.Store.Load(context.Background(), events.Ref{Type: "thread", ID: s.thread})
		if err != nil {
			t.Fatal(err)
		}
		counts := map[string]int{}
		for _, ev := range history {
			counts[ev.Type]++
		}
		if counts["thread.run_started"] != 1 || counts["thread.message_created"] != 2 || counts["thread.run_completed"] != 1 {
			t.Fatalf("thread %s: %v", s.thread, counts)
		}
	}
	if got := len(model.Requests()); got != len(runs) {
		t.Fatalf("the model was asked %d times for %d runs", got, len(runs))
	}
}
