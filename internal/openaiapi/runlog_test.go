package openaiapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// toolRun makes a run of an assistant with the weather tool wait for its tool's output (requires_action, shown by
// every read model), for a test to hold a read model before the run goes on.
func (e *env) toolRun(t *testing.T) (threadID, runID string) {
	t.Helper()
	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Rome"}`}),
		llmtest.Text("Sunny in Rome."))
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "What is the weather in Rome?")
	run := e.run(t, th.ID, a.ID)
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusRequiresAction {
		t.Fatalf("want requires_action: %s", run.RawJSON())
	}
	return th.ID, run.ID
}

// submitStreaming gives the tool's output to a run waiting for it, streamed: the stream reads the log and waits
// for no read model, so it ends when the run does, whatever the models show.
func (e *env) submitStreaming(t *testing.T, threadID, runID string) {
	t.Helper()
	stream := e.client.Beta.Threads.Runs.SubmitToolOutputsStreaming(ctxFor(t), threadID, runID,
		openai.BetaThreadRunSubmitToolOutputsParams{ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{
			{ToolCallID: openai.String("call_w"), Output: openai.String("sunny")}}})
	completed := false
	for stream.Next() {
		completed = completed || stream.Current().Event == "thread.run.completed"
	}
	if err := stream.Err(); err != nil || !completed {
		t.Fatalf("submit the tool's output: %v (completed: %v)", apiErr(err), completed)
	}
}

// TestARunsStepsAreReadFromTheLogWhileTheirReadModelStandsStill: while the run steps read model applies nothing, a
// run's steps written meanwhile (its tool call completed with its output, the step that wrote its answer) are
// listed and got all the same, past the read wait, from the log: in the model's order, paged as the model's list is.
func TestARunsStepsAreReadFromTheLogWhileTheirReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	threadID, runID := e.toolRun(t)
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, threadID, runID, openai.BetaThreadRunStepListParams{})
	if err != nil || len(steps.Data) != 1 || steps.Data[0].Status != openai.RunStepStatusInProgress {
		t.Fatalf("the waiting run's steps: %v %s", apiErr(err), steps.RawJSON())
	}
	call := steps.Data[0].ID

	release := e.node.HoldLease(t, "projection.run_steps_v2")
	defer release()
	e.submitStreaming(t, threadID, runID)

	list := func(p openai.BetaThreadRunStepListParams) ([]string, []string, bool) {
		t.Helper()
		page, err := e.client.Beta.Threads.Runs.Steps.List(ctx, threadID, runID, p)
		if err != nil {
			t.Fatalf("list %+v: %v", p, apiErr(err))
		}
		var types, ids []string
		for _, s := range page.Data {
			if s.Status != openai.RunStepStatusCompleted || s.RunID != runID || s.ThreadID != threadID {
				t.Fatalf("a listed step: %s", s.RawJSON())
			}
			types, ids = append(types, string(s.Type)), append(ids, s.ID)
		}
		return types, ids, page.HasMore
	}
	types, ids, _ := list(openai.BetaThreadRunStepListParams{})
	if !slices.Equal(types, []string{"message_creation", "tool_calls"}) || ids[1] != call {
		t.Fatalf("the run's steps: %q %q", types, ids)
	}
	asc := openai.BetaThreadRunStepListParamsOrderAsc
	if types, _, more := list(openai.BetaThreadRunStepListParams{Order: asc, Limit: openai.Int(1)}); !more ||
		!slices.Equal(types, []string{"tool_calls"}) {
		t.Fatalf("the first page: %q, has_more %v", types, more)
	}
	if types, got, more := list(openai.BetaThreadRunStepListParams{Order: asc, After: openai.String(call)}); more ||
		!slices.Equal(got, ids[:1]) {
		t.Fatalf("after the tool call: %q %q, has_more %v", types, got, more)
	}

	s, err := e.client.Beta.Threads.Runs.Steps.Get(ctx, threadID, runID, call, openai.BetaThreadRunStepGetParams{})
	if err != nil || s.Status != openai.RunStepStatusCompleted || len(s.StepDetails.ToolCalls) != 1 ||
		s.StepDetails.ToolCalls[0].Function.Output != "sunny" {
		t.Fatalf("the tool call step by ID: %v %s", apiErr(err), s.RawJSON())
	}
	_, err = e.client.Beta.Threads.Runs.Steps.Get(ctx, threadID, runID, "step_none", openai.BetaThreadRunStepGetParams{})
	wantAPIError(t, err, http.StatusNotFound, "")
}

