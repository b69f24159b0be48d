package llmtest_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// The server is checked against OpenAI's own Go SDK, so that it cannot drift from the protocol together with our
// provider.

func officialClient(srv *llmtest.Server) openai.Client {
	return openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

func TestOfficialClientStreamsText(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("The random number is 23.").WithUsage(20, 7))
	client := officialClient(srv)

	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:         "gpt-4o",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Generate a random number")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	})
	var acc openai.ChatCompletionAccumulator
	var pieces []string
	for stream.Next() {
		chunk := stream.Current()
		if !acc.AddChunk(chunk) {
			t.Fatalf("the SDK's accumulator refused chunk %s", chunk.RawJSON())
		}
		if len(chunk.Choices) > 0 && chunk.Choices[0].Delta.Content != "" {
			pieces = append(pieces, chunk.Choices[0].Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if len(pieces) < 2 || strings.Join(pieces, "") != "The random number is 23." {
		t.Errorf("pieces = %q", pieces)
	}
	if got := acc.Choices[0].Message.Content; got != "The random number is 23." {
		t.Errorf("content = %q", got)
	}
	if acc.Choices[0].FinishReason != "stop" || acc.Usage.PromptTokens != 20 || acc.Usage.CompletionTokens != 7 || acc.Usage.TotalTokens != 27 {
		t.Errorf("finish %q usage %+v", acc.Choices[0].FinishReason, acc.Usage)
	}
}

func TestOfficialClientStreamsToolCalls(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.ToolCalls(
		llm.ToolCall{ID: "call_a", Name: "get_weather", Arguments: `{"location":"Zürich","unit":"celsius"}`},
		llm.ToolCall{ID: "call_b", Name: "get_time", Arguments: `{}`},
	))
	client := officialClient(srv)

	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather and time in Zürich")},
		Tools: []openai.ChatCompletionToolUnionParam{
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_weather"}),
			openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "get_time"}),
		},
	})
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if chunk := stream.Current(); !acc.AddChunk(chunk) {
			t.Fatalf("the SDK's accumulator refused chunk %s", chunk.RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Function.Name != "get_weather" ||
		calls[0].Function.Arguments != `{"location":"Zürich","unit":"celsius"}` || calls[1].Function.Name != "get_time" {
		t.Errorf("tool calls = %+v", calls)
	}
	if acc.Choices[0].FinishReason != "tool_calls" {
		t.Errorf("finish reason = %q", acc.Choices[0].FinishReason)
	}
	if got := srv.Requests()[0].Tools; len(got) != 2 || got[1].Name != "get_time" {
		t.Errorf("recorded tools = %+v", got)
	}
}

func TestOfficialClientNonStreamingAndErrors(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("Hello."), llmtest.Error(http.StatusTooManyRequests, "Rate limit reached").WithHeader("Retry-After", "1"))
	client := officialClient(srv)
	params := openai.ChatCompletionNewParams{
		Model:    "gpt-4o",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("Hi")},
		Stop:     openai.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\nQ:"}},
		Seed:     openai.Int(7),
	}
	resp, err := client.Chat.Completions.New(t.Context(), params)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Object != "chat.completion" || resp.Choices[0].Message.Content != "Hello." || resp.Usage.TotalTokens == 0 {
		t.Errorf("response = %s", resp.RawJSON())
	}
	req := srv.Requests()[0]
	if len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Stop[0] != "\nQ:" || *req.Seed != 7 {
		t.Errorf("recorded request = %+v", req)
	}

	_, err = client.Chat.Completions.New(t.Context(), params)
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Message != "Rate limit reached" {
		t.Errorf("error = %v, want the SDK's 429 error with the message", err)
	}
}

