package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/openai"
	"github.com/contrailhq/contrail/internal/logtest"
)

// newProvider points a provider at a scripted server, with backoff short enough for tests.
func newProvider(t *testing.T, srv *llmtest.Server, opts ...openai.Option) *openai.Provider {
	t.Helper()
	opts = append([]openai.Option{openai.WithBackoff(time.Millisecond, 2*time.Millisecond)}, opts...)
	p, err := openai.New(srv.URL, "sk-test", nil, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func userAsks(text string) llm.Request {
	return llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: llm.RoleUser, Content: text}}}
}

// collect gathers the deltas a stream delivers.
type collect struct {
	deltas []llm.Delta
}

func (c *collect) on(d llm.Delta) { c.deltas = append(c.deltas, d) }

func (c *collect) texts() []string {
	var out []string
	for _, d := range c.deltas {
		if d.Text != "" {
			out = append(out, d.Text)
		}
	}
	return out
}

func TestStreamedTextArrivesInOrder(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("").WithChunks("The ", "random ", "number ", "is ", "23.").WithUsage(31, 5))
	p := newProvider(t, srv)

	var got collect
	resp, err := p.Complete(t.Context(), userAsks("pick a number"), got.on)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"The ", "random ", "number ", "is ", "23."}; !reflect.DeepEqual(got.texts(), want) {
		t.Errorf("deltas = %q, want %q", got.texts(), want)
	}
	if resp.Text != "The random number is 23." || resp.FinishReason != llm.FinishStop || resp.Model != "gpt-4o" {
		t.Errorf("response = %+v", resp)
	}
	if want := (llm.Usage{PromptTokens: 31, CompletionTokens: 5, TotalTokens: 36}); resp.Usage != want {
		t.Errorf("usage = %+v, want the server's %+v", resp.Usage, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].IncludeUsage {
		t.Errorf("request did not stream with include_usage: %+v", reqs)
	}
}

func TestStreamedToolCallsReassembled(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	calls := []llm.ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: `{"location":"Paris, France","unit":"celsius"}`},
		{ID: "call_2", Name: "get_time", Arguments: `{"timezone":"Europe/Paris — CET"}`},
	}
	srv.Enqueue(llmtest.ToolCalls(calls...))
	p := newProvider(t, srv)

	var got collect
	resp, err := p.Complete(t.Context(), userAsks("weather and time in Paris?"), got.on)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.ToolCalls, calls) {
		t.Errorf("tool calls = %+v, want %+v", resp.ToolCalls, calls)
	}
	if resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("finish reason = %q", resp.FinishReason)
	}
	// The deltas carry the same calls in pieces: ID and name once, the arguments in several chunks.
	args := map[int]string{}
	chunks := map[int]int{}
	for _, d := range got.deltas {
		if d.ToolCall == nil {
			t.Fatalf("unexpected text delta %q", d.Text)
		}
		tc := d.ToolCall
		if tc.ID != "" && (tc.ID != calls[tc.Index].ID || tc.Name != calls[tc.Index].Name) {
			t.Errorf("delta %+v names the wrong call", tc)
		}
		args[tc.Index] += tc.Arguments
		chunks[tc.Index]++
	}
	for i, c := range calls {
		if args[i] != c.Arguments || chunks[i] < 2 {
			t.Errorf("call %d: arguments %q in %d chunks, want %q in several", i, args[i], chunks[i], c.Arguments)
		}
	}
}

