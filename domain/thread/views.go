package thread

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/events"
)

// The views of a thread, its messages, runs and steps: what each face shows is mapped from them (the Assistants face
// maps them to its wire objects), and the read models store them. Each is folded by one function here, which the
// read models and the streaming face share, so that what a stream shows and what a later read returns agree.

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
	if _, status, ok := RunStatus(e.Event); ok {
		r.Status = status
		if !Active(status) {
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

// calls are the tool calls of a step's view.
func calls(sc []StepCall) []events.ToolCall {
	out := make([]events.ToolCall, len(sc))
	for i, c := range sc {
		out[i] = c.ToolCall
	}
	return out
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
		outputs := OutputsByCall(d)
		if len(d.ToolCalls) > 0 {
			ended := EndedCalls(calls(s.ToolCalls), d.ToolCalls)
			for i := range s.ToolCalls {
				s.ToolCalls[i].ToolCall = ended[i]
			}
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

// ThreadView is a thread as the log made it; the Assistants face maps it to its wire object.
type ThreadView struct {
	ID            string            `json:"id"`
	CreatedAt     time.Time         `json:"created_at"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	ToolResources json.RawMessage   `json:"tool_resources,omitempty"`
}

// ApplyThread folds a change of a thread into its view: the fold the read model and a read from the log share.
func ApplyThread(v *ThreadView, e events.Envelope) {
	if d, ok := e.Event.(events.ThreadModified); ok {
		v.Metadata, v.ToolResources = d.Metadata, d.ToolResources
	}
}

// NewThreadView is the thread a ThreadCreated event makes.
func NewThreadView(e events.Envelope, d events.ThreadCreated) ThreadView {
	return ThreadView{ID: e.AggregateID, CreatedAt: e.Time, Metadata: d.Metadata, ToolResources: d.ToolResources}
}

// ThreadMessageView is a thread's message as the log made it; the Assistants face maps it to its wire object. A message is
// recorded whole: its status is completed or incomplete from the start.
type ThreadMessageView struct {
	ID               string               `json:"id"`
	CreatedAt        time.Time            `json:"created_at"`
	ThreadID         string               `json:"thread_id"`
	AssistantID      string               `json:"assistant_id,omitempty"`
	RunID            string               `json:"run_id,omitempty"`
	Status           string               `json:"status"`
	IncompleteReason string               `json:"incomplete_reason,omitempty"`
	Role             string               `json:"role"`
	Content          []events.ContentPart `json:"content"`
	Attachments      json.RawMessage      `json:"attachments,omitempty"`
	Metadata         map[string]string    `json:"metadata,omitempty"`
}
