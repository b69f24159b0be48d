package openaiwire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/contrailhq/contrail/internal/llm"
)

// Usage is the token count of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func toUsage(u *llm.Usage) *Usage {
	if u == nil {
		return nil
	}
	return &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
}

type functionCall struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type toolCall struct {
	Index    *int         `json:"index,omitempty"`
	ID       string       `json:"id,omitempty"`
	Type     string       `json:"type,omitempty"`
	Function functionCall `json:"function"`
}

type message struct {
	Role      string     `json:"role"`
	Content   *string    `json:"content"`
	Refusal   *string    `json:"refusal"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
}

type choice struct {
	Index        int     `json:"index"`
	Message      message `json:"message"`
	Logprobs     any     `json:"logprobs"`
	FinishReason string  `json:"finish_reason"`
}

// Completion is a chat.completion object: the whole answer.
type Completion struct {
	ID                string   `json:"id"`
	Object            string   `json:"object"`
	Created           int64    `json:"created"`
	Model             string   `json:"model"`
	SystemFingerprint string   `json:"system_fingerprint"`
	Choices           []choice `json:"choices"`
	Usage             *Usage   `json:"usage,omitempty"`
}

// Answer is what a completion says, whole or streamed.
type Answer struct {
	ID, Model string
	Created   int64
	// Fingerprint is the completion's system_fingerprint.
	Fingerprint string
	Text        string
	ToolCalls   []llm.ToolCall
	Finish      string
	// Usage is left out when nil.
	Usage *llm.Usage
}

// Completion is the answer as one chat.completion object. Its text is null only when it calls tools and says
// nothing.
func (a Answer) Completion() Completion {
	msg := message{Role: "assistant"}
	if a.Text != "" || len(a.ToolCalls) == 0 {
		text := a.Text
		msg.Content = &text
	}
	for _, call := range a.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: call.ID, Type: "function",
			Function: functionCall{Name: call.Name, Arguments: call.Arguments}})
	}
	return Completion{ID: a.ID, Object: "chat.completion", Created: a.Created, Model: a.Model,
		SystemFingerprint: a.Fingerprint, Usage: toUsage(a.Usage),
		Choices: []choice{{Message: msg, FinishReason: a.Finish}}}
}

type chunkDelta struct {
	Role      string     `json:"role,omitempty"`
	Content   *string    `json:"content,omitempty"`
	Refusal   *string    `json:"refusal,omitempty"`
	ToolCalls []toolCall `json:"tool_calls,omitempty"`
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
	Usage             **Usage       `json:"usage,omitempty"`
}

// Stream writes an answer as server-sent events the way OpenAI does: a first chunk with the role, a chunk per
// piece of text or of a tool call, a last chunk with the finish reason and an empty delta, a usage chunk with no
// choices when the request asked for one, and "data: [DONE]". After a write fails, every later call returns that
// error and writes nothing.
type Stream struct {
	w            io.Writer
	flush        func()
	a            Answer
	includeUsage bool
	err          error
}

// NewStream starts a stream of answer a (its ID, model and creation; the rest comes piece by piece): it writes the
// response's headers.
func NewStream(w http.ResponseWriter, a Answer, includeUsage bool) *Stream {
	s := &Stream{w: w, flush: func() {}, a: a, includeUsage: includeUsage}
	if f, ok := w.(http.Flusher); ok {
		s.flush = f.Flush
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	return s
}

var nullUsage *Usage

func (s *Stream) base() chunk {
	c := chunk{ID: s.a.ID, Object: "chat.completion.chunk", Created: s.a.Created, Model: s.a.Model,
		SystemFingerprint: s.a.Fingerprint}
	if s.includeUsage {
		c.Usage = &nullUsage
	}
	return c
}

func (s *Stream) send(v any) error {
	if s.err != nil {
		return s.err
	}
	b, err := json.Marshal(v)
	if err != nil {
		s.err = fmt.Errorf("encode chunk: %w", err)
		return s.err
	}
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", b); err != nil {
		s.err = err
		return err
	}
	s.flush()
	return nil
}

func (s *Stream) delta(d chunkDelta) error {
	c := s.base()
	c.Choices = []chunkChoice{{Delta: d}}
	return s.send(c)
}

// Start sends the first chunk: the role, and an empty text unless the answer is tool calls.
func (s *Stream) Start(toolCalls bool) error {
	d := chunkDelta{Role: "assistant"}
	if !toolCalls {
		empty := ""
		d.Content = &empty
	}
	return s.delta(d)
}

// Text sends a piece of the answer's text.
func (s *Stream) Text(piece string) error { return s.delta(chunkDelta{Content: &piece}) }

// ToolCall sends a piece of tool call index: its ID and name with its first piece, then more of its arguments.
func (s *Stream) ToolCall(index int, id, name, arguments string) error {
	tc := toolCall{Index: &index, ID: id, Function: functionCall{Name: name, Arguments: arguments}}
	if id != "" {
		tc.Type = "function"
	}
	return s.delta(chunkDelta{ToolCalls: []toolCall{tc}})
}

// Finish sends the finish reason, the usage when the request asked for it, and [DONE].
func (s *Stream) Finish(reason string, usage *llm.Usage) error {
	last := s.base()
	last.Choices = []chunkChoice{{Delta: chunkDelta{}, FinishReason: &reason}}
	if err := s.send(last); err != nil {
		return err
	}
	if s.includeUsage && usage != nil {
		u := toUsage(usage)
		c := s.base()
		c.Choices = []chunkChoice{}
		c.Usage = &u
		if err := s.send(c); err != nil {
			return err
		}
	}
	return s.done()
}

// Fail ends a stream that broke after it began with OpenAI's error object, and no [DONE]: a client reads it as
// the failure it is rather than an answer cut short.
func (s *Stream) Fail(status int, typ, code, message string) error {
	return s.send(NewError(status, typ, code, "", message))
}

func (s *Stream) done() error {
	if s.err != nil {
		return s.err
	}
	if _, err := io.WriteString(s.w, "data: [DONE]\n\n"); err != nil {
		s.err = err
		return err
	}
	s.flush()
	return nil
}
