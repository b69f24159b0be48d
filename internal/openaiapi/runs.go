package openaiapi

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// newRun reads what a create-run request sets.
func (f *Face) newRun(in fields) (commands.NewRun, error) {
	var nr commands.NewRun
	var err error
	if nr.AssistantID, err = in.str("assistant_id"); err != nil {
		return nr, err
	}
	if err := ids.Check("assistant_id", ids.Assistant, nr.AssistantID); err != nil {
		return nr, err
	}
	if nr.Model, err = in.str("model"); err != nil {
		return nr, err
	}
	if err := f.checkModel("model", nr.Model); err != nil {
		return nr, err
	}
	if nr.Instructions, err = in.optStr("instructions"); err != nil {
		return nr, err
	}
	if nr.AdditionalInstructions, err = in.str("additional_instructions"); err != nil {
		return nr, err
	}
	if nr.AdditionalMessages, err = in.messages("additional_messages"); err != nil {
		return nr, err
	}
	if nr.Tools, nr.ToolsSet, err = in.tools("tools"); err != nil {
		return nr, err
	}
	if nr.ToolChoice, err = in.raw("tool_choice", true); err != nil {
		return nr, err
	}
	var parallel bool
	if ok, err := get(in, "parallel_tool_calls", &parallel); err != nil {
		return nr, err
	} else if ok {
		nr.ParallelToolCalls = &parallel
	}
	if nr.ResponseFormat, err = in.raw("response_format", true); err != nil {
		return nr, err
	}
	if nr.Temperature, err = in.optFloat("temperature"); err != nil {
		return nr, err
	}
	if nr.TopP, err = in.optFloat("top_p"); err != nil {
		return nr, err
	}
	if nr.MaxPromptTokens, err = in.optInt("max_prompt_tokens"); err != nil {
		return nr, err
	}
	if nr.MaxCompletionTokens, err = in.optInt("max_completion_tokens"); err != nil {
		return nr, err
	}
	var trunc events.Truncation
	if ok, err := get(in, "truncation_strategy", &trunc); err != nil {
		return nr, err
	} else if ok {
		nr.Truncation = &trunc
	}
	if nr.Metadata, err = in.metadata("metadata"); err != nil {
		return nr, err
	}
	if nr.ReasoningEffort, err = in.str("reasoning_effort"); err != nil {
		return nr, err
	}
	return nr, nil
}