// The stream, byte for byte: every chunk a chat.completion.chunk with "usage": null, then a usage chunk with no
// choices, then [DONE].
func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("one two"))
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"count"}],"stream":true,"stream_options":{"include_usage":true}}`
	resp, err := http.Post(srv.URL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type = %q", ct)
	}
	var datas []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			t.Fatalf("line %q is not a data line", line)
		}
		datas = append(datas, data)
	}
	// role, "one", " two", finish, usage, [DONE]
	if len(datas) != 6 || datas[5] != "[DONE]" {
		t.Fatalf("events = %q", datas)
	}
	type chunk struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Choices []struct {
			Delta struct {
				Role    string  `json:"role"`
				Content *string `json:"content"`
			} `json:"delta"`
			FinishReason *string `json:"finish_reason"`
		} `json:"choices"`
		Usage json.RawMessage `json:"usage"`
	}
	var chunks []chunk
	for _, d := range datas[:5] {
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("chunk %s: %v", d, err)
		}
		if c.Object != "chat.completion.chunk" || c.ID == "" || (len(chunks) > 0 && c.ID != chunks[0].ID) {
			t.Errorf("chunk %s: object or id wrong", d)
		}
		chunks = append(chunks, c)
	}
	if chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("first chunk does not carry the role: %s", datas[0])
	}
	if *chunks[1].Choices[0].Delta.Content != "one" || *chunks[2].Choices[0].Delta.Content != " two" {
		t.Errorf("content chunks: %s %s", datas[1], datas[2])
	}
	if f := chunks[3].Choices[0].FinishReason; f == nil || *f != "stop" {
		t.Errorf("finish chunk: %s", datas[3])
	}
	for i := range 4 {
		if string(chunks[i].Usage) != "null" {
			t.Errorf("chunk %d usage = %s, want null", i, chunks[i].Usage)
		}
	}
	if len(chunks[4].Choices) != 0 || !strings.Contains(string(chunks[4].Usage), `"total_tokens"`) {
		t.Errorf("usage chunk: %s", datas[4])
	}
	if !strings.Contains(datas[4], `"choices":[]`) {
		t.Errorf("usage chunk must have an empty choices list: %s", datas[4])
	}
}

func TestHandleFuncAnswersByPrompt(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("scripted first"))
	srv.HandleFunc(func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("you said: " + r.LastMessage().Content)
	})
	client := officialClient(srv)
	for _, c := range []struct{ ask, want string }{{"a", "scripted first"}, {"b", "you said: b"}, {"c", "you said: c"}} {
		resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(c.ask)},
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Choices[0].Message.Content; got != c.want {
			t.Errorf("asked %q, got %q, want %q", c.ask, got, c.want)
		}
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests recorded", n)
	}
}

func TestServerRejectsWhatOpenAIRejects(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	cases := map[string]struct {
		path, body string
		status     int
	}{
		"unknown path":                  {"/embeddingz", `{}`, 404},
		"not JSON":                      {"/chat/completions", `{"model":`, 400},
		"no model":                      {"/chat/completions", `{"messages":[{"role":"user","content":"hi"}]}`, 400},
		"no messages":                   {"/chat/completions", `{"model":"m","messages":[]}`, 400},
		"stream_options, no stream":     {"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream_options":{"include_usage":true}}`, 400},
		"parallel_tool_calls, no tools": {"/chat/completions", `{"model":"m","messages":[{"role":"user","content":"hi"}],"parallel_tool_calls":false}`, 400},
	}
	for name, c := range cases {
		resp, err := http.Post(srv.URL+c.path, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		var e struct {
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		decodeErr := json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != c.status || decodeErr != nil || e.Error.Message == "" || e.Error.Type == "" {
			t.Errorf("%s: status %d (want %d), error object %+v (%v)", name, resp.StatusCode, c.status, e, decodeErr)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d invalid requests were recorded", n)
	}
}

func TestMaxTokensCutsTheAnswer(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer(t)
	srv.Enqueue(llmtest.Text("tiktoken is great!"))
	client := officialClient(srv)
	resp, err := client.Chat.Completions.New(t.Context(), openai.ChatCompletionNewParams{
		Model: "gpt-4o", MaxTokens: openai.Int(4),
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Choices[0]; got.Message.Content != "tiktoken is" || got.FinishReason != "length" || resp.Usage.CompletionTokens != 4 {
		t.Errorf("content %q finish %q usage %+v", got.Message.Content, got.FinishReason, resp.Usage)
	}
}
