package openai

import (
	"encoding/json"

	"github.com/contrailhq/contrail/internal/llm"
)

// The chat-completions wire format, as much of it as the provider sends and reads.

type chatRequest struct {
	Model               string          `json:"model"`
	Messages            []wireMessage   `json:"messages"`
	Tools               []wireTool      `json:"tools,omitempty"`
	ToolChoice          any             `json:"tool_choice,omitempty"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Stop                []string        `json:"stop,omitempty"`
	ResponseFormat      json.RawMessage `json:"response_format,omitempty"`
	Seed                *int64          `json:"seed,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, a list of parts (text and images) when the message has images, or null only for an
	// assistant message that made tool calls and said nothing.
	Content    any            `json:"content"`
	Name       string         `json:"name,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Strict      bool            `json:"strict,omitempty"`
}

type wireToolCall struct {
	// Index is present in stream deltas only. Some servers leave it out even there.
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	// Param and Code are strings at OpenAI, but other servers put numbers or objects there.
	Param json.RawMessage `json:"param"`
	Code  json.RawMessage `json:"code"`
}

type chatResponse struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role      string         `json:"role"`
			Content   *string        `json:"content"`
			Refusal   *string        `json:"refusal"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

type chatChunk struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string         `json:"role"`
			Content   *string        `json:"content"`
			Refusal   *string        `json:"refusal"`
			ToolCalls []wireToolCall `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage"`
	Error *wireError `json:"error"`
}

// wireRequest turns a request into its wire form. maxTokensField says which name the token bound goes under.
func wireRequest(req llm.Request, stream, completionTokensField bool) chatRequest {
	w := chatRequest{
		Model:          req.Model,
		Messages:       make([]wireMessage, 0, len(req.Messages)),
		Temperature:    req.Temperature,
		TopP:           req.TopP,
		Stop:           req.Stop,
		ResponseFormat: req.ResponseFormat,
		Seed:           req.Seed,
		Stream:         stream,
	}
	if completionTokensField {
		w.MaxCompletionTokens = req.MaxTokens
	} else {
		w.MaxTokens = req.MaxTokens
	}
	if stream {
		w.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	for _, m := range req.Messages {
		wm := wireMessage{Role: m.Role, Name: m.Name, ToolCallID: m.ToolCallID}
		switch {
		case len(m.Images) > 0:
			wm.Content = contentParts(m)
		case m.Content != "" || len(m.ToolCalls) == 0:
			wm.Content = m.Content
		}
		for _, c := range m.ToolCalls {
			var wc wireToolCall
			wc.ID, wc.Type = c.ID, "function"
			wc.Function.Name, wc.Function.Arguments = c.Name, c.Arguments
			wm.ToolCalls = append(wm.ToolCalls, wc)
		}
		w.Messages = append(w.Messages, wm)
	}
	// OpenAI refuses tool_choice and parallel_tool_calls in a request without tools.
	if len(req.Tools) > 0 {
		for _, t := range req.Tools {
			w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireFunction{
				Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: t.Strict,
			}})
		}
		switch req.ToolChoice {
		case "":
		case "auto", "none", "required":
			w.ToolChoice = req.ToolChoice
		default:
			var c namedToolChoice
			c.Type, c.Function.Name = "function", req.ToolChoice
			w.ToolChoice = c
		}
		w.ParallelToolCalls = req.ParallelToolCalls
	}
	return w
}

// contentPart is a part of a message's content: {"type":"text","text":...} or
// {"type":"image_url","image_url":{"url":...,"detail":...}}.
type contentPart struct {
	Type     string        `json:"type"`
	Text     string        `json:"text,omitempty"`
	ImageURL *wireImageURL `json:"image_url,omitempty"`
}

type wireImageURL struct {
	URL    string `json:"url"`
	Detail string `json:"detail,omitempty"`
}

// chatDetail is an image's detail as Chat Completions takes it: the Responses API's "original" (the image at its
// own resolution, not scaled down) has no value there, and "high" is the nearest, the most of the image a chat
// model is shown.
func chatDetail(detail string) string {
	if detail == "original" {
		return "high"
	}
	return detail
}

// contentParts is a message with images as parts: its text first (when it has any), then each image.
func contentParts(m llm.Message) []contentPart {
	parts := make([]contentPart, 0, len(m.Images)+1)
	if m.Content != "" {
		parts = append(parts, contentPart{Type: "text", Text: m.Content})
	}
	for _, im := range m.Images {
		parts = append(parts, contentPart{Type: "image_url", ImageURL: &wireImageURL{URL: im.URL, Detail: chatDetail(im.Detail)}})
	}
	return parts
}
