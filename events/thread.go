package events

import "encoding/json"

// Thread events (the OpenAI Assistants API). A thread is one aggregate with everything that happens in it: its
// messages, and its runs with their steps (events/run.go). The thread is the consistency boundary the API needs:
// only one run of a thread may be active, a thread with an active run takes no new messages, and a run's messages
// and steps come in the order the run made them. One optimistic-concurrency check over the thread's subjects
// guards all of that.

// ThreadCreated opens a thread. Its first messages follow as MessageCreated events.
type ThreadCreated struct {
	Metadata      map[string]string `json:"metadata,omitempty"`
	ToolResources json.RawMessage   `json:"tool_resources,omitempty"`
}

func (ThreadCreated) EventType() string { return "thread.created" }

// ThreadModified replaces the thread's metadata and tool resources with their values after the change.
type ThreadModified struct {
	Metadata      map[string]string `json:"metadata,omitempty"`
	ToolResources json.RawMessage   `json:"tool_resources,omitempty"`
}

func (ThreadModified) EventType() string { return "thread.modified" }

// ThreadDeleted deletes a thread with its messages and runs. A run still active is cancelled first (its own events
// come before this one).
type ThreadDeleted struct{}

func (ThreadDeleted) EventType() string { return "thread.deleted" }

// ContentPart is one part of a message's content, in OpenAI's input terms: text, or an image by file or URL.
type ContentPart struct {
	Type      string     `json:"type"` // "text", "image_file", "image_url"
	Text      string     `json:"text,omitempty"`
	ImageFile *ImageFile `json:"image_file,omitempty"`
	ImageURL  *ImageURL  `json:"image_url,omitempty"`
	// Annotations are a text's citations of files (file_search).
	Annotations []Annotation `json:"annotations,omitempty"`
}

// Annotation is a citation in a text: Text is the marker, from StartIndex to EndIndex (in characters), citing
// FileID.
type Annotation struct {
	Type       string `json:"type"` // "file_citation" or "file_path"
	Text       string `json:"text"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
	FileID     string `json:"file_id"`
}

// ImageFile is an image uploaded as a file.
type ImageFile struct {
	FileID string `json:"file_id"`
	Detail string `json:"detail,omitempty"`
}

// ImageURL is an image on the web.
type ImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// TokenUsage counts the tokens of a model call, or of a whole run.
type TokenUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Add sums two usages.
func (u TokenUsage) Add(o TokenUsage) TokenUsage {
	return TokenUsage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
	}
}

// Message statuses.
const (
	MessageStatusCompleted  = "completed"
	MessageStatusIncomplete = "incomplete"
)

// MessageCreated adds a message to the thread. A user's message is complete when it is created; an assistant's
// message is appended only once the model's answer is whole, so that a crash in the middle of a model call leaves
// no half message behind (the call is made again). An assistant message carries the step that made it and the
// usage of the model call, so that the rest of its turn can be recorded from the log alone after a crash.
type MessageCreated struct {
	MessageID   string            `json:"message_id"`
	Role        string            `json:"role"` // "user" or "assistant"
	Content     []ContentPart     `json:"content"`
	Attachments json.RawMessage   `json:"attachments,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	AssistantID string            `json:"assistant_id,omitempty"`
	RunID       string            `json:"run_id,omitempty"`
	// Status is "completed" or "incomplete" (an answer cut short by a token limit).
	Status string `json:"status"`
	// IncompleteReason says why an incomplete message stopped ("max_tokens").
	IncompleteReason string      `json:"incomplete_reason,omitempty"`
	StepID           string      `json:"step_id,omitempty"`
	Usage            *TokenUsage `json:"usage,omitempty"`
}

func (MessageCreated) EventType() string { return "thread.message_created" }

// MessageModified replaces a message's metadata.
type MessageModified struct {
	MessageID string            `json:"message_id"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

func (MessageModified) EventType() string { return "thread.message_modified" }

// MessageDeleted removes a message from the thread.
type MessageDeleted struct {
	MessageID string `json:"message_id"`
}

func (MessageDeleted) EventType() string { return "thread.message_deleted" }

func threadEvents() []Event {
	return []Event{ThreadCreated{}, ThreadModified{}, ThreadDeleted{}, MessageCreated{}, MessageModified{}, MessageDeleted{}}
}
