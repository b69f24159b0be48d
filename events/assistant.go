package events

import "encoding/json"

// Assistant events (the OpenAI Assistants API). An assistant is a model with instructions and tools; runs read its
// settings when they are created.

// Tool is a tool an assistant or a run offers the model. Its JSON is OpenAI's tool object, so it is stored and
// shown as clients send it: {"type":"function","function":{"name":...,"description":...,"parameters":{...}}}.
type Tool struct {
	Type     string       `json:"type"`
	Function *FunctionDef `json:"function,omitempty"`
	// FileSearch are a file_search tool's options.
	FileSearch *FileSearchOptions `json:"file_search,omitempty"`
}

// FileSearchOptions bound what a file_search call gives the model: at most MaxNumResults chunks (default 20),
// none scoring under ScoreThreshold.
type FileSearchOptions struct {
	MaxNumResults  int             `json:"max_num_results,omitempty"`
	RankingOptions *RankingOptions `json:"ranking_options,omitempty"`
}

// RankingOptions are OpenAI's: the ranker ("auto", "default_2024_08_21") and a score threshold from 0 to 1.
type RankingOptions struct {
	Ranker         string  `json:"ranker,omitempty"`
	ScoreThreshold float64 `json:"score_threshold"`
}

// FunctionDef describes a function the model may call.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // a JSON schema
	Strict      *bool           `json:"strict,omitempty"`
}

// AssistantSpec is everything an assistant is: the settings a create sets and a modify replaces. Nullable fields
// are pointers (nil = null). ToolResources and ResponseFormat are kept as the client sent them, in OpenAI's shape.
type AssistantSpec struct {
	Model          string            `json:"model"`
	Name           *string           `json:"name,omitempty"`
	Description    *string           `json:"description,omitempty"`
	Instructions   *string           `json:"instructions,omitempty"`
	Tools          []Tool            `json:"tools,omitempty"`
	ToolResources  json.RawMessage   `json:"tool_resources,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	Temperature    *float64          `json:"temperature,omitempty"`
	TopP           *float64          `json:"top_p,omitempty"`
	ResponseFormat json.RawMessage   `json:"response_format,omitempty"`
	// ReasoningEffort is passed through for reasoning models ("low", "medium", "high").
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
}

// AssistantCreated creates an assistant.
type AssistantCreated struct {
	AssistantSpec
}

func (AssistantCreated) EventType() string { return "assistant.created" }

// AssistantModified replaces the assistant's settings with the whole spec after the change, so that a reader needs
// no earlier event to know the assistant.
type AssistantModified struct {
	AssistantSpec
}

func (AssistantModified) EventType() string { return "assistant.modified" }

// AssistantDeleted deletes an assistant. Runs already created keep the settings they copied.
type AssistantDeleted struct{}

func (AssistantDeleted) EventType() string { return "assistant.deleted" }

func assistantEvents() []Event {
	return []Event{AssistantCreated{}, AssistantModified{}, AssistantDeleted{}}
}
