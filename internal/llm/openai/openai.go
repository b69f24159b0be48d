// Package openai is the llm provider for any server that speaks OpenAI's chat-completions protocol: OpenAI itself,
// Ollama's /v1, vLLM, llama.cpp's server and the like. It streams (server-sent events, tool calls reassembled
// from their chunks), retries what can be retried, and reports usage, counting it itself when the server does not.
//
// It imports only the llm types and the tokenizer.
package openai

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Provider completes chat requests against one OpenAI-compatible server. It is safe for concurrent use.
type Provider struct {
	name          string
	endpoint      string
	apiKey        string
	client        *http.Client
	log           *slog.Logger
	maxAttempts   int
	minBackoff    time.Duration
	maxBackoff    time.Duration
	maxRetryAfter time.Duration
	// alwaysCompletionTokens sends the token bound as max_completion_tokens for every model.
	alwaysCompletionTokens bool
	// completionTokensModels remembers the models that refused max_tokens and asked for max_completion_tokens
	// (OpenAI's reasoning models), so that they are asked right the first time after that.
	completionTokensModels sync.Map // model name -> struct{}
}

// Option adjusts a Provider.
type Option func(*Provider)

// WithName sets the name the provider reports and puts in its errors (default "openai"). Use it when one binary
// talks to several servers, e.g. an "ollama" provider next to "openai".
func WithName(name string) Option { return func(p *Provider) { p.name = name } }

// WithMaxAttempts bounds the attempts at one request, the first included (default 4). 1 means no retries.
func WithMaxAttempts(n int) Option { return func(p *Provider) { p.maxAttempts = max(n, 1) } }

// WithBackoff sets the wait before the first retry and the most it grows to (defaults 500ms and 8s). The wait
// doubles with each attempt and is jittered, so that many clients failing together do not retry together.
func WithBackoff(initial, maximum time.Duration) Option {
	return func(p *Provider) { p.minBackoff, p.maxBackoff = initial, max(initial, maximum) }
}

// WithMaxRetryAfter is the longest Retry-After the provider waits for (default 60s). A server that asks for a
// longer wait gets no retry: the error, with its RetryAfter, goes back to the caller at once, who can decide
// better than a blocked goroutine whether to wait that long.
func WithMaxRetryAfter(d time.Duration) Option { return func(p *Provider) { p.maxRetryAfter = d } }

// WithMaxCompletionTokens sends Request.MaxTokens as max_completion_tokens rather than max_tokens for every
// model. Without it the provider sends max_tokens, which every compatible server knows, and switches to
// max_completion_tokens for a model only when the server refuses max_tokens for it (as OpenAI does for its
// reasoning models).
func WithMaxCompletionTokens() Option { return func(p *Provider) { p.alwaysCompletionTokens = true } }

