package projections

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
)

// RunKey is the document key of a run.
func RunKey(account, threadID, runID string) string { return account + "." + threadID + "." + runID }

// ActiveRun is the index entry of a run that has not ended, for the timeout sweeper:
// "active.<account>.<thread_id>.<run_id>". It goes away when the run ends.
type ActiveRun struct {
	Account   string    `json:"account"`
	ThreadID  string    `json:"thread_id"`
	RunID     string    `json:"run_id"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
	// Changed is when the run's status last changed.
	Changed time.Time `json:"changed"`
}

// ActiveRunKey is the key of a run's entry in the index of active runs.
func ActiveRunKey(account, threadID, runID string) string {
	return "active." + account + "." + threadID + "." + runID
}

// ActiveRunsFilter matches every entry of the index of active runs.
const ActiveRunsFilter = "active.>"

// Runs is the read model of runs: "<account>.<thread_id>.<run_id>" -> Listed[thread.RunView], and the index of active
// runs.
type Runs struct{}

// Name implements Projection.
func (Runs) Name() string { return "runs" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (Runs) Version() int { return 2 }

// EventTypes implements Projection.
func (Runs) EventTypes() []string {
	return []string{"thread.run_created", "thread.run_started", "thread.run_requires_action",
		"thread.run_tool_outputs_submitted", "thread.run_completed", "thread.run_incomplete", "thread.run_failed",
		"thread.run_cancelling", "thread.run_cancelled", "thread.run_expired", "thread.run_modified"}
}

// Apply implements Projection.
func (Runs) Apply(tx *Tx, e events.Envelope) error {
	runID := thread.RunOf(e.Event)
	if runID == "" {
		return nil
	}
	key := RunKey(e.Account, e.AggregateID, runID)
	var run thread.RunView
	if d, ok := e.Event.(events.RunCreated); ok {
		run = thread.NewRunView(e, d)
		if err := tx.Put(key, Listed[thread.RunView]{Seq: e.Sequence, Obj: run}); err != nil {
			return err
		}
	} else {
		var l Listed[thread.RunView]
		ok, err := tx.Get(key, &l)
		if err != nil || !ok {
			return err
		}
		thread.ApplyRun(&l.Obj, e)
		if err := tx.Put(key, l); err != nil {
			return err
		}
		run = l.Obj
	}
	index := ActiveRunKey(e.Account, e.AggregateID, runID)
	if !thread.Active(run.Status) {
		return tx.Delete(index)
	}
	return Modify(tx, index, func(a *ActiveRun, _ bool) error {
		*a = ActiveRun{Account: e.Account, ThreadID: e.AggregateID, RunID: runID, Status: run.Status,
			ExpiresAt: expiry(run, a.ExpiresAt), Changed: e.Time}
		return nil
	})
}

func expiry(r thread.RunView, known time.Time) time.Time {
	if r.ExpiresAt != nil {
		return *r.ExpiresAt
	}
	return known
}

// StepKey is the document key of a run step.
func StepKey(account, threadID, runID, stepID string) string {
	return account + "." + threadID + "." + runID + "." + stepID
}

// RunSteps is the read model of run steps: "<account>.<thread_id>.<run_id>.<step_id>" -> Listed[thread.StepView].
type RunSteps struct{}

// Name implements Projection.
func (RunSteps) Name() string { return "run_steps" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (RunSteps) Version() int { return 2 }

// EventTypes implements Projection.
func (RunSteps) EventTypes() []string {
	return []string{"thread.run_step_created", "thread.run_step_completed", "thread.run_step_ended",
		"thread.run_tool_outputs_submitted"}
}

// Apply implements Projection.
func (RunSteps) Apply(tx *Tx, e events.Envelope) error {
	var runID, stepID string
	switch d := e.Event.(type) {
	case events.StepCreated:
		return tx.Put(StepKey(e.Account, e.AggregateID, d.RunID, d.StepID), Listed[thread.StepView]{Seq: e.Sequence, Obj: thread.NewStepView(e, d)})
	case events.StepCompleted:
		runID, stepID = d.RunID, d.StepID
	case events.StepEnded:
		runID, stepID = d.RunID, d.StepID
	case events.RunToolOutputsSubmitted:
		runID, stepID = d.RunID, d.StepID
	default:
		return nil
	}
	return Modify(tx, StepKey(e.Account, e.AggregateID, runID, stepID), func(s *Listed[thread.StepView], exists bool) error {
		if !exists {
			return ErrSkip
		}
		thread.ApplyStep(&s.Obj, e)
		return nil
	})
}

// ActiveRuns lists the runs that have not ended from the index of active runs (it is handlers/sweeper's Active).
type ActiveRuns struct{ Views *Runner }

// ActiveRuns lists every active run.
func (a ActiveRuns) ActiveRuns(ctx context.Context) ([]thread.ActiveRun, error) {
	found, err := ListAll[ActiveRun](ctx, a.Views, "runs", ActiveRunsFilter)
	if err != nil {
		return nil, err
	}
	out := make([]thread.ActiveRun, len(found))
	for i, r := range found {
		out[i] = thread.ActiveRun{Ref: thread.RunRef{Account: r.Account, ThreadID: r.ThreadID, RunID: r.RunID},
			Status: r.Status, ExpiresAt: r.ExpiresAt, Changed: r.Changed}
	}
	return out, nil
}