func TestSettingsSentOnTheWire(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("ok"))
	p := newProvider(t, srv)

	temp, topP, seed, parallel := 0.0, 0.9, int64(42), false
	req := llm.Request{
		Model: "gpt-4o-mini",
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "You are terse."},
			{Role: llm.RoleUser, Content: "Weather in Paris?"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_9", Name: "get_weather", Arguments: `{"location":"Paris"}`}}},
			{Role: llm.RoleTool, ToolCallID: "call_9", Content: "sunny"},
		},
		Tools: []llm.Tool{{Name: "get_weather", Description: "Get the weather",
			Parameters: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)}},
		ToolChoice:        "get_weather",
		ParallelToolCalls: &parallel,
		Temperature:       &temp,
		TopP:              &topP,
		MaxTokens:         100,
		Stop:              []string{"\nFunc[", "\nQ:"},
		ResponseFormat:    json.RawMessage(`{"type":"json_object"}`),
		Seed:              &seed,
	}
	if _, err := p.Complete(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if got.Model != "gpt-4o-mini" || got.Stream || got.IncludeUsage {
		t.Errorf("model %q stream %v include_usage %v", got.Model, got.Stream, got.IncludeUsage)
	}
	if !reflect.DeepEqual(got.Messages, req.Messages) {
		t.Errorf("messages = %+v\nwant %+v", got.Messages, req.Messages)
	}
	if len(got.Tools) != 1 || got.Tools[0].Name != "get_weather" || string(got.Tools[0].Parameters) != string(req.Tools[0].Parameters) {
		t.Errorf("tools = %+v", got.Tools)
	}
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := json.Unmarshal(got.ToolChoice, &choice); err != nil || choice.Type != "function" || choice.Function.Name != "get_weather" {
		t.Errorf("tool_choice = %s", got.ToolChoice)
	}
	if got.ParallelToolCalls == nil || *got.ParallelToolCalls {
		t.Errorf("parallel_tool_calls = %v", got.ParallelToolCalls)
	}
	if got.Temperature == nil || *got.Temperature != 0 || got.TopP == nil || *got.TopP != 0.9 {
		t.Errorf("temperature %v top_p %v; a temperature of 0 must be sent, not left out", got.Temperature, got.TopP)
	}
	if got.MaxTokens != 100 || got.MaxCompletionTokens != 0 {
		t.Errorf("max_tokens %d max_completion_tokens %d", got.MaxTokens, got.MaxCompletionTokens)
	}
	if !reflect.DeepEqual(got.Stop, req.Stop) {
		t.Errorf("stop = %q", got.Stop)
	}
	if string(got.ResponseFormat) != `{"type":"json_object"}` || got.Seed == nil || *got.Seed != 42 {
		t.Errorf("response_format %s seed %v", got.ResponseFormat, got.Seed)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer sk-test" {
		t.Errorf("Authorization = %q", h)
	}
	// The assistant message that only called a tool has null content, as OpenAI sends it.
	var raw struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &raw); err != nil {
		t.Fatal(err)
	}
	if c := string(raw.Messages[2]["content"]); c != "null" {
		t.Errorf("content of a tool-calling assistant message = %s, want null", c)
	}
}

// TestImagesSentAsParts: a message with images goes as a list of parts, its text then an image_url part per image,
// as OpenAI's vision models take them; one without stays a plain string.
func TestImagesSentAsParts(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("A red heart."))
	p := newProvider(t, srv)
	const png = "data:image/png;base64,iVBORw0KGgo="
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Be brief."},
		{Role: llm.RoleUser, Content: "What is this?", Images: []llm.Image{{URL: png, Detail: "low"}, {URL: "https://example.test/b.png"}}},
	}}
	if _, err := p.Complete(t.Context(), req, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[0]
	if !reflect.DeepEqual(got.Messages, req.Messages) {
		t.Errorf("messages = %+v\nwant %+v", got.Messages, req.Messages)
	}
	var raw struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(got.Body, &raw); err != nil {
		t.Fatal(err)
	}
	want := `[{"type":"text","text":"What is this?"},{"type":"image_url","image_url":{"url":"` + png + `","detail":"low"}},` +
		`{"type":"image_url","image_url":{"url":"https://example.test/b.png"}}]`
	if c := string(raw.Messages[1].Content); c != want {
		t.Errorf("content = %s\nwant %s", c, want)
	}
	if c := string(raw.Messages[0].Content); c != `"Be brief."` {
		t.Errorf("content of a message without images = %s", c)
	}
}

func TestStopSequenceEndsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	// A model that would go on to write the func's reply itself; the stop sequence keeps it out.
	srv.Enqueue(llmtest.Text("Ask Func[genrand]: 5, 50\nFunc[genrand] says: 17"))
	p := newProvider(t, srv)
	req := userAsks("Generate a random number between 5 and 50")
	req.Stop = llm.CodeShotStop()
	var got collect
	resp, err := p.Complete(t.Context(), req, got.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Ask Func[genrand]: 5, 50" || strings.Join(got.texts(), "") != resp.Text {
		t.Errorf("text %q, deltas %q", resp.Text, got.texts())
	}
}