// New returns a provider for the server at baseURL, the URL that "/chat/completions" is appended to (for
// OpenAI and most servers it ends in "/v1"; it is what OPENAI_BASE_URL holds). apiKey goes in the Authorization
// header and may be empty for servers that need none. client may be nil (then a client with no overall timeout
// is used: a stream may last long, and ctx bounds every call); logger may be nil.
func New(baseURL, apiKey string, client *http.Client, logger *slog.Logger, opts ...Option) (*Provider, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai provider: base URL %q must be an absolute http(s) URL", baseURL)
	}
	if client == nil {
		client = &http.Client{}
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Provider{
		name:          llm.ProviderOpenAI,
		endpoint:      strings.TrimRight(baseURL, "/") + "/chat/completions",
		apiKey:        apiKey,
		client:        client,
		log:           logger,
		maxAttempts:   4,
		minBackoff:    500 * time.Millisecond,
		maxBackoff:    8 * time.Second,
		maxRetryAfter: 60 * time.Second,
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// BaseURL is the server's URL, as given to New (without "/chat/completions").
func (p *Provider) BaseURL() string { return strings.TrimSuffix(p.endpoint, "/chat/completions") }

// Name is the provider's name, "openai" unless set with WithName.
func (p *Provider) Name() string { return p.name }

// Complete sends req and returns the answer; with onDelta it streams, calling onDelta with each piece in order
// from the calling goroutine.
//
// Failures that may pass (HTTP 429, 5xx, 408, connection errors, a stream cut before its first piece) are retried
// with jittered exponential backoff, honouring the server's Retry-After, up to the attempts allowed. A request the
// server rejects (other 4xx) fails at once with the server's message. Once a stream has delivered a piece to
// onDelta it is never retried: the caller has already passed that text on (to a live subscriber, say), and a
// second attempt would produce a different answer that could only be appended to the first. Such a failure
// returns the partial response with the error.
func (p *Provider) Complete(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	stream := onDelta != nil
	_, completionTokens := p.completionTokensModels.Load(req.Model)
	completionTokens = completionTokens || p.alwaysCompletionTokens
	switchedField := false
	for attempt := 1; ; attempt++ {
		body, err := json.Marshal(wireRequest(req, stream, completionTokens))
		if err != nil {
			return llm.Response{}, fmt.Errorf("%s: encode request: %w", p.name, err)
		}
		resp, delivered, err := p.attempt(ctx, body, req, onDelta)
		if err == nil {
			return resp, nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return resp, fmt.Errorf("%s: complete with %q: %w", p.name, req.Model, ctxErr)
		}
		if delivered {
			return resp, fmt.Errorf("%s: stream from %q broke after it began (not retried): %w", p.name, req.Model, err)
		}
		var httpErr *llm.HTTPError
		isHTTP := errors.As(err, &httpErr)
		if isHTTP && !switchedField && !completionTokens && req.MaxTokens > 0 && wantsCompletionTokens(httpErr) {
			// Asked for once per model: the answer is remembered, and it does not count as a failed attempt.
			p.completionTokensModels.Store(req.Model, struct{}{})
			completionTokens, switchedField = true, true
			attempt--
			continue
		}
		retryable := errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRateLimited)
		if !retryable || attempt >= p.maxAttempts {
			return resp, fmt.Errorf("%s: complete with %q (attempt %d of %d): %w", p.name, req.Model, attempt, p.maxAttempts, err)
		}
		wait := p.backoff(attempt)
		if isHTTP && httpErr.RetryAfter > 0 {
			if httpErr.RetryAfter > p.maxRetryAfter {
				return resp, fmt.Errorf("%s: complete with %q: server asks to wait %s, longer than %s: %w",
					p.name, req.Model, httpErr.RetryAfter, p.maxRetryAfter, err)
			}
			wait = httpErr.RetryAfter
		}
		p.log.WarnContext(ctx, "model request failed; retrying", "provider", p.name, "model", req.Model,
			"attempt", attempt, "max_attempts", p.maxAttempts, "wait", wait, "err", err)
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return llm.Response{}, fmt.Errorf("%s: complete with %q: waiting to retry: %w", p.name, req.Model, ctx.Err())
		case <-timer.C:
		}
	}
}

// backoff is the jittered wait after the attempt-th failure: half the exponential step plus a random part of the
// other half ("equal jitter"), so the wait still grows while clients spread out.
func (p *Provider) backoff(attempt int) time.Duration {
	step := p.minBackoff << (attempt - 1)
	if step > p.maxBackoff || step <= 0 {
		step = p.maxBackoff
	}
	half := step / 2
	if half <= 0 {
		return step
	}
	return half + rand.N(half+1)
}

// wantsCompletionTokens recognises OpenAI's refusal of max_tokens for models that take max_completion_tokens.
func wantsCompletionTokens(e *llm.HTTPError) bool {
	return errors.Is(e, llm.ErrBadRequest) && strings.Contains(e.Message, "max_completion_tokens")
}

// attempt sends one request. delivered reports whether any piece of the answer reached onDelta.
func (p *Provider) attempt(ctx context.Context, body []byte, req llm.Request, onDelta func(llm.Delta)) (resp llm.Response, delivered bool, err error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, p.endpoint, bytes.NewReader(body))
	if err != nil {
		return llm.Response{}, false, fmt.Errorf("build request: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if onDelta != nil {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	if p.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	hresp, err := p.client.Do(hreq)
	if err != nil {
		return llm.Response{}, false, fmt.Errorf("post %s: %w: %w", p.endpoint, llm.ErrUnavailable, err)
	}
	defer hresp.Body.Close()
	if hresp.StatusCode/100 != 2 {
		return llm.Response{}, false, p.httpError(hresp)
	}
	if onDelta == nil {
		resp, err := p.readResponse(hresp.Body, req)
		return resp, false, err
	}
	if ct := hresp.Header.Get("Content-Type"); strings.HasPrefix(ct, "application/json") {
		// A server that does not stream answers the whole completion at once; hand it on as one piece.
		resp, err := p.readResponse(hresp.Body, req)
		if err != nil {
			return resp, false, err
		}
		if resp.Text != "" {
			onDelta(llm.Delta{Text: resp.Text})
		}
		for i, c := range resp.ToolCalls {
			onDelta(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: c.Arguments}})
		}
		return resp, true, nil
	}
	return p.readStream(hresp.Body, req, onDelta)
}

