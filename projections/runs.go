package projections

import (
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

// RunOf names the run an event of a thread concerns, or "" when it concerns none.
func RunOf(ev events.Event) string {
	switch d := ev.(type) {
	case events.RunCreated:
		return d.RunID
	case events.RunStarted:
		return d.RunID
	case events.RunRequiresAction:
		return d.RunID
	case events.RunToolOutputsSubmitted:
		return d.RunID
	case events.RunCompleted:
		return d.RunID
	case events.RunIncomplete:
		return d.RunID
	case events.RunFailed:
		return d.RunID
	case events.RunCancelling:
		return d.RunID
	case events.RunCancelled:
		return d.RunID
	case events.RunExpired:
		return d.RunID
	case events.RunModified:
		return d.RunID
	case events.StepCreated:
		return d.RunID
	case events.StepCompleted:
		return d.RunID
	case events.StepEnded:
		return d.RunID
	case events.MessageCreated:
		return d.RunID
	}
	return ""
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
	runID := RunOf(e.Event)
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

// RunStepObject is a run step as the API shows it.
type RunStepObject struct {
	ID          string             `json:"id"`
	Object      string             `json:"object"`
	CreatedAt   int64              `json:"created_at"`
	RunID       string             `json:"run_id"`
	AssistantID string             `json:"assistant_id"`
	ThreadID    string             `json:"thread_id"`
	Type        string             `json:"type"`
	Status      string             `json:"status"`
	CancelledAt *int64             `json:"cancelled_at"`
	CompletedAt *int64             `json:"completed_at"`
	ExpiredAt   *int64             `json:"expired_at"`
	FailedAt    *int64             `json:"failed_at"`
	LastError   *LastError         `json:"last_error"`
	StepDetails StepDetails        `json:"step_details"`
	Usage       *events.TokenUsage `json:"usage"`
	Metadata    map[string]string  `json:"metadata"`
}

// StepDetails is what a step did: the message it created, or the tool calls it made.
type StepDetails struct {
	Type            string                  `json:"type"`
	MessageCreation *MessageCreationDetails `json:"message_creation,omitempty"`
	ToolCalls       []StepToolCall          `json:"tool_calls,omitempty"`
}

// MarshalJSON shows a tool-calls step's list even when it is empty, as OpenAI does.
func (d StepDetails) MarshalJSON() ([]byte, error) {
	if d.Type == events.StepTypeToolCalls {
		calls := d.ToolCalls
		if calls == nil {
			calls = []StepToolCall{}
		}
		return json.Marshal(struct {
			Type      string         `json:"type"`
			ToolCalls []StepToolCall `json:"tool_calls"`
		}{d.Type, calls})
	}
	type plain StepDetails
	return json.Marshal(plain(d))
}

// MessageCreationDetails names the message a step created.
type MessageCreationDetails struct {
	MessageID string `json:"message_id"`
}

// StepToolCall is a tool call in a step, with its output once submitted.
type StepToolCall struct {
	ID         string            `json:"id"`
	Type       string            `json:"type"`
	Function   *StepFunctionCall `json:"function,omitempty"`
	FileSearch *StepFileSearch   `json:"file_search,omitempty"`
	// CodeInterpreter is a code_interpreter call: the code and its outputs.
	CodeInterpreter *StepCodeInterpreter `json:"code_interpreter,omitempty"`
}

// StepCodeInterpreter is OpenAI's code_interpreter call: input, and outputs of type logs or image.
type StepCodeInterpreter struct {
	Input   string           `json:"input"`
	Outputs []StepCodeOutput `json:"outputs"`
}

// StepCodeOutput is {"type": "logs", "logs": ...} or {"type": "image", "image": {"file_id": ...}}.
type StepCodeOutput struct {
	Type  string `json:"type"`
	Logs  string `json:"logs,omitempty"`
	Image *struct {
		FileID string `json:"file_id"`
	} `json:"image,omitempty"`
}

// StepFileSearch is a file_search call: its ranking and what it found.
type StepFileSearch struct {
	RankingOptions struct {
		Ranker         string  `json:"ranker"`
		ScoreThreshold float64 `json:"score_threshold"`
	} `json:"ranking_options"`
	Results []StepFileSearchResult `json:"results"`
}

// StepFileSearchResult is a chunk a file_search call found (its content is shown only when asked for, as
// OpenAI's include[] does; Contrail always shows it).
type StepFileSearchResult struct {
	FileID   string              `json:"file_id"`
	FileName string              `json:"file_name"`
	Score    float64             `json:"score"`
	Content  []StepSearchContent `json:"content"`
}

// StepSearchContent is the text of a chunk found.
type StepSearchContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// stepToolCall renders a recorded tool call.
func stepToolCall(c events.ToolCall) StepToolCall {
	if c.Type == "file_search" && c.FileSearch != nil {
		fs := &StepFileSearch{Results: make([]StepFileSearchResult, 0, len(c.FileSearch.Results))}
		fs.RankingOptions.Ranker, fs.RankingOptions.ScoreThreshold = c.FileSearch.Ranker, c.FileSearch.ScoreThreshold
		for _, r := range c.FileSearch.Results {
			fs.Results = append(fs.Results, StepFileSearchResult{FileID: r.FileID, FileName: r.FileName, Score: r.Score,
				Content: []StepSearchContent{{Type: "text", Text: r.Text}}})
		}
		return StepToolCall{ID: c.ID, Type: "file_search", FileSearch: fs}
	}
	if c.Type == "code_interpreter" && c.CodeInterpreter != nil {
		ci := &StepCodeInterpreter{Input: c.CodeInterpreter.Input, Outputs: make([]StepCodeOutput, 0, len(c.CodeInterpreter.Outputs))}
		for _, o := range c.CodeInterpreter.Outputs {
			out := StepCodeOutput{Type: o.Type, Logs: o.Logs}
			if o.Type == "image" {
				out.Image = &struct {
					FileID string `json:"file_id"`
				}{o.FileID}
			}
			ci.Outputs = append(ci.Outputs, out)
		}
		return StepToolCall{ID: c.ID, Type: "code_interpreter", CodeInterpreter: ci}
	}
	return StepToolCall{ID: c.ID, Type: "function", Function: &StepFunctionCall{Name: c.Name, Arguments: c.Arguments}}
}

// StepFunctionCall is a function call and its output (null until the client submits it).
type StepFunctionCall struct {
	Name      string  `json:"name"`
	Arguments string  `json:"arguments"`
	Output    *string `json:"output"`
}

// StepDoc is a step's document: the object, when it was created, and the usage of its model call, which the
// object shows only once the step is no longer in progress.
type StepDoc struct {
	Seq   uint64             `json:"seq"`
	Obj   RunStepObject      `json:"obj"`
	Usage *events.TokenUsage `json:"usage,omitempty"`
}

// NewStepDoc is the step a StepCreated event makes.
func NewStepDoc(e events.Envelope, d events.StepCreated) StepDoc {
	s := RunStepObject{ID: d.StepID, Object: "thread.run.step", CreatedAt: e.Time.Unix(), RunID: d.RunID,
		AssistantID: d.AssistantID, ThreadID: e.AggregateID, Type: d.Type, Status: events.StepStatusInProgress,
		StepDetails: StepDetails{Type: d.Type}, Metadata: map[string]string{}}
	switch d.Type {
	case events.StepTypeMessageCreation:
		s.StepDetails.MessageCreation = &MessageCreationDetails{MessageID: d.MessageID}
	case events.StepTypeToolCalls:
		s.StepDetails.ToolCalls = make([]StepToolCall, 0, len(d.ToolCalls))
		for _, c := range d.ToolCalls {
			s.StepDetails.ToolCalls = append(s.StepDetails.ToolCalls, stepToolCall(c))
		}
	}
	return StepDoc{Seq: e.Sequence, Obj: s, Usage: d.Usage}
}

// ApplyStep folds an event that ends a step into its document. (StepCreated makes the document: NewStepDoc.)
func ApplyStep(s *StepDoc, e events.Envelope) {
	at := e.Time.Unix()
	switch d := e.Event.(type) {
	case events.StepCompleted:
		s.Obj.Status, s.Obj.CompletedAt, s.Obj.Usage = events.StepStatusCompleted, &at, s.usage()
	case events.RunToolOutputsSubmitted:
		outputs := make(map[string]string, len(d.Outputs))
		for _, o := range d.Outputs {
			outputs[o.ToolCallID] = o.Output
		}
		for i, c := range s.Obj.StepDetails.ToolCalls {
			if out, ok := outputs[c.ID]; ok && c.Function != nil {
				s.Obj.StepDetails.ToolCalls[i].Function.Output = &out
			}
		}
		s.Obj.Status, s.Obj.CompletedAt, s.Obj.Usage = events.StepStatusCompleted, &at, s.usage()
	case events.StepEnded:
		s.Obj.Status, s.Obj.Usage = d.Status, s.usage()
		switch d.Status {
		case events.StepStatusCancelled:
			s.Obj.CancelledAt = &at
		case events.StepStatusExpired:
			s.Obj.ExpiredAt = &at
		case events.StepStatusFailed:
			s.Obj.FailedAt = &at
			s.Obj.LastError = &LastError{Code: d.Code, Message: d.Message}
		}
	}
}

func (s *StepDoc) usage() *events.TokenUsage {
	if s.Usage == nil {
		return &events.TokenUsage{}
	}
	u := *s.Usage
	return &u
}

// StepKey is the document key of a run step.
func StepKey(account, threadID, runID, stepID string) string {
	return account + "." + threadID + "." + runID + "." + stepID
}

// RunSteps is the read model of run steps: "<account>.<thread_id>.<run_id>.<step_id>" -> StepDoc.
type RunSteps struct{}

// Name implements Projection.
func (RunSteps) Name() string { return "run_steps" }

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
		return tx.Put(StepKey(e.Account, e.AggregateID, d.RunID, d.StepID), NewStepDoc(e, d))
	case events.StepCompleted:
		runID, stepID = d.RunID, d.StepID
	case events.StepEnded:
		runID, stepID = d.RunID, d.StepID
	case events.RunToolOutputsSubmitted:
		runID, stepID = d.RunID, d.StepID
	default:
		return nil
	}
	return Modify(tx, StepKey(e.Account, e.AggregateID, runID, stepID), func(s *StepDoc, exists bool) error {
		if !exists {
			return ErrSkip
		}
		ApplyStep(s, e)
		return nil
	})
}