func TestNonStreamingAnswer(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("Hello there."), llmtest.ToolCalls(llm.ToolCall{Name: "get_time", Arguments: "{}"}))
	p := newProvider(t, srv)

	resp, err := p.Complete(t.Context(), userAsks("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello there." || resp.FinishReason != llm.FinishStop || resp.Usage.TotalTokens == 0 {
		t.Errorf("response = %+v", resp)
	}
	resp, err = p.Complete(t.Context(), userAsks("what time is it?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_time" || resp.ToolCalls[0].ID == "" || resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("response = %+v", resp)
	}
}

func TestRateLimitedThenRetriedAfterWhatTheServerAsked(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(
		llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for gpt-4o").WithHeader("Retry-After-Ms", "40"),
		llmtest.Error(http.StatusTooManyRequests, "Rate limit reached for gpt-4o").WithHeader("Retry-After", "0.03"),
		llmtest.Text("finally"),
	)
	var logs logtest.Buffer
	p, err := openai.New(srv.URL, "sk-test", nil, slog.New(slog.NewTextHandler(&logs, nil)), openai.WithBackoff(time.Millisecond, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var got collect
	resp, err := p.Complete(t.Context(), userAsks("hi"), got.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "finally" || len(srv.Requests()) != 3 {
		t.Errorf("text %q after %d requests, want 3", resp.Text, len(srv.Requests()))
	}
	// The waits are the server's, not the provider's own (1-2ms) backoff.
	for _, want := range []string{"wait=40ms", "wait=30ms"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not show %s:\n%s", want, logs.String())
		}
	}
}

func TestServerErrorThenRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Error(http.StatusInternalServerError, "The server had an error while processing your request."),
		llmtest.Error(http.StatusBadGateway, "bad gateway"), llmtest.Text("ok"))
	p := newProvider(t, srv)
	resp, err := p.Complete(t.Context(), userAsks("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "ok" || len(srv.Requests()) != 3 {
		t.Errorf("text %q after %d requests", resp.Text, len(srv.Requests()))
	}
}

func TestRetriesAreBounded(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	for range 3 {
		srv.Enqueue(llmtest.Error(http.StatusServiceUnavailable, "overloaded"))
	}
	srv.Enqueue(llmtest.Text("never asked for"))
	p := newProvider(t, srv, openai.WithMaxAttempts(3))
	_, err := p.Complete(t.Context(), userAsks("hi"), nil)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "overloaded") {
		t.Errorf("error = %v, want ErrUnavailable with the server's message", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
}

func TestBadRequestFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: http.StatusBadRequest, ErrorMessage: "Invalid value for 'temperature': must be at most 2.",
		ErrorParam: "temperature", ErrorCode: "invalid_value"}, llmtest.Text("never asked for"))
	p := newProvider(t, srv)
	_, err := p.Complete(t.Context(), userAsks("hi"), nil)
	var httpErr *llm.HTTPError
	if !errors.Is(err, llm.ErrBadRequest) || !errors.As(err, &httpErr) {
		t.Fatalf("error = %v, want an HTTPError that is ErrBadRequest", err)
	}
	if httpErr.Status != 400 || httpErr.Code != "invalid_value" || !strings.Contains(err.Error(), "must be at most 2") {
		t.Errorf("error = %+v", httpErr)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestUnauthorizedIsABadRequest(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: http.StatusUnauthorized, ErrorMessage: "Incorrect API key provided: sk-test.", ErrorCode: "invalid_api_key"})
	p := newProvider(t, srv)
	_, err := p.Complete(t.Context(), userAsks("hi"), nil)
	if !errors.Is(err, llm.ErrBadRequest) || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("error = %v", err)
	}
}

func TestRetryAfterLongerThanAllowedIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Error(http.StatusTooManyRequests, "You exceeded your current quota").WithHeader("Retry-After", "3600"),
		llmtest.Text("never asked for"))
	p := newProvider(t, srv)
	_, err := p.Complete(t.Context(), userAsks("hi"), nil)
	var httpErr *llm.HTTPError
	if !errors.Is(err, llm.ErrRateLimited) || !errors.As(err, &httpErr) || httpErr.RetryAfter != time.Hour {
		t.Errorf("error = %v, want ErrRateLimited with RetryAfter 1h", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCancelMidStream(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("one two three four five").HangAfter(2), llmtest.Text("never asked for"))
	p := newProvider(t, srv)

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var got collect
	resp, err := p.Complete(ctx, userAsks("count"), func(d llm.Delta) {
		got.on(d)
		if len(got.deltas) == 2 {
			cancel() // the server now holds the stream open; only the cancellation can end it
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	if resp.Text != "one two" {
		t.Errorf("partial text = %q, want %q", resp.Text, "one two")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Error(http.StatusTooManyRequests, "slow down").WithHeader("Retry-After", "30"), llmtest.Text("never asked for"))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Cancel as soon as the provider says it will wait: Complete must return then, not 30 seconds later.
	logs := &logtest.Buffer{OnWrite: func(line string) {
		if strings.Contains(line, "retrying") {
			cancel()
		}
	}}
	p, err := openai.New(srv.URL, "", nil, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(ctx, userAsks("hi"), nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestStreamBrokenAfterDeltasIsNotRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("one two three").DropAfter(2), llmtest.Text("a different answer"))
	p := newProvider(t, srv)
	var got collect
	resp, err := p.Complete(t.Context(), userAsks("count"), got.on)
	if !errors.Is(err, llm.ErrUnavailable) {
		t.Fatalf("error = %v, want ErrUnavailable", err)
	}
	if resp.Text != "one two" || strings.Join(got.texts(), "") != "one two" {
		t.Errorf("partial text %q, deltas %q", resp.Text, got.texts())
	}
	if n, pending := len(srv.Requests()), srv.Pending(); n != 1 || pending != 1 {
		t.Errorf("%d requests (%d replies left), want 1 (1)", n, pending)
	}
}

func TestStreamBrokenBeforeDeltasIsRetried(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("lost").DropAfter(0), llmtest.Text("kept"))
	p := newProvider(t, srv)
	var got collect
	resp, err := p.Complete(t.Context(), userAsks("hi"), got.on)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "kept" || !reflect.DeepEqual(got.texts(), []string{"kept"}) || len(srv.Requests()) != 2 {
		t.Errorf("text %q deltas %q after %d requests", resp.Text, got.texts(), len(srv.Requests()))
	}
}

func TestUsageCountedWhenServerGivesNone(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewServer(t)
		srv.Enqueue(llmtest.Text("hello world").WithoutUsage())
		p := newProvider(t, srv)
		var onDelta func(llm.Delta)
		if stream {
			onDelta = func(llm.Delta) {}
		}
		resp, err := p.Complete(t.Context(), userAsks("hello world"), onDelta)
		if err != nil {
			t.Fatal(err)
		}
		// o200k_base: 3 per message + "user" (1) + "hello world" (2) + 3 to prime the reply; the answer is 2.
		if want := (llm.Usage{PromptTokens: 9, CompletionTokens: 2, TotalTokens: 11}); resp.Usage != want {
			t.Errorf("stream=%v: usage = %+v, want %+v", stream, resp.Usage, want)
		}
	}
}

func TestMaxCompletionTokensWhenTheModelAsksForIt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Reply{Status: http.StatusBadRequest, ErrorParam: "max_tokens", ErrorCode: "unsupported_parameter",
		ErrorMessage: "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."},
		llmtest.Text("first"), llmtest.Text("second"))
	p := newProvider(t, srv, openai.WithMaxAttempts(1))
	req := userAsks("think")
	req.Model, req.MaxTokens = "o3-mini", 100
	for _, want := range []string{"first", "second"} {
		resp, err := p.Complete(t.Context(), req, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Text != want {
			t.Errorf("text %q, want %q", resp.Text, want)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (one refused, then two with the other field)", len(reqs))
	}
	if reqs[0].MaxTokens != 100 || reqs[1].MaxCompletionTokens != 100 || reqs[1].MaxTokens != 0 || reqs[2].MaxCompletionTokens != 100 {
		t.Errorf("token bounds sent: %d/%d, %d/%d, %d/%d", reqs[0].MaxTokens, reqs[0].MaxCompletionTokens,
			reqs[1].MaxTokens, reqs[1].MaxCompletionTokens, reqs[2].MaxTokens, reqs[2].MaxCompletionTokens)
	}
}

func TestConnectionRefusedIsUnavailable(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/v1"
	dead.Close()
	p, err := openai.New(url, "", nil, nil, openai.WithMaxAttempts(2), openai.WithBackoff(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(t.Context(), userAsks("hi"), nil)
	if !errors.Is(err, llm.ErrUnavailable) || !strings.Contains(err.Error(), "attempt 2 of 2") {
		t.Errorf("error = %v, want ErrUnavailable after 2 attempts", err)
	}
}

func TestNewRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "localhost:11434/v1", "ftp://example.test/v1", "http://"} {
		if _, err := openai.New(u, "", nil, nil); err == nil {
			t.Errorf("New(%q) accepted it", u)
		}
	}
}

// Servers other than OpenAI stream a little differently. These are written out by hand, byte for byte.
func TestOtherServersStreams(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		contentType string
		body        string
		wantText    string
		wantCalls   []llm.ToolCall
		wantErr     error
		wantRefused bool
	}{
		// A refusal is the answer's text, marked as one: a caller must not store it as something else.
		"a refusal, streamed": {
			body: `data: {"choices":[{"index":0,"delta":{"role":"assistant","refusal":"I can't help with that."},"finish_reason":"stop"}]}` + "\n\n" +
				"data: [DONE]\n\n",
			wantText:    "I can't help with that.",
			wantRefused: true,
		},
		"a refusal, not streamed": {
			contentType: "application/json",
			body:        `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"No."},"finish_reason":"stop"}]}`,
			wantText:    "No.",
			wantRefused: true,
		},
		"CRLF, comments, no [DONE] after the finish reason": {
			body: ": keep-alive\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"}}]}` + "\r\n\r\n" +
				`data: {"choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}` + "\r\n\r\n",
			wantText: "Hi there",
		},
		"tool calls without an index": {
			body: `data: {"choices":[{"delta":{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\""}}]}}]}` + "\n\n" +
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"delta":{"tool_calls":[{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}}]}` + "\n\n" +
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" + "data: [DONE]\n\n",
			wantCalls: []llm.ToolCall{{ID: "a", Name: "f", Arguments: `{"x":1}`}, {ID: "b", Name: "g", Arguments: "{}"}},
		},
		"an error event inside the stream": {
			body:    `data: {"error":{"message":"model crashed","type":"server_error"}}` + "\n\n",
			wantErr: llm.ErrUnavailable,
		},
		"cut before the answer finished": {
			body:     `data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}` + "\n\n",
			wantText: "Hi",
			wantErr:  llm.ErrUnavailable,
		},
		"a server that does not stream": {
			contentType: "application/json",
			body:        `{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"whole"},"finish_reason":"stop"}]}`,
			wantText:    "whole",
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				ct := c.contentType
				if ct == "" {
					ct = "text/event-stream"
				}
				w.Header().Set("Content-Type", ct)
				fmt.Fprint(w, c.body)
			}))
			defer srv.Close()
			p, err := openai.New(srv.URL, "", nil, nil, openai.WithMaxAttempts(1))
			if err != nil {
				t.Fatal(err)
			}
			var got collect
			resp, err := p.Complete(t.Context(), userAsks("hi"), got.on)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error = %v, want %v", err, c.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if resp.Text != c.wantText || strings.Join(got.texts(), "") != c.wantText {
				t.Errorf("text %q, deltas %q, want %q", resp.Text, got.texts(), c.wantText)
			}
			if !reflect.DeepEqual(resp.ToolCalls, c.wantCalls) {
				t.Errorf("tool calls %+v, want %+v", resp.ToolCalls, c.wantCalls)
			}
			if resp.Refused != c.wantRefused {
				t.Errorf("refused = %v, want %v", resp.Refused, c.wantRefused)
			}
		})
	}
}
