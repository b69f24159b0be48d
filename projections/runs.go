package projections

import (
	"context"
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
)

// RunView is a run as the log made it: what each face shows of a run is mapped from it (the Assistants face maps it
// to its wire object, with the API's defaults and Unix times). Optional settings the run was not given stay nil.
type RunView struct {
	ID                  string             `json:"id"`
	CreatedAt           time.Time          `json:"created_at"`
	AssistantID         string             `json:"assistant_id"`
	ThreadID            string             `json:"thread_id"`
	Status              string             `json:"status"`
	StartedAt           *time.Time         `json:"started_at,omitempty"`
	ExpiresAt           *time.Time         `json:"expires_at,omitempty"`
	CancelledAt         *time.Time         `json:"cancelled_at,omitempty"`
	FailedAt            *time.Time         `json:"failed_at,omitempty"`
	CompletedAt         *time.Time         `json:"completed_at,omitempty"`
	RequiredCalls       []events.ToolCall  `json:"required_calls,omitempty"` // the function calls a run in requires_action waits for
	LastError           *LastError         `json:"last_error,omitempty"`
	IncompleteReason    string             `json:"incomplete_reason,omitempty"`
	Model               string             `json:"model"`
	Instructions        string             `json:"instructions"`
	Tools               []events.Tool      `json:"tools,omitempty"`
	Metadata            map[string]string  `json:"metadata,omitempty"`
	Usage               *events.TokenUsage `json:"usage,omitempty"`
	Temperature         *float64           `json:"temperature,omitempty"`
	TopP                *float64           `json:"top_p,omitempty"`
	MaxPromptTokens     *int               `json:"max_prompt_tokens,omitempty"`
	MaxCompletionTokens *int               `json:"max_completion_tokens,omitempty"`
	Truncation          events.Truncation  `json:"truncation"`
	ResponseFormat      json.RawMessage    `json:"response_format,omitempty"`
	ToolChoice          json.RawMessage    `json:"tool_choice,omitempty"`
	ParallelToolCalls   bool               `json:"parallel_tool_calls"`
}

// LastError is why a run or a step failed.
type LastError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// NewRunView is the run a RunCreated event makes.
func NewRunView(e events.Envelope, d events.RunCreated) RunView {
	expires := d.ExpiresAt
	return RunView{
		ID: d.RunID, CreatedAt: e.Time, AssistantID: d.AssistantID, ThreadID: e.AggregateID,
		Status: events.RunStatusQueued, ExpiresAt: &expires, Model: d.Model, Instructions: d.Instructions,
		Tools: d.Tools, Metadata: d.Metadata, Temperature: d.Temperature, TopP: d.TopP,
		MaxPromptTokens: d.MaxPromptTokens, MaxCompletionTokens: d.MaxCompletionTokens, Truncation: d.Truncation,
		ResponseFormat: d.ResponseFormat, ToolChoice: d.ToolChoice, ParallelToolCalls: d.ParallelToolCalls,
	}
}

// ApplyRun folds one event of a run into its view. It is the one fold both the read model and the streaming face
// use, so that what a stream shows and what a later read returns agree.
func ApplyRun(r *RunView, e events.Envelope) {
	at := e.Time
	if _, status, ok := thread.RunStatus(e.Event); ok {
		r.Status = status
		if !thread.Active(status) {
			r.RequiredCalls = nil
		}
	}
	end := func(usage events.TokenUsage) {
		u := usage
		r.Usage = &u
	}
	switch d := e.Event.(type) {
	case events.RunStarted:
		if r.StartedAt == nil {
			r.StartedAt = &at
		}
	case events.RunRequiresAction:
		r.RequiredCalls = append([]events.ToolCall{}, d.ToolCalls...)
	case events.RunToolOutputsSubmitted:
		r.RequiredCalls = nil
	case events.RunCompleted:
		end(d.Usage)
		r.CompletedAt, r.ExpiresAt = &at, nil
	case events.RunIncomplete:
		end(d.Usage)
		r.IncompleteReason, r.ExpiresAt = d.Reason, nil
	case events.RunFailed:
		end(d.Usage)
		r.FailedAt, r.ExpiresAt = &at, nil
		r.LastError = &LastError{Code: d.Code, Message: d.Message}
	case events.RunCancelled:
		end(d.Usage)
		r.CancelledAt, r.ExpiresAt = &at, nil
	case events.RunExpired:
		end(d.Usage)
	case events.RunModified:
		r.Metadata = d.Metadata
	}
}

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

