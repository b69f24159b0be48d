package openaiapi_test

import (
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// holdLease makes a read model stand still (platformtest.Node.HoldLease).
func (e *env) holdLease(t *testing.T, name string) (release func()) {
	t.Helper()
	return e.node.HoldLease(t, name)
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
