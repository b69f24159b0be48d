// Package llm holds the model providers behind one interface: "openai" (any server speaking the OpenAI
// chat-completions protocol) and "offline" (a deterministic few-shot follower built in, so that the platform works
// with no API key and no network). A Router resolves an agent's model string ("provider/name" or a bare name) to a
// provider.
//
// This package holds the shared vocabulary: the request and response types, the error kinds, the Router, and the
// Code Shot prompt format (CodeShotPrompt), which both the Code Shot executor and the offline model speak. The
// providers live in subpackages (openai, offline), next to tokens (token counting) and llmtest (a scripted
// OpenAI-compatible server for tests), all of which import this package and not the other way round.
//
// It must not import the event log, the read models or any face. Streaming goes to a callback; publishing the deltas
// on the live subject is the caller's business.
package llm

import (
	"context"
	"encoding/json"
)

// Roles of a chat message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message sent to a model.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Name    string `json:"name,omitempty"`
	// ToolCalls are the calls an assistant message made (when replaying a conversation that had them).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID ties a tool message to the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Images are pictures a user message shows the model, after its text. The openai provider sends them as
	// image_url parts; the offline model does not see them.
	Images []Image `json:"images,omitempty"`
}

// Image is a picture in a message: an https URL or a data URL (base64), and the detail the model looks at it in
// ("low", "high", "auto"; empty is the provider's default).
type Image struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"` // JSON schema
	Strict      bool            `json:"strict,omitempty"`
}

// ToolCall is a call the model made. Arguments is the JSON text the model produced.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Request is one completion request.
type Request struct {
	// Model is the provider's own model name (the part after "provider/").
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice is "auto", "none", "required", or the name of a function the model must call; empty = provider default.
	ToolChoice        string
	ParallelToolCalls *bool
	Temperature       *float64
	TopP              *float64
	// MaxTokens bounds the completion; 0 = provider default.
	MaxTokens int
	Stop      []string
	// ResponseFormat is passed through as the OpenAI "response_format" object when set.
	ResponseFormat json.RawMessage
	Seed           *int64
}

// Delta is a piece of a streamed answer.
type Delta struct {
	// Text is the next chunk of the answer's text.
	Text string
	// ToolCall is set when the chunk belongs to a tool call: Index says which call, ID and Name arrive with the
	// first chunk of a call, Arguments is the next chunk of its argument text.
	ToolCall *ToolCallDelta
}

// ToolCallDelta is a chunk of a streamed tool call.
type ToolCallDelta struct {
	Index     int
	ID        string
	Name      string
	Arguments string
}

// Finish reasons, as OpenAI names them.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishToolCalls = "tool_calls"
)

// Usage counts tokens of one completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Response is a completed answer.
type Response struct {
	Text         string
	ToolCalls    []ToolCall
	FinishReason string
	Usage        Usage
	// Model is the model that answered, as the provider reports it.
	Model string
	// Refused says the model declined the request: Text says why (or how to configure a model that can), and is no
	// answer to it. A caller that stores the answer as something else (a summary) must not store it.
	Refused bool
}

// Provider completes chat requests. Complete streams when onDelta is not nil (calling it from one goroutine, in
// order) and always returns the whole answer at the end. Errors wrap ErrRateLimited, ErrUnavailable or
// ErrBadRequest where the provider can tell.
type Provider interface {
	Name() string
	Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error)
}
