package events

import (
	"encoding/json"
	"time"
)

// Run events: the runs of a thread and their steps. They are events of the thread aggregate (see events/thread.go),
// named thread.run_* and thread.run_step_*, so that one check orders them with the thread's messages.
//
// A run's status moves queued -> in_progress -> completed | requires_action | failed | incomplete, requires_action
// -> queued (tool outputs submitted), any active status -> cancelling -> cancelled, and any active status ->
// expired. Every change is one event below.

// Run statuses, as OpenAI names them.
const (
	RunStatusQueued         = "queued"
	RunStatusInProgress     = "in_progress"
	RunStatusRequiresAction = "requires_action"
	RunStatusCancelling     = "cancelling"
	RunStatusCancelled      = "cancelled"
	RunStatusFailed         = "failed"
	RunStatusCompleted      = "completed"
	RunStatusIncomplete     = "incomplete"
	RunStatusExpired        = "expired"
)

// Step types and statuses.
const (
	StepTypeMessageCreation = "message_creation"
	StepTypeToolCalls       = "tool_calls"

	StepStatusInProgress = "in_progress"
	StepStatusCompleted  = "completed"
	StepStatusCancelled  = "cancelled"
	StepStatusFailed     = "failed"
	StepStatusExpired    = "expired"
)

// Truncation is a run's truncation strategy: "auto", or "last_messages" with how many.
type Truncation struct {
	Type         string `json:"type"`
	LastMessages *int   `json:"last_messages,omitempty"`
}

// ToolCall is a function call the model made, and once submitted, its output.
type ToolCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"` // "function", "file_search" or "code_interpreter"
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// FileSearch is what a file_search call found (the run worker runs it; no client is asked).
	FileSearch *FileSearchCall `json:"file_search,omitempty"`
	// CodeInterpreter is a code_interpreter call's code and what it gave (run in the sandbox by the run worker).
	CodeInterpreter *CodeInterpreterCall `json:"code_interpreter,omitempty"`
}

// CodeInterpreterCall is the code a code_interpreter call ran and its outputs, OpenAI's: "logs" (what it printed)
// and "image" (an image it wrote, kept as a file).
type CodeInterpreterCall struct {
	Input   string       `json:"input"`
	Outputs []CodeOutput `json:"outputs"`
	// Files are the other files the code wrote, by their path in the sandbox: the answer's file_path annotations.
	Files []CodeFile `json:"files,omitempty"`
}

// CodeFile is a file code wrote, saved as FileID.
type CodeFile struct {
	Path   string `json:"path"`
	FileID string `json:"file_id"`
}

// CodeOutput is one output of a code_interpreter call: Logs for "logs", FileID for "image".
type CodeOutput struct {
	Type   string `json:"type"`
	Logs   string `json:"logs,omitempty"`
	FileID string `json:"file_id,omitempty"`
}

// FileSearchCall is a file_search call's ranking and the chunks it found, in order: the model cites them as
// 【<call>:<index>†<file name>】.
type FileSearchCall struct {
	Ranker         string             `json:"ranker"`
	ScoreThreshold float64            `json:"score_threshold"`
	Results        []FileSearchResult `json:"results"`
}

// FileSearchResult is a chunk a file_search call found.
type FileSearchResult struct {
	FileID   string  `json:"file_id"`
	FileName string  `json:"file_name"`
	Score    float64 `json:"score"`
	Text     string  `json:"text"`
}

// ToolOutput is a client's answer to one tool call.
type ToolOutput struct {
	ToolCallID string `json:"tool_call_id"`
	Output     string `json:"output"`
}

// RunCreated queues a run with the settings it will use: the assistant's, overridden by the request. The
// instructions are the effective ones (with additional instructions appended).
type RunCreated struct {
	RunID               string            `json:"run_id"`
	AssistantID         string            `json:"assistant_id"`
	Model               string            `json:"model"`
	Instructions        string            `json:"instructions"`
	Tools               []Tool            `json:"tools,omitempty"`
	ToolChoice          json.RawMessage   `json:"tool_choice,omitempty"`
	ParallelToolCalls   bool              `json:"parallel_tool_calls"`
	ResponseFormat      json.RawMessage   `json:"response_format,omitempty"`
	Temperature         *float64          `json:"temperature,omitempty"`
	TopP                *float64          `json:"top_p,omitempty"`
	MaxPromptTokens     *int              `json:"max_prompt_tokens,omitempty"`
	MaxCompletionTokens *int              `json:"max_completion_tokens,omitempty"`
	Truncation          Truncation        `json:"truncation_strategy"`
	Metadata            map[string]string `json:"metadata,omitempty"`
	ReasoningEffort     string            `json:"reasoning_effort,omitempty"`
	ExpiresAt           time.Time         `json:"expires_at"`
}

func (RunCreated) EventType() string { return "thread.run_created" }