func (f *Face) createRun(w http.ResponseWriter, r *http.Request) {
	threadID := chi.URLParam(r, "thread_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	nr, err := f.newRun(in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	stream, err := in.wantsStream()
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !stream {
		created, err := f.d.Runs.Create(r.Context(), principal(r), threadID, nr)
		f.answerCreatedRun(w, r, created, err)
		return
	}
	// The stream listens to the thread before the run exists, so that it misses none of the model's first words.
	// It reads the log itself, so it does not wait for the read models: a GET of the run meanwhile finds it in the
	// log if its model has not folded it yet (committed.go).
	nr.ID = events.NewPrefixedID("run_")
	f.stream(w, r, threadID, nr.ID, true, false, func() (eventstore.Appended, error) {
		created, err := f.d.Runs.Create(r.Context(), principal(r), threadID, nr)
		return created.Appended, err
	})
}

func (f *Face) createThreadAndRun(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	nr, err := f.newRun(in)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	var t commands.NewThread
	tf, ok, err := in.object("thread")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if ok {
		if t, err = newThread(tf); err != nil {
			f.WriteError(w, r, err)
			return
		}
	}
	if tr, err := in.raw("tool_resources", false); err != nil {
		f.WriteError(w, r, err)
		return
	} else if tr != nil && t.ToolResources == nil {
		t.ToolResources = tr
	} else if t.ToolResources != nil {
		t.ToolResourcesField = "thread.tool_resources"
	}
	stream, err := in.wantsStream()
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if t, err = f.keepAttachments(r, t, "thread.messages"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !stream {
		created, err := f.d.Runs.CreateWithThread(r.Context(), principal(r), t, nr)
		f.answerCreatedRun(w, r, created, err)
		return
	}
	if t.ID == "" {
		t.ID = events.NewPrefixedID("thread_")
	}
	nr.ID = events.NewPrefixedID("run_")
	f.stream(w, r, t.ID, nr.ID, true, true, func() (eventstore.Appended, error) {
		created, err := f.d.Runs.CreateWithThread(r.Context(), principal(r), t, nr)
		return created.Appended, err
	})
}

// run reads a run of a thread the caller owns, once the runs read model shows the thread's last run event, or else
// from the log (shownOrFolded): a client that saw the run end in a stream, or a step of it completed, must not poll
// it back as still in progress.
func (f *Face) run(r *http.Request, threadID, runID string) (thread.RunView, error) {
	if _, err := f.thread(r, threadID); err != nil {
		return thread.RunView{}, err
	}
	folded, shown, err := shownOrFolded[projections.Listed[thread.RunView]](f, r, projections.Runs{}, threadRef(threadID),
		principal(r).AccountID+"."+threadID+".*", "the thread's runs")
	if err != nil {
		return thread.RunView{}, err
	}
	if !shown {
		for _, d := range folded {
			if d.Obj.ID == runID {
				return d.Obj, nil
			}
		}
		return thread.RunView{}, errs.NotFoundf("run", runID)
	}
	run, ok, err := projections.GetLatest[projections.Listed[thread.RunView]](r.Context(), f.d.Views, "runs",
		projections.RunKey(principal(r).AccountID, threadID, runID))
	if err != nil {
		return thread.RunView{}, err
	}
	if !ok {
		// Not in the read model: confirm with the log before answering 404 (a run made since the model was checked
		// may not be shown yet).
		obj, exists, err := f.runInLog(r.Context(), principal(r).AccountID, threadID, runID)
		if err != nil {
			return thread.RunView{}, err
		}
		if !exists {
			return thread.RunView{}, errs.NotFoundf("run", runID)
		}
		return obj, nil
	}
	return run.Obj, nil
}

func (f *Face) answerRun(w http.ResponseWriter, r *http.Request, threadID, runID string) {
	run, err := f.run(r, threadID, runID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, runWire(run))
}

func (f *Face) getRun(w http.ResponseWriter, r *http.Request) {
	pollAfter(w)
	f.answerRun(w, r, chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id"))
}

// answerCreatedRun answers a run just created (not streamed) once the read models show it, or from the log if they
// do not within the wait: the run went in, and a client must not retry it into a duplicate.
func (f *Face) answerCreatedRun(w http.ResponseWriter, r *http.Request, created commands.CreatedRun, err error) {
	err = f.d.Views.ShowsWrite(r.Context(), created.Appended, err, projections.Threads{}, projections.Messages{}, projections.Runs{})
	if waitedTooLong(r, created.RunID, err) {
		f.runFromLog(w, r, created.ThreadID, created.RunID)
		return
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerRun(w, r, created.ThreadID, created.RunID)
}

// answerRunWritten answers a run a command just changed once the read models show the change, or from the log if
// they do not within the wait: the change went in, and a client must not read a timeout as its failure (a second
// submission of tool outputs would be refused, the run having moved on).
func (f *Face) answerRunWritten(w http.ResponseWriter, r *http.Request, res eventstore.Appended, threadID, runID string,
	models ...projections.Projection) {
	err := f.d.Views.Shows(r.Context(), res, models...)
	if waitedTooLong(r, runID, err) {
		f.runFromLog(w, r, threadID, runID)
		return
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerRun(w, r, threadID, runID)
}

// pollAfter tells the SDKs' poll helpers (createAndPoll, PollStatus) how soon to ask again, as OpenAI does: their
// default is a second or more, far longer than a run or a file takes here.
func pollAfter(w http.ResponseWriter) { w.Header().Set("openai-poll-after-ms", "100") }

func (f *Face) modifyRun(w http.ResponseWriter, r *http.Request) {
	threadID, runID := chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	md, err := in.metadata("metadata")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Runs.Modify(r.Context(), principal(r), threadID, runID, md)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerRunWritten(w, r, res, threadID, runID, projections.Runs{})
}

func (f *Face) cancelRun(w http.ResponseWriter, r *http.Request) {
	threadID, runID := chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id")
	res, err := f.d.Runs.Cancel(r.Context(), principal(r), threadID, runID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerRunWritten(w, r, res, threadID, runID, projections.Runs{})
}

func (f *Face) submitToolOutputs(w http.ResponseWriter, r *http.Request) {
	threadID, runID := chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	type output struct {
		ToolCallID string `json:"tool_call_id"`
		Output     string `json:"output"`
	}
	outs, ok, err := list[output](in, "tool_outputs")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.Missing("tool_outputs"))
		return
	}
	outputs := make([]events.ToolOutput, 0, len(outs))
	for _, o := range outs {
		outputs = append(outputs, events.ToolOutput{ToolCallID: o.ToolCallID, Output: o.Output})
	}
	stream, err := in.wantsStream()
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !stream {
		res, err := f.d.Runs.SubmitToolOutputs(r.Context(), principal(r), threadID, runID, outputs)
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		f.answerRunWritten(w, r, res, threadID, runID, projections.Runs{}, projections.RunSteps{})
		return
	}
	// As a streamed create, the stream reads the log and waits for no read model.
	f.stream(w, r, threadID, runID, false, false, func() (eventstore.Appended, error) {
		return f.d.Runs.SubmitToolOutputs(r.Context(), principal(r), threadID, runID, outputs)
	})
}

func (f *Face) listRuns(w http.ResponseWriter, r *http.Request) {
	threadID := chi.URLParam(r, "thread_id")
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if _, err := f.thread(r, threadID); err != nil {
		f.WriteError(w, r, err)
		return
	}
	filter := principal(r).AccountID + "." + threadID + ".*"
	docs, shown, err := shownOrFolded[projections.Listed[thread.RunView]](f, r, projections.Runs{}, threadRef(threadID), filter,
		"the thread's runs")
	if err == nil && shown {
		docs, err = projections.ListAll[projections.Listed[thread.RunView]](r.Context(), f.d.Views, "runs", filter)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[runObject], 0, len(docs))
	for _, d := range docs {
		items = append(items, listed[runObject]{id: d.Obj.ID, seq: d.Seq, obj: runWire(d.Obj)})
	}
	writeJSON(w, paginate(items, p))
}

// stepsCaughtUp checks that the caller may read the run, then waits (briefly) until the run steps read model shows
// the thread's last step event. shown says it does; when it does not, docs are the run's steps as the model will
// show them, folded from the log, or the error is a 503 (shownOrFolded).
func (f *Face) stepsCaughtUp(r *http.Request, threadID, runID string) (
	docs []projections.Listed[thread.StepView], shown bool, err error) {
	if _, err := f.run(r, threadID, runID); err != nil {
		return nil, false, err
	}
	return shownOrFolded[projections.Listed[thread.StepView]](f, r, projections.RunSteps{}, threadRef(threadID),
		principal(r).AccountID+"."+threadID+"."+runID+".*", "the run's steps")
}

func (f *Face) getStep(w http.ResponseWriter, r *http.Request) {
	threadID, runID, stepID := chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id"), chi.URLParam(r, "step_id")
	docs, shown, err := f.stepsCaughtUp(r, threadID, runID)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !shown {
		for _, d := range docs {
			if d.Obj.ID == stepID {
				writeJSON(w, stepWire(d.Obj))
				return
			}
		}
		f.WriteError(w, r, errs.NotFoundf("run step", stepID))
		return
	}
	s, ok, err := projections.GetLatest[projections.Listed[thread.StepView]](r.Context(), f.d.Views, "run_steps",
		projections.StepKey(principal(r).AccountID, threadID, runID, stepID))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.NotFoundf("run step", stepID))
		return
	}
	writeJSON(w, stepWire(s.Obj))
}

func (f *Face) listSteps(w http.ResponseWriter, r *http.Request) {
	threadID, runID := chi.URLParam(r, "thread_id"), chi.URLParam(r, "run_id")
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, shown, err := f.stepsCaughtUp(r, threadID, runID)
	if err == nil && shown {
		docs, err = projections.ListAll[projections.Listed[thread.StepView]](r.Context(), f.d.Views, "run_steps",
			principal(r).AccountID+"."+threadID+"."+runID+".*")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[runStepObject], 0, len(docs))
	for _, d := range docs {
		items = append(items, listed[runStepObject]{id: d.Obj.ID, seq: d.Seq, obj: stepWire(d.Obj)})
	}
	writeJSON(w, paginate(items, p))
}
