package openaiapi

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
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
func threadWire(v thread.ThreadView) threadObject {
	return threadObject{ID: v.ID, Object: "thread", CreatedAt: v.CreatedAt.Unix(), Metadata: orEmpty(v.Metadata),
		ToolResources: orJSON(v.ToolResources, `{}`)}
}

// runObject is a run as the Assistants API shows it.
type runObject struct {
	ID                  string             `json:"id"`
	Object              string             `json:"object"`
	CreatedAt           int64              `json:"created_at"`
	AssistantID         string             `json:"assistant_id"`
	ThreadID            string             `json:"thread_id"`
	Status              string             `json:"status"`
	StartedAt           *int64             `json:"started_at"`
	ExpiresAt           *int64             `json:"expires_at"`
	CancelledAt         *int64             `json:"cancelled_at"`
	FailedAt            *int64             `json:"failed_at"`
	CompletedAt         *int64             `json:"completed_at"`
	RequiredAction      *requiredAction    `json:"required_action"`
	LastError           *thread.LastError  `json:"last_error"`
	Model               string             `json:"model"`
	Instructions        string             `json:"instructions"`
	Tools               []events.Tool      `json:"tools"`
	Metadata            map[string]string  `json:"metadata"`
	IncompleteDetails   *incompleteDetails `json:"incomplete_details"`
	Usage               *events.TokenUsage `json:"usage"`
	Temperature         float64            `json:"temperature"`
	TopP                float64            `json:"top_p"`
	MaxPromptTokens     *int               `json:"max_prompt_tokens"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	TruncationStrategy  truncationObject   `json:"truncation_strategy"`
	ResponseFormat      json.RawMessage    `json:"response_format"`
	ToolChoice          json.RawMessage    `json:"tool_choice"`
	ParallelToolCalls   bool               `json:"parallel_tool_calls"`
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
func runWire(v thread.RunView) runObject {
	o := runObject{
		ID: v.ID, Object: "thread.run", CreatedAt: v.CreatedAt.Unix(), AssistantID: v.AssistantID, ThreadID: v.ThreadID,
		Status: v.Status, StartedAt: unixOrNil(v.StartedAt), ExpiresAt: unixOrNil(v.ExpiresAt), CancelledAt: unixOrNil(v.CancelledAt),
		FailedAt: unixOrNil(v.FailedAt), CompletedAt: unixOrNil(v.CompletedAt), LastError: v.LastError, Model: v.Model,
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

// fileObject is an uploaded file as the Assistants API shows it.
type fileObject struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Bytes         int64   `json:"bytes"`
	CreatedAt     int64   `json:"created_at"`
	ExpiresAt     *int64  `json:"expires_at"`
	Filename      string  `json:"filename"`
	Purpose       string  `json:"purpose"`
	Status        string  `json:"status"`
	StatusDetails *string `json:"status_details"`
}

// fileWire maps a file's view to the API's object: a stored file is "processed" as soon as it is, and never expires.
func fileWire(v projections.FileView) fileObject {
	return fileObject{ID: v.ID, Object: "file", Bytes: v.Bytes, CreatedAt: v.CreatedAt.Unix(), Filename: v.Filename,
		Purpose: v.Purpose, Status: "processed"}
}

// messageObject is a thread's message as the Assistants API shows it.
type messageObject struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	AssistantID       *string            `json:"assistant_id"`
	ThreadID          string             `json:"thread_id"`
	RunID             *string            `json:"run_id"`
	Status            string             `json:"status"`
	IncompleteDetails *incompleteDetails `json:"incomplete_details"`
	CompletedAt       *int64             `json:"completed_at"`
	IncompleteAt      *int64             `json:"incomplete_at"`
	Role              string             `json:"role"`
	Content           []messageContent   `json:"content"`
	Attachments       json.RawMessage    `json:"attachments"`
	Metadata          map[string]string  `json:"metadata"`
}

// messageContent is one part of a message's content.
type messageContent struct {
	Type      string            `json:"type"`
	Text      *textContent      `json:"text,omitempty"`
	ImageFile *events.ImageFile `json:"image_file,omitempty"`
	ImageURL  *events.ImageURL  `json:"image_url,omitempty"`
}

// textContent is text with its annotations (file citations; the list is always there).
type textContent struct {
	Value       string            `json:"value"`
	Annotations []json.RawMessage `json:"annotations"`
}

// messageWire maps a message's view to the API's object. A completed message completed when it was recorded, an
// incomplete one stopped then; a message still streaming (status in_progress) has neither time.
func messageWire(v thread.ThreadMessageView) messageObject {
	at := v.CreatedAt.Unix()
	m := messageObject{ID: v.ID, Object: "thread.message", CreatedAt: at, AssistantID: optional(v.AssistantID),
		ThreadID: v.ThreadID, RunID: optional(v.RunID), Status: v.Status, Role: v.Role,
		Content: messageContents(v.Content), Attachments: orJSON(v.Attachments, `[]`), Metadata: orEmpty(v.Metadata)}
	switch v.Status {
	case events.MessageStatusIncomplete:
		m.IncompleteAt, m.IncompleteDetails = &at, &incompleteDetails{Reason: v.IncompleteReason}
	case messageInProgress:
	default:
		m.CompletedAt = &at
	}
	return m
}

// messageInProgress is the status of a message the stream shows before the log records it.
const messageInProgress = "in_progress"

// messageContents maps stored content parts to the API's.
func messageContents(parts []events.ContentPart) []messageContent {
	out := make([]messageContent, 0, len(parts))
	for _, p := range parts {
		c := messageContent{Type: p.Type, ImageFile: p.ImageFile, ImageURL: p.ImageURL}
		if p.Type == "text" {
			c.Text = &textContent{Value: p.Text, Annotations: make([]json.RawMessage, 0, len(p.Annotations))}
			for _, a := range p.Annotations {
				c.Text.Annotations = append(c.Text.Annotations, annotation(a))
			}
		}
		out = append(out, c)
	}
	return out
}

// annotation maps an annotation to OpenAI's file_citation or file_path object.
func annotation(a events.Annotation) json.RawMessage {
	raw, _ := json.Marshal(map[string]any{"type": a.Type, "text": a.Text, "start_index": a.StartIndex,
		"end_index": a.EndIndex, a.Type: map[string]string{"file_id": a.FileID}})
	return raw
}

// optional is s, or null when empty.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// runStepObject is a run step as the Assistants API shows it.
type runStepObject struct {
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
	LastError   *thread.LastError  `json:"last_error"`
	StepDetails stepDetails        `json:"step_details"`
	Usage       *events.TokenUsage `json:"usage"`
	Metadata    map[string]string  `json:"metadata"`
}

// stepDetails is what a step did: the message it created, or the tool calls it made.
type stepDetails struct {
	Type            string                  `json:"type"`
	MessageCreation *messageCreationDetails `json:"message_creation,omitempty"`
	ToolCalls       []stepToolCall          `json:"tool_calls,omitempty"`
}

// MarshalJSON shows a tool-calls step's list even when it is empty, as OpenAI does.
func (d stepDetails) MarshalJSON() ([]byte, error) {
	if d.Type == events.StepTypeToolCalls {
		calls := d.ToolCalls
		if calls == nil {
			calls = []stepToolCall{}
		}
		return json.Marshal(struct {
			Type      string         `json:"type"`
			ToolCalls []stepToolCall `json:"tool_calls"`
		}{d.Type, calls})
	}
	type plain stepDetails
	return json.Marshal(plain(d))
}

// messageCreationDetails names the message a step created.
type messageCreationDetails struct {
	MessageID string `json:"message_id"`
}

// stepToolCall is a tool call in a step, with its output once submitted.
type stepToolCall struct {
	ID              string               `json:"id"`
	Type            string               `json:"type"`
	Function        *stepFunctionCall    `json:"function,omitempty"`
	FileSearch      *stepFileSearch      `json:"file_search,omitempty"`
	CodeInterpreter *stepCodeInterpreter `json:"code_interpreter,omitempty"`
}

// stepFunctionCall is a function call and its output (null until the client submits it).
type stepFunctionCall struct {
	Name      string  `json:"name"`
	Arguments string  `json:"arguments"`
	Output    *string `json:"output"`
}

// stepCodeInterpreter is OpenAI's code_interpreter call: input, and outputs of type logs or image.
type stepCodeInterpreter struct {
	Input   string           `json:"input"`
	Outputs []stepCodeOutput `json:"outputs"`
}

// stepCodeOutput is {"type": "logs", "logs": ...} or {"type": "image", "image": {"file_id": ...}}.
type stepCodeOutput struct {
	Type  string     `json:"type"`
	Logs  string     `json:"logs,omitempty"`
	Image *fileIDRef `json:"image,omitempty"`
}

// fileIDRef is {"file_id": ...}.
type fileIDRef struct {
	FileID string `json:"file_id"`
}

// stepFileSearch is a file_search call: its ranking and what it found.
type stepFileSearch struct {
	RankingOptions struct {
		Ranker         string  `json:"ranker"`
		ScoreThreshold float64 `json:"score_threshold"`
	} `json:"ranking_options"`
	Results []stepFileSearchResult `json:"results"`
}

// stepFileSearchResult is a chunk a file_search call found (its content is shown only when asked for, as
// OpenAI's include[] does; Contrail always shows it).
type stepFileSearchResult struct {
	FileID   string              `json:"file_id"`
	FileName string              `json:"file_name"`
	Score    float64             `json:"score"`
	Content  []stepSearchContent `json:"content"`
}

// stepSearchContent is the text of a chunk found.
type stepSearchContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// stepWire maps a step's view to the API's object: Unix times, empty metadata, and the usage of its model call
// once the step is no longer in progress.
func stepWire(v thread.StepView) runStepObject {
	o := runStepObject{ID: v.ID, Object: "thread.run.step", CreatedAt: v.CreatedAt.Unix(), RunID: v.RunID,
		AssistantID: v.AssistantID, ThreadID: v.ThreadID, Type: v.Type, Status: v.Status,
		CancelledAt: unixOrNil(v.CancelledAt), CompletedAt: unixOrNil(v.CompletedAt), ExpiredAt: unixOrNil(v.ExpiredAt),
		FailedAt: unixOrNil(v.FailedAt), LastError: v.LastError, StepDetails: stepDetails{Type: v.Type},
		Metadata: map[string]string{}}
	switch v.Type {
	case events.StepTypeMessageCreation:
		o.StepDetails.MessageCreation = &messageCreationDetails{MessageID: v.MessageID}
	case events.StepTypeToolCalls:
		o.StepDetails.ToolCalls = make([]stepToolCall, 0, len(v.ToolCalls))
		for _, c := range v.ToolCalls {
			o.StepDetails.ToolCalls = append(o.StepDetails.ToolCalls, stepCallWire(c))
		}
	}
	if v.Status != events.StepStatusInProgress {
		o.Usage = &events.TokenUsage{}
		if v.Usage != nil {
			*o.Usage = *v.Usage
		}
	}
	return o
}

// stepCallWire maps a recorded tool call: a file_search or code_interpreter call with what it gave, else a function
// call with its output once submitted.
func stepCallWire(c thread.StepCall) stepToolCall {
	if c.Type == "file_search" && c.FileSearch != nil {
		fs := &stepFileSearch{Results: make([]stepFileSearchResult, 0, len(c.FileSearch.Results))}
		fs.RankingOptions.Ranker, fs.RankingOptions.ScoreThreshold = c.FileSearch.Ranker, c.FileSearch.ScoreThreshold
		for _, r := range c.FileSearch.Results {
			fs.Results = append(fs.Results, stepFileSearchResult{FileID: r.FileID, FileName: r.FileName, Score: r.Score,
				Content: []stepSearchContent{{Type: "text", Text: r.Text}}})
		}
		return stepToolCall{ID: c.ID, Type: "file_search", FileSearch: fs}
	}
	if c.Type == "code_interpreter" && c.CodeInterpreter != nil {
		ci := &stepCodeInterpreter{Input: c.CodeInterpreter.Input, Outputs: make([]stepCodeOutput, 0, len(c.CodeInterpreter.Outputs))}
		for _, o := range c.CodeInterpreter.Outputs {
			out := stepCodeOutput{Type: o.Type, Logs: o.Logs}
			if o.Type == "image" {
				out.Image = &fileIDRef{FileID: o.FileID}
			}
			ci.Outputs = append(ci.Outputs, out)
		}
		return stepToolCall{ID: c.ID, Type: "code_interpreter", CodeInterpreter: ci}
	}
	return stepToolCall{ID: c.ID, Type: "function", Function: &stepFunctionCall{Name: c.Name, Arguments: c.Arguments,
		Output: c.Output}}
}

// unixOrNil is a time in Unix seconds, or null.
func unixOrNil(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	u := t.Unix()
	return &u
}