// RunStarted puts a queued run in progress: a worker took it and asks the model. Its ID names the model call (the
// "turn"): the IDs of what the turn records derive from it, so a turn redone after a crash records nothing twice.
type RunStarted struct {
	RunID string `json:"run_id"`
}

func (RunStarted) EventType() string { return "thread.run_started" }

// RunRequiresAction stops a run until the client submits the outputs of the tool calls the model made.
type RunRequiresAction struct {
	RunID     string     `json:"run_id"`
	StepID    string     `json:"step_id"`
	ToolCalls []ToolCall `json:"tool_calls"`
}

func (RunRequiresAction) EventType() string { return "thread.run_requires_action" }

// RunToolOutputsSubmitted records the client's outputs: the waiting tool-calls step is completed with them and the
// run is queued again.
type RunToolOutputsSubmitted struct {
	RunID   string       `json:"run_id"`
	StepID  string       `json:"step_id"`
	Outputs []ToolOutput `json:"tool_outputs"`
	// ToolCalls, for server tools whose step was recorded in progress before they ran (code_interpreter), are the
	// step's calls as they ended, with what each gave: they replace the step's calls of the same IDs.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

func (RunToolOutputsSubmitted) EventType() string { return "thread.run_tool_outputs_submitted" }

// RunCompleted ends a run with the model's answer recorded. Usage sums the run's model calls.
type RunCompleted struct {
	RunID string     `json:"run_id"`
	Usage TokenUsage `json:"usage"`
}

func (RunCompleted) EventType() string { return "thread.run_completed" }

// RunIncomplete ends a run that hit a token limit; Reason is "max_prompt_tokens" or "max_completion_tokens".
type RunIncomplete struct {
	RunID  string     `json:"run_id"`
	Reason string     `json:"reason"`
	Usage  TokenUsage `json:"usage"`
}

func (RunIncomplete) EventType() string { return "thread.run_incomplete" }

// RunFailed ends a run that could not finish; Code is "server_error", "rate_limit_exceeded" or "invalid_prompt".
type RunFailed struct {
	RunID   string     `json:"run_id"`
	Code    string     `json:"code"`
	Message string     `json:"message"`
	Usage   TokenUsage `json:"usage"`
}

func (RunFailed) EventType() string { return "thread.run_failed" }

// RunCancelling asks an active run to stop: its status becomes "cancelling" until a worker cancels it.
type RunCancelling struct {
	RunID string `json:"run_id"`
}

func (RunCancelling) EventType() string { return "thread.run_cancelling" }

// RunCancelled ends a cancelled run.
type RunCancelled struct {
	RunID string     `json:"run_id"`
	Usage TokenUsage `json:"usage"`
}

func (RunCancelled) EventType() string { return "thread.run_cancelled" }

// RunExpired ends a run that outlived its expires_at.
type RunExpired struct {
	RunID string     `json:"run_id"`
	Usage TokenUsage `json:"usage"`
}

func (RunExpired) EventType() string { return "thread.run_expired" }

// RunModified replaces a run's metadata.
type RunModified struct {
	RunID    string            `json:"run_id"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (RunModified) EventType() string { return "thread.run_modified" }

// StepCreated records a step of a run: a message the model wrote (MessageID) or the tool calls it made. Usage is
// the model call's.
type StepCreated struct {
	StepID      string      `json:"step_id"`
	RunID       string      `json:"run_id"`
	AssistantID string      `json:"assistant_id,omitempty"`
	Type        string      `json:"type"` // "message_creation" or "tool_calls"
	MessageID   string      `json:"message_id,omitempty"`
	ToolCalls   []ToolCall  `json:"tool_calls,omitempty"`
	Usage       *TokenUsage `json:"usage,omitempty"`
	// Completed records a message-creation step whose message is already whole: made completed, with no
	// StepCompleted after it (an event less per turn; steps recorded before it existed are completed by one).
	Completed bool `json:"completed,omitempty"`
}

func (StepCreated) EventType() string { return "thread.run_step_created" }

// StepCompleted completes a message-creation step. (A tool-calls step completes with the tool outputs.)
type StepCompleted struct {
	StepID string `json:"step_id"`
	RunID  string `json:"run_id"`
}

func (StepCompleted) EventType() string { return "thread.run_step_completed" }

// StepEnded ends a step that did not complete, with its run: Status is "cancelled", "failed" or "expired".
type StepEnded struct {
	StepID  string `json:"step_id"`
	RunID   string `json:"run_id"`
	Status  string `json:"status"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

func (StepEnded) EventType() string { return "thread.run_step_ended" }

func runEvents() []Event {
	return []Event{
		RunCreated{}, RunStarted{}, RunRequiresAction{}, RunToolOutputsSubmitted{}, RunCompleted{}, RunIncomplete{},
		RunFailed{}, RunCancelling{}, RunCancelled{}, RunExpired{}, RunModified{},
		StepCreated{}, StepCompleted{}, StepEnded{},
	}
}