// httpError reads an error answer: OpenAI's {"error":{...}} object when the server sends one, else the raw body.
func (p *Provider) httpError(hresp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(hresp.Body, 64<<10))
	e := &llm.HTTPError{Provider: p.name, Status: hresp.StatusCode, RetryAfter: retryAfter(hresp.Header, time.Now())}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj wireError
		var msg string
		switch {
		case json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			e.Message, e.Type, e.Code = obj.Message, obj.Type, rawString(obj.Code)
		case json.Unmarshal(body.Error, &msg) == nil: // Ollama and others: {"error":"message"}
			e.Message = msg
		}
	}
	if e.Message == "" {
		e.Message = strings.TrimSpace(string(raw))
		if e.Message == "" {
			e.Message = http.StatusText(hresp.StatusCode)
		}
	}
	return e
}

// rawString renders a JSON value that should be a string but may be a number or null.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if t := strings.TrimSpace(string(raw)); t != "null" {
		return t
	}
	return ""
}

// retryAfter reads how long the server asks the client to wait: OpenAI's retry-after-ms, else Retry-After in
// seconds or as an HTTP date. Zero when it does not say.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func (p *Provider) readResponse(body io.Reader, req llm.Request) (llm.Response, error) {
	var w chatResponse
	if err := json.NewDecoder(body).Decode(&w); err != nil {
		return llm.Response{}, fmt.Errorf("decode response: %w: %w", llm.ErrUnavailable, err)
	}
	if w.Error != nil {
		return llm.Response{}, &llm.HTTPError{Provider: p.name, Message: w.Error.Message, Type: w.Error.Type, Code: rawString(w.Error.Code)}
	}
	if len(w.Choices) == 0 {
		return llm.Response{}, fmt.Errorf("response has no choices: %w", llm.ErrUnavailable)
	}
	c := w.Choices[0]
	resp := llm.Response{FinishReason: c.FinishReason, Model: w.Model}
	switch {
	case c.Message.Content != nil:
		resp.Text = *c.Message.Content
	case c.Message.Refusal != nil:
		// A refusal is the model's answer to show the user; the caller has no other place for it.
		resp.Text, resp.Refused = *c.Message.Refusal, true
	}
	for _, tc := range c.Message.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, llm.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	p.finish(&resp, w.Usage, req)
	return resp, nil
}

// finish fills what the server may have left out: the model, the finish reason, the usage.
func (p *Provider) finish(resp *llm.Response, usage *wireUsage, req llm.Request) {
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if resp.FinishReason == "" {
		resp.FinishReason = llm.FinishStop
		if len(resp.ToolCalls) > 0 {
			resp.FinishReason = llm.FinishToolCalls
		}
	}
	if usage != nil && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		resp.Usage = llm.Usage{PromptTokens: usage.PromptTokens, CompletionTokens: usage.CompletionTokens, TotalTokens: usage.TotalTokens}
		if resp.Usage.TotalTokens == 0 {
			resp.Usage.TotalTokens = usage.PromptTokens + usage.CompletionTokens
		}
		return
	}
	resp.Usage = tokens.Usage(req, *resp)
}

