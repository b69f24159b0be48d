// Package llmtest is a scripted OpenAI-compatible chat-completions server for tests: a real HTTP server
// (httptest) that answers POST /v1/chat/completions in the wire format OpenAI uses, streamed
// (chat.completion.chunk events, tool calls split across chunks, a final usage chunk when asked, data: [DONE]) or
// not. A test scripts its replies in order, or answers by a function of the request, and reads back every request
// the server received. Point the real openai provider at Server.URL, so that the code under test is the code that
// runs in production.
//
// It imports the llm types and the tokenizer (to report usage the way a server does); nothing else of Contrail.
package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/openaiwire"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Reply is what the server answers to one request. Build one with Text, ToolCalls or Error, or as a literal, and
// adjust it with the With... methods. Like a real server, the server cuts Text at the first of the request's stop
// sequences and at its max_tokens (finish reason "length").
type Reply struct {
	// Text is the answer's text. When the request streams it is sent in Chunks if set, else word by word.
	Text   string
	Chunks []string
	// ToolCalls are the calls the model makes. An empty ID gets one made up ("call_llmtest_<n>"). When streamed,
	// each call's arguments are split into small chunks, as OpenAI does.
	ToolCalls []llm.ToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls, "length" when max_tokens cut the text,
	// else "stop".
	FinishReason string
	// Model is the model the answer says it came from; default: the requested one.
	Model string
	// Usage is reported as is when set; otherwise the server counts the request and answer with the tokenizer.
	Usage *llm.Usage
	// NoUsage leaves usage out of the answer altogether, as some servers do.
	NoUsage bool

	// Status, when set, makes the reply an HTTP error with OpenAI's error object.
	Status       int
	ErrorMessage string
	ErrorType    string
	ErrorCode    string
	ErrorParam   string

	// Header is added to the response (e.g. Retry-After).
	Header http.Header
	// Delay is waited before answering.
	Delay time.Duration

	// Stream faults, as one more than the number of pieces to send first, so that 0 (the zero Reply) means none.
	hangAt int // stop and hold the connection until the client leaves
	dropAt int // cut the connection
}

// Text is a reply with text.
func Text(text string) Reply { return Reply{Text: text} }

// ToolCalls is a reply that calls tools.
func ToolCalls(calls ...llm.ToolCall) Reply { return Reply{ToolCalls: calls} }

