package openaiapi

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/projections"
)

// assistantObject is an assistant as the Assistants API shows it.
type assistantObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	CreatedAt      int64             `json:"created_at"`
	Name           *string           `json:"name"`
	Description    *string           `json:"description"`
	Model          string            `json:"model"`
	Instructions   *string           `json:"instructions"`
	Tools          []events.Tool     `json:"tools"`
	ToolResources  json.RawMessage   `json:"tool_resources"`
	Metadata       map[string]string `json:"metadata"`
	Temperature    float64           `json:"temperature"`
	TopP           float64           `json:"top_p"`
	ResponseFormat json.RawMessage   `json:"response_format"`
}

// assistantWire maps an assistant's view to the API's object, with the API's defaults for what was not set.
func assistantWire(v projections.AssistantView) assistantObject {
	return assistantObject{ID: v.ID, Object: "assistant", CreatedAt: v.CreatedAt.Unix(), Name: v.Name,
		Description: v.Description, Model: v.Model, Instructions: v.Instructions, Tools: toolsOrEmpty(v.Tools),
		ToolResources: orJSON(v.ToolResources, `{}`), Metadata: orEmpty(v.Metadata),
		Temperature: sampling(v.Temperature), TopP: sampling(v.TopP), ResponseFormat: orJSON(v.ResponseFormat, `"auto"`)}
}

// orJSON is raw, or def when raw is absent or null.
func orJSON(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(def)
	}
	return raw
}

// sampling is a temperature or top_p as the API shows it: 1 when not set.
func sampling(v *float64) float64 {
	if v == nil {
		return 1
	}
	return *v
}

// orEmpty is metadata as the API shows it: {} rather than null.
func orEmpty(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// toolsOrEmpty is a tool list as the API shows it: [] rather than null.
func toolsOrEmpty(t []events.Tool) []events.Tool {
	if t == nil {
		return []events.Tool{}
	}
	return t
}

// threadObject is a thread as the Assistants API shows it.
type threadObject struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	CreatedAt     int64             `json:"created_at"`
	Metadata      map[string]string `json:"metadata"`
	ToolResources json.RawMessage   `json:"tool_resources"`
}

// threadWire maps a thread's view to the API's object: empty metadata and tool resources are {}, not null.
func threadWire(v projections.ThreadView) threadObject {
	return threadObject{ID: v.ID, Object: "thread", CreatedAt: v.CreatedAt.Unix(), Metadata: orEmpty(v.Metadata),
		ToolResources: orJSON(v.ToolResources, `{}`)}
}

// runObject is a run as the Assistants API shows it.
type runObject struct {
	ID                  string                 `json:"id"`
	Object              string                 `json:"object"`
	CreatedAt           int64                  `json:"created_at"`
	AssistantID         string                 `json:"assistant_id"`
	ThreadID            string                 `json:"thread_id"`
	Status              string                 `json:"status"`
	StartedAt           *int64                 `json:"started_at"`
	ExpiresAt           *int64                 `json:"expires_at"`
	CancelledAt         *int64                 `json:"cancelled_at"`
	FailedAt            *int64                 `json:"failed_at"`
	CompletedAt         *int64                 `json:"completed_at"`
	RequiredAction      *requiredAction        `json:"required_action"`
	LastError           *projections.LastError `json:"last_error"`
	Model               string                 `json:"model"`
	Instructions        string                 `json:"instructions"`
	Tools               []events.Tool          `json:"tools"`
	Metadata            map[string]string      `json:"metadata"`
	IncompleteDetails   *incompleteDetails     `json:"incomplete_details"`
	Usage               *events.TokenUsage     `json:"usage"`
	Temperature         float64                `json:"temperature"`
	TopP                float64                `json:"top_p"`
	MaxPromptTokens     *int                   `json:"max_prompt_tokens"`
	MaxCompletionTokens *int                   `json:"max_completion_tokens"`
	TruncationStrategy  truncationObject       `json:"truncation_strategy"`
	ResponseFormat      json.RawMessage        `json:"response_format"`
	ToolChoice          json.RawMessage        `json:"tool_choice"`
	ParallelToolCalls   bool                   `json:"parallel_tool_calls"`
}

// truncationObject is a run's truncation strategy; last_messages is null unless set.
type truncationObject struct {
	Type         string `json:"type"`
	LastMessages *int   `json:"last_messages"`
}

// requiredAction is what a run in requires_action waits for.
type requiredAction struct {
	Type              string `json:"type"`
	SubmitToolOutputs struct {
		ToolCalls []requiredToolCall `json:"tool_calls"`
	} `json:"submit_tool_outputs"`
}

// requiredToolCall is a function call the client must answer.
type requiredToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// incompleteDetails says why a run stopped short.
type incompleteDetails struct {
	Reason string `json:"reason"`
}

// runWire maps a run's view to the API's object: Unix times, and the API's defaults for what the run was not given
// (sampling 1, truncation and formats "auto", empty tools and metadata).
func runWire(v projections.RunView) runObject {
	unix := func(t *time.Time) *int64 {
		if t == nil {
			return nil
		}
		u := t.Unix()
		return &u
	}
	o := runObject{
		ID: v.ID, Object: "thread.run", CreatedAt: v.CreatedAt.Unix(), AssistantID: v.AssistantID, ThreadID: v.ThreadID,
		Status: v.Status, StartedAt: unix(v.StartedAt), ExpiresAt: unix(v.ExpiresAt), CancelledAt: unix(v.CancelledAt),
		FailedAt: unix(v.FailedAt), CompletedAt: unix(v.CompletedAt), LastError: v.LastError, Model: v.Model,
		Instructions: v.Instructions, Tools: toolsOrEmpty(v.Tools), Metadata: orEmpty(v.Metadata), Usage: v.Usage,
		Temperature: sampling(v.Temperature), TopP: sampling(v.TopP),
		MaxPromptTokens: v.MaxPromptTokens, MaxCompletionTokens: v.MaxCompletionTokens,
		TruncationStrategy: truncationObject{Type: v.Truncation.Type, LastMessages: v.Truncation.LastMessages},
		ResponseFormat:     orJSON(v.ResponseFormat, `"auto"`), ToolChoice: orJSON(v.ToolChoice, `"auto"`), ParallelToolCalls: v.ParallelToolCalls,
	}
	if o.TruncationStrategy.Type == "" {
		o.TruncationStrategy.Type = "auto"
	}
	if v.IncompleteReason != "" {
		o.IncompleteDetails = &incompleteDetails{Reason: v.IncompleteReason}
	}
	if v.RequiredCalls != nil {
		a := &requiredAction{Type: "submit_tool_outputs"}
		a.SubmitToolOutputs.ToolCalls = make([]requiredToolCall, 0, len(v.RequiredCalls))
		for _, c := range v.RequiredCalls {
			call := requiredToolCall{ID: c.ID, Type: "function"}
			call.Function.Name, call.Function.Arguments = c.Name, c.Arguments
			a.SubmitToolOutputs.ToolCalls = append(a.SubmitToolOutputs.ToolCalls, call)
		}
		o.RequiredAction = a
	}
	return o
}
