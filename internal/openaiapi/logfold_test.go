package openaiapi_test

import (
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestWhatIsAnsweredFromTheLogIsWhatTheReadModelThenShows: a thread made and a run modified while their read models
// apply nothing are answered from the log; once the models move again, a read of each answers the very same
// object. The answers from the log fold the thread's events with the read models' own Apply, so they cannot drift
// from what the models show.
func TestWhatIsAnsweredFromTheLogIsWhatTheReadModelThenShows(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	threadID, runID := e.toolRun(t)

	releaseThreads := e.node.HoldLease(t, "projection.threads_v2")
	made, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{
		Metadata: map[string]string{"topic": "boilers"},
		Messages: []openai.BetaThreadNewParamsMessage{{Role: "user",
			Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("When do I descale?")}}},
	})
	if err != nil {
		t.Fatalf("create a thread: %v", apiErr(err))
	}
	releaseRuns := e.node.HoldLease(t, "projection.runs_v2")
	modified, err := e.client.Beta.Threads.Runs.Update(ctx, threadID, runID, openai.BetaThreadRunUpdateParams{
		Metadata: map[string]string{"seen": "yes"}})
	if err != nil {
		t.Fatalf("modify the run: %v", apiErr(err))
	}
	if modified.Metadata["seen"] != "yes" || modified.Status != openai.RunStatusRequiresAction ||
		len(modified.RequiredAction.SubmitToolOutputs.ToolCalls) != 1 {
		t.Fatalf("the run modified, answered from the log: %s", modified.RawJSON())
	}
	releaseThreads()
	releaseRuns()

	got, err := e.client.Beta.Threads.Get(ctx, made.ID)
	if err != nil {
		t.Fatalf("get the thread: %v", apiErr(err))
	}
	if got.RawJSON() != made.RawJSON() {
		t.Errorf("the thread made, answered from the log:\n%s\nthe read model's:\n%s", made.RawJSON(), got.RawJSON())
	}
	run, err := e.client.Beta.Threads.Runs.Get(ctx, threadID, runID)
	if err != nil {
		t.Fatalf("get the run: %v", apiErr(err))
	}
	if run.RawJSON() != modified.RawJSON() {
		t.Errorf("the run modified, answered from the log:\n%s\nthe read model's:\n%s", modified.RawJSON(), run.RawJSON())
	}
}