// Error is an HTTP error reply with OpenAI's error object {"error":{"message":...}}.
func Error(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// WithHeader adds a response header, e.g. WithHeader("Retry-After", "1").
func (r Reply) WithHeader(key, value string) Reply {
	h := r.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.Header = h
	return r
}

// WithDelay waits d before answering.
func (r Reply) WithDelay(d time.Duration) Reply { r.Delay = d; return r }

// WithChunks sets how the text is split when streamed.
func (r Reply) WithChunks(chunks ...string) Reply {
	r.Chunks = chunks
	r.Text = strings.Join(chunks, "")
	return r
}

// WithUsage reports these token counts.
func (r Reply) WithUsage(prompt, completion int) Reply {
	r.Usage = &llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	return r
}

// WithoutUsage leaves usage out of the answer.
func (r Reply) WithoutUsage() Reply { r.NoUsage = true; return r }

// WithFinishReason sets the finish reason.
func (r Reply) WithFinishReason(reason string) Reply { r.FinishReason = reason; return r }

// HangAfter makes a streamed reply send n pieces (text chunks or tool-call chunks) and then hold the connection
// open, sending nothing, until the client goes away: a stalled model, for testing cancellation.
func (r Reply) HangAfter(n int) Reply { r.hangAt = max(n, 0) + 1; return r }

// DropAfter makes a streamed reply send n pieces and then cut the connection: a stream broken midway.
func (r Reply) DropAfter(n int) Reply { r.dropAt = max(n, 0) + 1; return r }

// Request is a request the server received, decoded from the wire.
type Request struct {
	openaiwire.Request
	// Header holds the request's HTTP headers (Authorization, ...).
	Header http.Header
	// Body is the request body as sent, for fields not decoded above.
	Body json.RawMessage
}

// LastMessage is the last message of the request (the zero Message when there is none).
func (r Request) LastMessage() llm.Message {
	if len(r.Messages) == 0 {
		return llm.Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Server is the scripted server. Its methods are safe for concurrent use.
type Server struct {
	// URL is the base URL to give a client, ending in "/v1" (what OPENAI_BASE_URL holds).
	URL string

	t    testing.TB
	srv  *httptest.Server
	done chan struct{}

	mu       sync.Mutex
	script   []Reply
	handler  func(Request) Reply
	requests []Request
	ids      int
}

// NewServer starts a server that is closed when the test ends.
func NewServer(t testing.TB) *Server {
	t.Helper()
	s := &Server{t: t, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chatCompletions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		openaiwire.WriteError(w, http.StatusNotFound, "invalid_request_error", "", "",
			fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path))
	})
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	t.Cleanup(func() {
		close(s.done) // releases handlers that hang or wait, so that Close does not block on them
		s.srv.Close()
	})
	return s
}

// Enqueue scripts the next replies, answered in order, one per request.
func (s *Server) Enqueue(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// HandleFunc answers requests by a function of the request once the script is used up. Without one, a request
// with no reply scripted fails the test and gets HTTP 400.
func (s *Server) HandleFunc(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handler = f
}

// Requests returns every well-formed request received so far, in order. (Requests the server rejects as a real
// one would, such as one without a model, are answered with HTTP 400 and not recorded.)
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Pending is the number of scripted replies not yet used.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	req, err := decodeRequest(r)
	if err != nil {
		openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "", err.Error())
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	n := len(s.requests)
	var reply Reply
	var ok bool
	switch {
	case len(s.script) > 0:
		reply, s.script, ok = s.script[0], s.script[1:], true
	case s.handler != nil:
		h := s.handler
		s.mu.Unlock()
		reply, ok = h(req), true
		s.mu.Lock()
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("llmtest: request #%d has no reply scripted (last message: %q)", n, req.LastMessage().Content)
		openaiwire.WriteError(w, http.StatusBadRequest, "invalid_request_error", "", "",
			fmt.Sprintf("llmtest: no reply scripted for request #%d", n))
		return
	}

	if reply.Delay > 0 && !s.wait(r, reply.Delay) {
		return
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set("X-Request-Id", fmt.Sprintf("req_llmtest_%d", n))
	if reply.Status != 0 {
		openaiwire.WriteError(w, reply.Status, reply.ErrorType, reply.ErrorCode, reply.ErrorParam, reply.ErrorMessage)
		return
	}
	a := s.answer(req, reply)
	if req.Stream {
		s.writeStream(w, r, req, reply, a)
		return
	}
	openaiwire.WriteJSON(w, http.StatusOK, a.completion())
}

// wait sleeps d, or less if the client or the server goes away first; it reports whether to go on.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) nextID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s_llmtest_%d", prefix, s.ids)
}

// answer is a reply made final: stop sequences and max_tokens applied, IDs given, usage counted.
type answer struct {
	id, model, text, finish string
	chunks                  []string
	calls                   []llm.ToolCall
	usage                   *llm.Usage
	created                 int64
}

func (s *Server) answer(req Request, reply Reply) answer {
	a := answer{
		id:      s.nextID("chatcmpl"),
		model:   reply.Model,
		text:    reply.Text,
		chunks:  reply.Chunks,
		finish:  reply.FinishReason,
		created: time.Now().Unix(),
	}
	if a.model == "" {
		a.model = req.Model
	}
	// A real server stops generating at the first stop sequence, which is not part of the answer.
	if cut, ok := cutAtStop(a.text, req.Stop); ok {
		a.text, a.chunks = cut, nil
		if a.finish == "" {
			a.finish = llm.FinishStop
		}
	}
	if limit := max(req.MaxTokens, req.MaxCompletionTokens); limit > 0 {
		if cut, ok := tokens.Truncate(req.Model, a.text, limit); ok {
			a.text, a.chunks = cut, nil
			if a.finish == "" {
				a.finish = llm.FinishLength
			}
		}
	}
	if a.chunks == nil {
		a.chunks = words(a.text)
	}
	for _, c := range reply.ToolCalls {
		if c.ID == "" {
			c.ID = s.nextID("call")
		}
		a.calls = append(a.calls, c)
	}
	if a.finish == "" {
		a.finish = llm.FinishStop
		if len(a.calls) > 0 {
			a.finish = llm.FinishToolCalls
		}
	}
	switch {
	case reply.NoUsage:
	case reply.Usage != nil:
		u := *reply.Usage
		a.usage = &u
	default:
		prompt := tokens.CountMessages(req.Model, req.Messages) + tokens.CountTools(req.Model, req.Tools)
		completion := tokens.Count(req.Model, a.text)
		for _, c := range a.calls {
			completion += tokens.Count(req.Model, c.Name) + tokens.Count(req.Model, c.Arguments)
		}
		a.usage = &llm.Usage{PromptTokens: prompt, CompletionTokens: completion, TotalTokens: prompt + completion}
	}
	return a
}

func cutAtStop(text string, stops []string) (string, bool) {
	at := -1
	for _, s := range stops {
		if s == "" {
			continue
		}
		if i := strings.Index(text, s); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	if at < 0 {
		return text, false
	}
	return text[:at], true
}

// words splits text into word-sized chunks, each word with the whitespace before it, as models stream.
func words(text string) []string {
	space := func(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }
	var out []string
	start := 0
	for i := 1; i < len(text); i++ {
		if space(text[i]) && !space(text[i-1]) {
			out = append(out, text[start:i])
			start = i
		}
	}
	if start < len(text) {
		out = append(out, text[start:])
	}
	return out
}