// Runs is the read model of runs: "<account>.<thread_id>.<run_id>" -> Listed[RunView], and the index of active
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
	var run RunView
	if d, ok := e.Event.(events.RunCreated); ok {
		run = NewRunView(e, d)
		if err := tx.Put(key, Listed[RunView]{Seq: e.Sequence, Obj: run}); err != nil {
			return err
		}
	} else {
		var l Listed[RunView]
		ok, err := tx.Get(key, &l)
		if err != nil || !ok {
			return err
		}
		ApplyRun(&l.Obj, e)
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

func expiry(r RunView, known time.Time) time.Time {
	if r.ExpiresAt != nil {
		return *r.ExpiresAt
	}
	return known
}

// StepView is a run step as the log made it; the Assistants face maps it to its wire object.
type StepView struct {
	ID          string     `json:"id"`
	CreatedAt   time.Time  `json:"created_at"`
	RunID       string     `json:"run_id"`
	AssistantID string     `json:"assistant_id"`
	ThreadID    string     `json:"thread_id"`
	Type        string     `json:"type"` // message_creation or tool_calls
	Status      string     `json:"status"`
	MessageID   string     `json:"message_id,omitempty"` // the message a message_creation step made
	ToolCalls   []StepCall `json:"tool_calls,omitempty"`
	CompletedAt *time.Time `json:"completed_at,omitempty"`
	CancelledAt *time.Time `json:"cancelled_at,omitempty"`
	ExpiredAt   *time.Time `json:"expired_at,omitempty"`
	FailedAt    *time.Time `json:"failed_at,omitempty"`
	LastError   *LastError `json:"last_error,omitempty"`
	// Usage is what the step's model call used; the API shows it once the step is no longer in progress.
	Usage *events.TokenUsage `json:"usage,omitempty"`
}

// StepCall is a tool call a step made, with the output a client submitted for it (function calls only).
type StepCall struct {
	events.ToolCall
	Output *string `json:"output,omitempty"`
}

// NewStepView is the step a StepCreated event makes.
func NewStepView(e events.Envelope, d events.StepCreated) StepView {
	s := StepView{ID: d.StepID, CreatedAt: e.Time, RunID: d.RunID, AssistantID: d.AssistantID, ThreadID: e.AggregateID,
		Type: d.Type, Status: events.StepStatusInProgress, MessageID: d.MessageID, Usage: d.Usage}
	if d.Completed {
		at := e.Time
		s.Status, s.CompletedAt = events.StepStatusCompleted, &at
	}
	for _, c := range d.ToolCalls {
		s.ToolCalls = append(s.ToolCalls, StepCall{ToolCall: c})
	}
	return s
}

// ApplyStep folds an event that ends a step into its view (StepCreated makes the view: NewStepView). It is the one
// fold the read model and the streaming face share.
func ApplyStep(s *StepView, e events.Envelope) {
	at := e.Time
	switch d := e.Event.(type) {
	case events.StepCompleted:
		s.Status, s.CompletedAt = events.StepStatusCompleted, &at
	case events.RunToolOutputsSubmitted:
		outputs := make(map[string]string, len(d.Outputs))
		for _, o := range d.Outputs {
			outputs[o.ToolCallID] = o.Output
		}
		for i, c := range s.ToolCalls {
			if out, ok := outputs[c.ID]; ok {
				s.ToolCalls[i].Output = &out
			}
		}
		s.Status, s.CompletedAt = events.StepStatusCompleted, &at
	case events.StepEnded:
		s.Status = d.Status
		switch d.Status {
		case events.StepStatusCancelled:
			s.CancelledAt = &at
		case events.StepStatusExpired:
			s.ExpiredAt = &at
		case events.StepStatusFailed:
			s.FailedAt = &at
			s.LastError = &LastError{Code: d.Code, Message: d.Message}
		}
	}
}

// StepKey is the document key of a run step.
func StepKey(account, threadID, runID, stepID string) string {
	return account + "." + threadID + "." + runID + "." + stepID
}

// RunSteps is the read model of run steps: "<account>.<thread_id>.<run_id>.<step_id>" -> Listed[StepView].
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
		return tx.Put(StepKey(e.Account, e.AggregateID, d.RunID, d.StepID), Listed[StepView]{Seq: e.Sequence, Obj: NewStepView(e, d)})
	case events.StepCompleted:
		runID, stepID = d.RunID, d.StepID
	case events.StepEnded:
		runID, stepID = d.RunID, d.StepID
	case events.RunToolOutputsSubmitted:
		runID, stepID = d.RunID, d.StepID
	default:
		return nil
	}
	return Modify(tx, StepKey(e.Account, e.AggregateID, runID, stepID), func(s *Listed[StepView], exists bool) error {
		if !exists {
			return ErrSkip
		}
		ApplyStep(&s.Obj, e)
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
