package openaiapi_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// holdLease makes a read model stand still, as it does on a loaded node whose renewal of the model's lease came
// late: another holder takes the lease (name as the log says it, "projection.messages_v2"), and keeps it until
// the returned release. It returns once the node has let the model go (its log says the lease was lost).
func (e *env) holdLease(t *testing.T, name string) (release func()) {
	t.Helper()
	ctx := ctxFor(t)
	kv, err := e.node.JS.KeyValue(ctx, e.node.Layout.Names.Bucket("projection_leases"))
	if err != nil {
		t.Fatalf("open the projection leases: %v", err)
	}
	lost := func() int {
		n := 0
		for _, l := range strings.Split(e.node.Logs.String(), "\n") {
			if strings.Contains(l, `"msg":"lease lost"`) && strings.Contains(l, `"lease":"`+name+`"`) {
				n++
			}
		}
		return n
	}
	before := lost()
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The bucket's keys expire after the lease TTL: the other holder renews, as a holder does.
		for hctx.Err() == nil {
			_, _ = kv.Put(hctx, name, []byte("another-node"))
			select {
			case <-hctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	waitFor(t, func() bool { return lost() > before })
	return func() {
		stop()
		wg.Wait()
		if err := kv.Delete(ctx, name); err != nil {
			t.Errorf("release the lease: %v", err)
		}
	}
}

// TestAFinishedRunsMessagesAreShownWhileTheirReadModelLags: a client that saw its run completed lists the run's
// answer and gets it by ID, even when the messages read model (folded apart from the runs) stood still meanwhile:
// the reads wait for it to show the thread's last message.
func TestAFinishedRunsMessagesAreShownWhileTheirReadModelLags(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	a := e.assistant(t)
	e.model.Enqueue(llmtest.Text("Paris."), llmtest.Text("Lyon."))

	th := e.thread(t, "What is the capital of France?")
	release := e.holdLease(t, "projection.messages_v2")
	e.completeRun(t, th.ID, a.ID)
	release()
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 || msgs.Data[0].Role != "assistant" || msgs.Data[0].Content[0].Text.Value != "Paris." {
		t.Fatalf("the messages after the run: %v %s", apiErr(err), msgs.RawJSON())
	}

	th = e.thread(t, "And its second city?")
	release = e.holdLease(t, "projection.messages_v2")
	run := e.completeRun(t, th.ID, a.ID)
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	if err != nil || len(steps.Data) != 1 || steps.Data[0].StepDetails.MessageCreation.MessageID == "" {
		t.Fatalf("the run's steps: %v %s", apiErr(err), steps.RawJSON())
	}
	release()
	m, err := e.client.Beta.Threads.Messages.Get(ctx, th.ID, steps.Data[0].StepDetails.MessageCreation.MessageID)
	if err != nil || m.Content[0].Text.Value != "Lyon." {
		t.Fatalf("the run's message by ID: %v", apiErr(err))
	}
}
