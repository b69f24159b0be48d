// Package openaiwire is OpenAI's chat-completions and embeddings wire format as a server speaks it: a request read
// and checked the way OpenAI checks it (with its wording), a completion written whole (chat.completion) or as
// server-sent chunks (chat.completion.chunk, a usage chunk when asked, data: [DONE]), an embeddings list, and
// OpenAI's error object. The platform's OpenAI proxy and the scripted test server (llmtest) speak it; the openai
// provider is the client side and keeps its own types.
//
// It imports the llm types; nothing else of Contrail.
package openaiwire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/contrailhq/contrail/internal/llm"
)

// Request is a chat-completions request as a server reads it.
type Request struct {
	Model    string
	Messages []llm.Message
	Tools    []llm.Tool
	// ToolChoice is as sent: "auto", or {"type":"function","function":{"name":...}}.
	ToolChoice          json.RawMessage
	ParallelToolCalls   *bool
	Temperature         *float64
	TopP                *float64
	MaxTokens           int
	MaxCompletionTokens int
	Stop                []string
	ResponseFormat      json.RawMessage
	Seed                *int64
	// N is how many choices were asked for (0 when not given).
	N            int
	Stream       bool
	IncludeUsage bool
}

// The request as OpenAI defines it, as far as a server reads it.
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
	N                   *int            `json:"n"`
	Stream              bool            `json:"stream"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Rejection is why a request is refused, worded as OpenAI words it (capitals, full stops and all), and the
// parameter at fault when there is one.
type Rejection struct {
	Message string
	Param   string
}

func (r *Rejection) Error() string { return r.Message }

func reject(param, format string, args ...any) *Rejection {
	return &Rejection{Message: fmt.Sprintf(format, args...), Param: param}
}

// DecodeRequest reads and checks a chat-completions request the way OpenAI does; a refusal is a *Rejection.
func DecodeRequest(body []byte) (Request, error) {
	var w wireRequest
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&w); err != nil {
		return Request{}, reject("", "We could not parse the JSON body of your request. (%v)", err)
	}
	if w.Model == "" {
		return Request{}, reject("model", "you must provide a model parameter")
	}
	if len(w.Messages) == 0 {
		return Request{}, reject("messages", "[] is too short - 'messages'")
	}
	if w.StreamOptions != nil && !w.Stream {
		return Request{}, reject("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.")
	}
	if len(w.Tools) == 0 && w.ParallelToolCalls != nil {
		return Request{}, reject("parallel_tool_calls", "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.")
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
	}
	if w.N != nil {
		req.N = *w.N
	}
	for i, m := range w.Messages {
		content, images, err := messageContent(m.Content)
		if err != nil {
			return Request{}, reject(fmt.Sprintf("messages[%d].content", i), "Invalid type for 'messages[%d].content': %v", i, err)
		}
		msg := llm.Message{Role: m.Role, Content: content, Name: m.Name, ToolCallID: m.ToolCallID, Images: images}
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
			return Request{}, reject("stop", "Invalid type for 'stop': expected a string or an array of strings")
		}
	}
	return req, nil
}

// messageContent reads a message's content: a string, null, or parts: text parts joined, image_url parts
// ({"type":"image_url","image_url":{"url","detail"}}) as the message's images.
func messageContent(raw json.RawMessage) (string, []llm.Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL    string `json:"url"`
			Detail string `json:"detail"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, errors.New("expected a string or an array of content parts")
	}
	var b bytes.Buffer
	var images []llm.Image
	for _, p := range parts {
		if p.Type == "image_url" {
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return "", nil, errors.New("an image_url part needs image_url.url")
			}
			images = append(images, llm.Image{URL: p.ImageURL.URL, Detail: p.ImageURL.Detail})
			continue
		}
		b.WriteString(p.Text)
	}
	return b.String(), images, nil
}

// LLM is the request as the model providers take it: the tool choice as a word or a function's name, and the
// larger of the two token bounds.
func (r Request) LLM() (llm.Request, error) {
	out := llm.Request{Model: r.Model, Messages: r.Messages, Tools: r.Tools, ParallelToolCalls: r.ParallelToolCalls,
		Temperature: r.Temperature, TopP: r.TopP, MaxTokens: max(r.MaxTokens, r.MaxCompletionTokens), Stop: r.Stop,
		ResponseFormat: r.ResponseFormat, Seed: r.Seed}
	if len(r.ToolChoice) == 0 || string(r.ToolChoice) == "null" {
		return out, nil
	}
	if json.Unmarshal(r.ToolChoice, &out.ToolChoice) == nil {
		return out, nil
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(r.ToolChoice, &named); err != nil || named.Function.Name == "" {
		return out, reject("tool_choice", "Invalid value for 'tool_choice': expected \"none\", \"auto\", \"required\" or a function.")
	}
	out.ToolChoice = named.Function.Name
	return out, nil
}

// ErrorBody is OpenAI's error object.
type ErrorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// NewError builds the error object; an empty type is the one OpenAI uses for the status.
func NewError(status int, typ, code, param, message string) ErrorBody {
	var b ErrorBody
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
	return b
}

// WriteError answers OpenAI's error object with status.
func WriteError(w http.ResponseWriter, status int, typ, code, param, message string) {
	WriteJSON(w, status, NewError(status, typ, code, param, message))
}

// WriteJSON answers v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