// TestARunIsReadFromTheLogWhileTheRunsReadModelStandsStill: a client that saw its run complete in a stream gets it
// and lists it completed, its metadata modified meanwhile, and its steps, while the runs read model applies
// nothing: past the read wait the run is folded from the log, not answered as the model last showed it (waiting
// for its tool's output). Its modification past the wait is answered from the log too, not as a timeout.
func TestARunIsReadFromTheLogWhileTheRunsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	threadID, runID := e.toolRun(t)

	release := e.node.HoldLease(t, "projection.runs_v2")
	defer release()
	e.submitStreaming(t, threadID, runID)

	run, err := e.client.Beta.Threads.Runs.Get(ctx, threadID, runID)
	if err != nil || run.Status != openai.RunStatusCompleted || run.CompletedAt == 0 {
		t.Fatalf("the run: %v %s", apiErr(err), run.RawJSON())
	}
	run, err = e.client.Beta.Threads.Runs.Update(ctx, threadID, runID, openai.BetaThreadRunUpdateParams{
		Metadata: map[string]string{"seen": "yes"}})
	if err != nil {
		t.Fatalf("modify the run: %v", apiErr(err))
	}
	if run.Metadata["seen"] != "yes" || run.Status != openai.RunStatusCompleted {
		t.Fatalf("the run modified: %s", run.RawJSON())
	}
	runs, err := e.client.Beta.Threads.Runs.List(ctx, threadID, openai.BetaThreadRunListParams{})
	if err != nil || len(runs.Data) != 1 || runs.Data[0].ID != runID || runs.Data[0].Status != openai.RunStatusCompleted ||
		runs.Data[0].Metadata["seen"] != "yes" {
		t.Fatalf("the thread's runs: %v %s", apiErr(err), runs.RawJSON())
	}
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, threadID, runID, openai.BetaThreadRunStepListParams{})
	if err != nil || len(steps.Data) != 2 {
		t.Fatalf("the run's steps: %v %s", apiErr(err), steps.RawJSON())
	}
	_, err = e.client.Beta.Threads.Runs.Get(ctx, threadID, "run_none")
	wantAPIError(t, err, http.StatusNotFound, "")
}

// TestRunsAndStepsAre503WhenNeitherTheReadModelNorTheLogAnswers: past the read wait, a run or its steps whose
// thread's log cannot be read (here an event this build cannot decode stands in the thread's history) are a 503
// saying the read model is behind, not what the standing model holds.
func TestRunsAndStepsAre503WhenNeitherTheReadModelNorTheLogAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("Paris."))
	th := e.thread(t, "What is the capital of France?")
	run := e.completeRun(t, th.ID, e.assistant(t).ID)
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	if err != nil || len(steps.Data) != 1 {
		t.Fatalf("the run's steps: %v %s", apiErr(err), steps.RawJSON())
	}
	releaseSteps := e.node.HoldLease(t, "projection.run_steps_v2")
	defer releaseSteps()
	e.node.AppendUndecodable(t, "thread", th.ID, "run_step_completed")
	_, err = e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	wantBehind(t, "list steps", err)
	_, err = e.client.Beta.Threads.Runs.Steps.Get(ctx, th.ID, run.ID, steps.Data[0].ID, openai.BetaThreadRunStepGetParams{})
	wantBehind(t, "get step", err)

	releaseRuns := e.node.HoldLease(t, "projection.runs_v2")
	defer releaseRuns()
	e.node.AppendUndecodable(t, "thread", th.ID, "run_completed")
	_, err = e.client.Beta.Threads.Runs.Get(ctx, th.ID, run.ID)
	wantBehind(t, "get run", err)
	_, err = e.client.Beta.Threads.Runs.List(ctx, th.ID, openai.BetaThreadRunListParams{})
	wantBehind(t, "list runs", err)
}
