package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/contrailhq/contrail/internal/llm"
)

// The request as OpenAI defines it, as far as the server reads it.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role string `json:"role"`
		// Content is a string, null, or a list of parts ({"type":"text","text":...}).
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Strict      bool            `json:"strict"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice          json.RawMessage `json:"tool_choice"`
	ParallelToolCalls   *bool           `json:"parallel_tool_calls"`
	Temperature         *float64        `json:"temperature"`
	TopP                *float64        `json:"top_p"`
	MaxTokens           int             `json:"max_tokens"`
	MaxCompletionTokens int             `json:"max_completion_tokens"`
	Stop                json.RawMessage `json:"stop"` // a string or a list of them
	ResponseFormat      json.RawMessage `json:"response_format"`
	Seed                *int64          `json:"seed"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// rejection is why a request is refused, worded as OpenAI words it (capitals, full stops and all).
type rejection string

func (r rejection) Error() string { return string(r) }

func reject(format string, args ...any) error { return rejection(fmt.Sprintf(format, args...)) }

// decodeRequest reads and checks a request the way OpenAI does, with its error messages.
func decodeRequest(r *http.Request) (Request, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return Request{}, reject("could not read the body: %v", err)
	}
	var w wireRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&w); err != nil {
		return Request{}, reject("We could not parse the JSON body of your request. (%v)", err)
	}
	if w.Model == "" {
		return Request{}, rejection("you must provide a model parameter")
	}
	if len(w.Messages) == 0 {
		return Request{}, rejection("[] is too short - 'messages'")
	}
	if w.StreamOptions != nil && !w.Stream {
		return Request{}, rejection("The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if len(w.Tools) == 0 && w.ParallelToolCalls != nil {
		return Request{}, rejection("Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.")
	}
	req := Request{
		Model:               w.Model,
		ToolChoice:          w.ToolChoice,
		ParallelToolCalls:   w.ParallelToolCalls,
		Temperature:         w.Temperature,
		TopP:                w.TopP,
		MaxTokens:           w.MaxTokens,
		MaxCompletionTokens: w.MaxCompletionTokens,
		ResponseFormat:      w.ResponseFormat,
		Seed:                w.Seed,
		Stream:              w.Stream,
		IncludeUsage:        w.StreamOptions != nil && w.StreamOptions.IncludeUsage,
		Header:              r.Header.Clone(),
		Body:                body,
	}
	for i, m := range w.Messages {
		content, err := messageText(m.Content)
		if err != nil {
			return Request{}, reject("Invalid type for 'messages[%d].content': %v", i, err)
		}
		msg := llm.Message{Role: m.Role, Content: content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, llm.ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	for _, t := range w.Tools {
		req.Tools = append(req.Tools, llm.Tool{Name: t.Function.Name, Description: t.Function.Description,
			Parameters: t.Function.Parameters, Strict: t.Function.Strict})
	}
	if len(w.Stop) > 0 && string(w.Stop) != "null" {
		var one string
		if json.Unmarshal(w.Stop, &one) == nil {
			req.Stop = []string{one}
		} else if err := json.Unmarshal(w.Stop, &req.Stop); err != nil {
			return Request{}, reject("Invalid type for 'stop': expected a string or an array of strings")
		}
	}
	return req, nil
}

// messageText reads a message's content: a string, null, or text parts joined.
func messageText(raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", errors.New("expected a string or an array of content parts")
	}
	var b bytes.Buffer
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String(), nil
}

type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, status int, typ, code, param, message string) {
	var b errorBody
	b.Error.Message = message
	b.Error.Type = typ
	if b.Error.Type == "" {
		switch {
		case status == http.StatusTooManyRequests:
			b.Error.Type = "requests"
		case status >= 500:
			b.Error.Type = "server_error"
		default:
			b.Error.Type = "invalid_request_error"
		}
	}
	if code == "" && status == http.StatusTooManyRequests {
		code = "rate_limit_exceeded"
	}
	if code != "" {
		b.Error.Code = &code
	}
	if param != "" {
		b.Error.Param = &param
	}
	writeJSON(w, status, b)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

type wireUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func toWireUsage(u *llm.Usage) *wireUsage {
	if u == nil {
		return nil
	}
	return &wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

type wireFunctionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireToolCall struct {
	Index    *int             `json:"index,omitempty"`
	ID       string           `json:"id,omitempty"`
	Type     string           `json:"type,omitempty"`
	Function wireFunctionCall `json:"function"`
}

type completionMessage struct {
	Role      string         `json:"role"`
	Content   *string        `json:"content"`
	Refusal   *string        `json:"refusal"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type completion struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Created           int64  `json:"created"`
	Model             string `json:"model"`
	SystemFingerprint string `json:"system_fingerprint"`
	Choices           []struct {
		Index        int               `json:"index"`
		Message      completionMessage `json:"message"`
		Logprobs     any               `json:"logprobs"`
		FinishReason string            `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage `json:"usage,omitempty"`
}

// completion is the non-streamed answer: a chat.completion object.
func (a answer) completion(req Request) completion {
	c := completion{
		ID: a.id, Object: "chat.completion", Created: a.created, Model: a.model,
		SystemFingerprint: "fp_llmtest", Usage: toWireUsage(a.usage),
	}
	c.Choices = make([]struct {
		Index        int               `json:"index"`
		Message      completionMessage `json:"message"`
		Logprobs     any               `json:"logprobs"`
		FinishReason string            `json:"finish_reason"`
	}, 1)
	msg := completionMessage{Role: "assistant"}
	if a.text != "" || len(a.calls) == 0 {
		text := a.text
		msg.Content = &text
	}
	for _, call := range a.calls {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: call.ID, Type: "function",
			Function: wireFunctionCall{Name: call.Name, Arguments: call.Arguments}})
	}
	c.Choices[0].Message = msg
	c.Choices[0].FinishReason = a.finish
	return c
}

type chunkDelta struct {
	Role      string         `json:"role,omitempty"`
	Content   *string        `json:"content,omitempty"`
	Refusal   *string        `json:"refusal,omitempty"`
	ToolCalls []wireToolCall `json:"tool_calls,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	Logprobs     any        `json:"logprobs"`
	FinishReason *string    `json:"finish_reason"`
}

// chunk is one chat.completion.chunk. Usage is a pointer to a pointer so that it can be left out (no
// include_usage), be null (every chunk but the last with include_usage), or hold the counts (the last).
type chunk struct {
	ID                string        `json:"id"`
	Object            string        `json:"object"`
	Created           int64         `json:"created"`
	Model             string        `json:"model"`
	SystemFingerprint string        `json:"system_fingerprint"`
	Choices           []chunkChoice `json:"choices"`
	Usage             **wireUsage   `json:"usage,omitempty"`
}
