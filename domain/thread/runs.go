package thread

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// The names the model calls file_search and code_interpreter by: they are offered as functions the run worker
// answers.
const (
	FileSearchTool      = "file_search"
	CodeInterpreterTool = "code_interpreter"
)

// RunRef names a run for the workers that drive it (they act for the platform, not for a key).
type RunRef struct {
	Account  string
	ThreadID string
	RunID    string
	// Seq is the stream sequence of the event that handed the run to a worker: the thread as of it is enough to go
	// on. 0 (the log's latest): as the log holds it now.
	Seq uint64
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

// ToolChoiceOf reads a run's tool_choice: "auto", "none", "required", or the name of the function the model must
// call ({"type":"function","function":{"name":...}}, which must be one of the run's tools). Empty means "auto".
func ToolChoiceOf(raw json.RawMessage, tools []events.Tool) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return s, nil
		}
		return "", errs.InvalidField("tool_choice", "invalid value: '%s'. Supported values are: 'none', 'auto' and 'required', or an object naming a function", s)
	}
	var obj struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", errs.InvalidField("tool_choice", "expected a string or an object")
	}
	switch obj.Type {
	case "function":
	case "file_search":
		for _, t := range tools {
			if t.Type == "file_search" {
				return FileSearchTool, nil
			}
		}
		return "", errs.InvalidField("tool_choice.type", "the run has no file_search tool")
	case "code_interpreter":
		for _, t := range tools {
			if t.Type == "code_interpreter" {
				return CodeInterpreterTool, nil
			}
		}
		return "", errs.InvalidField("tool_choice.type", "the run has no code_interpreter tool")
	case "":
		return "", errs.Missing("tool_choice.type")
	default:
		return "", errs.InvalidField("tool_choice.type", "invalid value: '%s'. Supported values are: 'function', 'code_interpreter' and 'file_search'", obj.Type)
	}
	if obj.Function.Name == "" {
		return "", errs.Missing("tool_choice.function.name")
	}
	for _, t := range tools {
		if t.Function != nil && t.Function.Name == obj.Function.Name {
			return obj.Function.Name, nil
		}
	}
	return "", errs.InvalidField("tool_choice.function.name", "the run has no function tool named '%s'", obj.Function.Name)
}

// ActiveRun is a run that has not ended, as the index of active runs lists it.
type ActiveRun struct {
	Ref       RunRef
	Status    string
	ExpiresAt time.Time
	// Changed is when the run's status last changed.
	Changed time.Time
}