// readStream reads server-sent events until "data: [DONE]" (or the end of a stream that finished), handing each
// piece to onDelta as it comes.
func (p *Provider) readStream(body io.Reader, req llm.Request, onDelta func(llm.Delta)) (llm.Response, bool, error) {
	var (
		resp      llm.Response
		text      strings.Builder
		calls     = map[int]*llm.ToolCall{}
		lastIndex = -1
		usage     *wireUsage
		delivered bool
		finished  bool
	)
	build := func() llm.Response {
		resp.Text = text.String()
		resp.ToolCalls = resp.ToolCalls[:0]
		idx := make([]int, 0, len(calls))
		for i := range calls {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			resp.ToolCalls = append(resp.ToolCalls, *calls[i])
		}
		if len(resp.ToolCalls) == 0 {
			resp.ToolCalls = nil
		}
		p.finish(&resp, usage, req)
		return resp
	}

	events := newEventReader(body)
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			if finished {
				// Some servers end the stream without [DONE]; a finish reason is enough to know the answer is whole.
				return build(), delivered, nil
			}
			return build(), delivered, fmt.Errorf("stream ended before the answer was finished: %w: %w", llm.ErrUnavailable, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return build(), delivered, fmt.Errorf("read stream: %w: %w", llm.ErrUnavailable, err)
		}
		if ev.data == "[DONE]" {
			return build(), delivered, nil
		}
		var ch chatChunk
		if err := json.Unmarshal([]byte(ev.data), &ch); err != nil {
			return build(), delivered, fmt.Errorf("decode stream chunk %q: %w: %w", abbreviate(ev.data), llm.ErrUnavailable, err)
		}
		if ch.Error != nil || ev.name == "error" {
			e := &llm.HTTPError{Provider: p.name}
			if ch.Error != nil {
				e.Message, e.Type, e.Code = ch.Error.Message, ch.Error.Type, rawString(ch.Error.Code)
			} else {
				e.Message = ev.data
			}
			return build(), delivered, e
		}
		if ch.Model != "" {
			resp.Model = ch.Model
		}
		if ch.Usage != nil {
			usage = ch.Usage
		}
		if len(ch.Choices) == 0 {
			continue // the usage chunk
		}
		c := ch.Choices[0]
		if s := c.Delta.Content; s != nil && *s != "" {
			text.WriteString(*s)
			delivered = true
			onDelta(llm.Delta{Text: *s})
		} else if s := c.Delta.Refusal; s != nil && *s != "" {
			text.WriteString(*s)
			delivered, resp.Refused = true, true
			onDelta(llm.Delta{Text: *s})
		}
		for _, tc := range c.Delta.ToolCalls {
			i := toolCallIndex(tc, calls, lastIndex)
			lastIndex = i
			call, ok := calls[i]
			if !ok {
				call = &llm.ToolCall{}
				calls[i] = call
			}
			if tc.ID != "" {
				call.ID = tc.ID
			}
			if tc.Function.Name != "" {
				call.Name += tc.Function.Name
			}
			call.Arguments += tc.Function.Arguments
			delivered = true
			onDelta(llm.Delta{ToolCall: &llm.ToolCallDelta{Index: i, ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
		}
		if c.FinishReason != nil && *c.FinishReason != "" {
			resp.FinishReason = *c.FinishReason
			finished = true
		}
	}
}

// toolCallIndex places a tool call delta. OpenAI numbers them; for a server that does not, a delta with a new ID
// starts the next call and one without continues the last.
func toolCallIndex(tc wireToolCall, calls map[int]*llm.ToolCall, last int) int {
	if tc.Index != nil {
		return *tc.Index
	}
	if last < 0 || (tc.ID != "" && calls[last].ID != "" && calls[last].ID != tc.ID) {
		return len(calls)
	}
	return last
}

func abbreviate(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// event is one server-sent event.
type event struct {
	name string
	data string
}

// eventReader splits a text/event-stream into events: "field: value" lines up to a blank line; data lines are
// joined with newlines; comments (":" lines) and other fields are skipped.
type eventReader struct {
	r *bufio.Reader
}

func newEventReader(r io.Reader) *eventReader { return &eventReader{r: bufio.NewReaderSize(r, 16<<10)} }

func (er *eventReader) next() (event, error) {
	var (
		ev      event
		data    []string
		hasData bool
	)
	for {
		line, err := er.r.ReadString('\n')
		if err != nil && !(errors.Is(err, io.EOF) && line != "") {
			if errors.Is(err, io.EOF) && hasData {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			return event{}, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if hasData {
				ev.data = strings.Join(data, "\n")
				return ev, nil
			}
			ev = event{}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data = append(data, value)
			hasData = true
		case "event":
			ev.name = value
		}
	}
}
