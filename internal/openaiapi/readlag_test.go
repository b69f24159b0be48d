package openaiapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// wantBehind checks err is the 503 of a read whose model is behind and whose log could not be read.
func wantBehind(t *testing.T, what string, err error) {
	t.Helper()
	if ae := wantAPIError(t, err, http.StatusServiceUnavailable, ""); !strings.Contains(ae.Message, "read model is behind") {
		t.Fatalf("%s: %s", what, ae.RawJSON())
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
	release := e.node.HoldLease(t, "projection.messages_v2")
	e.completeRun(t, th.ID, a.ID)
	release()
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 || msgs.Data[0].Role != "assistant" || msgs.Data[0].Content[0].Text.Value != "Paris." {
		t.Fatalf("the messages after the run: %v %s", apiErr(err), msgs.RawJSON())
	}

	th = e.thread(t, "And its second city?")
	release = e.node.HoldLease(t, "projection.messages_v2")
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
