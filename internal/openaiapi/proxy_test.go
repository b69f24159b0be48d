package openaiapi_test

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// proxyClient is the official SDK pointed at Fixie's OpenAI proxy with a token as its key, as the Fixie SDK sets
// up the openai package for an agent.
func proxyClient(n *platformtest.Node, token string) openai.Client {
	return openai.NewClient(option.WithBaseURL(n.URL+"/api/openai-proxy/v1/"), option.WithAPIKey(token), option.WithMaxRetries(0))
}

func agentToken(t *testing.T, n *platformtest.Node, account string) string {
	t.Helper()
	tok, err := n.Signer.AgentToken(t.Context(), auth.AgentClaims{User: account, AgentID: "agt_helper", AgentName: "tester/helper"})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestOpenAIProxyWithTheOfficialSDK: an agent's model calls through the proxy reach the platform's model server
// with the platform's key (never the agent's token), streamed or not, tool calls included, and its embeddings come
// from the platform's embedder.
func TestOpenAIProxyWithTheOfficialSDK(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	p, err := e.node.Keys.Authenticate(ctx, e.key)
	if err != nil {
		t.Fatal(err)
	}
	client := proxyClient(e.node, agentToken(t, e.node, p.AccountID))

	e.model.Enqueue(llmtest.Text("Hello from the model server."))
	c, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.SystemMessage("Be brief."), openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if len(c.Choices) != 1 || c.Choices[0].Message.Content != "Hello from the model server." || c.Choices[0].FinishReason != "stop" ||
		c.Model != "gpt-4o-mini" || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Usage.TotalTokens == 0 {
		t.Fatalf("completion %s", c.RawJSON())
	}
	got := e.model.Requests()[0]
	if got.Model != "gpt-4o-mini" || len(got.Messages) != 2 || got.Messages[1].Content != "hi" ||
		got.Header.Get("Authorization") != "Bearer sk-test-upstream" {
		t.Fatalf("the model server got model %q, messages %+v, authorization %q", got.Model, got.Messages, got.Header.Get("Authorization"))
	}

	// Streamed, with usage, as the SDK accumulates it.
	e.model.Enqueue(llmtest.Text("One, two, three."))
	stream := client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("count")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	var acc openai.ChatCompletionAccumulator
	chunks := 0
	for stream.Next() {
		acc.AddChunk(stream.Current())
		chunks++
	}
	if err := stream.Err(); err != nil {
		t.Fatal(apiErr(err))
	}
	if acc.Choices[0].Message.Content != "One, two, three." || acc.Usage.TotalTokens == 0 || chunks < 4 {
		t.Fatalf("streamed %q in %d chunks, usage %+v", acc.Choices[0].Message.Content, chunks, acc.Usage)
	}

	// A streamed tool call.
	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`}))
	stream = client.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("weather in Oslo?")},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "get_weather", Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}}})}})
	acc = openai.ChatCompletionAccumulator{}
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		t.Fatal(apiErr(err))
	}
	calls := acc.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Oslo"}` ||
		acc.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("streamed tool calls %+v, finish %q", calls, acc.Choices[0].FinishReason)
	}
	if tools := e.model.Requests()[2].Tools; len(tools) != 1 || tools[0].Name != "get_weather" {
		t.Fatalf("the model server got tools %+v", tools)
	}

	// Embeddings come from the platform's embedder, and say which.
	emb, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"red apples", "green pears"}}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	dim := e.node.Embedder.Dim()
	if len(emb.Data) != 2 || len(emb.Data[0].Embedding) != dim || emb.Data[1].Index != 1 || emb.Model != e.node.Embedder.Name() ||
		emb.Usage.PromptTokens == 0 {
		t.Fatalf("embeddings: %d vectors, model %q, usage %+v", len(emb.Data), emb.Model, emb.Usage)
	}
	want, _ := e.node.Embedder.Embed(ctx, []string{"green pears"})
	if math.Abs(emb.Data[1].Embedding[0]-float64(want[0][0])) > 1e-6 {
		t.Fatalf("the vector of %q is not the embedder's", "green pears")
	}
	// The SDKs ask for base64 to save bytes: little-endian float32s.
	r := e.node.Do(t, agentToken(t, e.node, p.AccountID), "POST", "/api/openai-proxy/v1/embeddings",
		map[string]any{"model": "text-embedding-3-small", "input": "green pears", "encoding_format": "base64"})
	var b64 struct{ Data []struct{ Embedding string } }
	r.JSON(t, &b64)
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].Embedding)
	if r.Status != 200 || err != nil || len(raw) != 4*dim || math.Float32frombits(binary.LittleEndian.Uint32(raw)) != want[0][0] {
		t.Fatalf("base64 embeddings: %d %.200s", r.Status, r.Body)
	}
}

// TestOpenAIProxyRefusals: the proxy is for agents, checks what it is sent as OpenAI does, counts each call against
// the user's daily quota, and passes on what the model server refused.
func TestOpenAIProxyRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	k := e.node.CreateAccount(t, commands.NewAccount{Name: "thrifty", DailyQueryLimit: 2})
	token := agentToken(t, e.node, k.AccountID)
	client := proxyClient(e.node, token)
	chat := openai.ChatCompletionNewParams{Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}}

	withKey, anonymous := proxyClient(e.node, e.key), proxyClient(e.node, "not-a-token")
	_, err := withKey.Chat.Completions.New(ctx, chat)
	wantAPIError(t, err, http.StatusForbidden, "")
	_, err = anonymous.Chat.Completions.New(ctx, chat)
	wantAPIError(t, err, http.StatusUnauthorized, "")
	for _, c := range []struct {
		body  string
		param string
	}{
		{`{"messages":[{"role":"user","content":"hi"}]}`, "model"},
		{`{"model":"gpt-4o-mini","messages":[]}`, "messages"},
		{`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"n":2}`, "n"},
		{`{"model":"gpt-4o-mini","messages":[{"role":"user","content":7}]}`, "messages[0].content"},
	} {
		r := e.node.Do(t, token, "POST", "/api/openai-proxy/v1/chat/completions", c.body)
		if body := checkErrorBody(t, r.Status, r.Body); r.Status != 400 || string(body.Error.Param) != `"`+c.param+`"` {
			t.Errorf("%s: %d %s, want 400 naming %s", c.body, r.Status, r.Body, c.param)
		}
	}
	if r := e.node.Do(t, token, "POST", "/api/openai-proxy/v1/embeddings", `{"model":"m","input":[[1,2,3]]}`); r.Status != 400 {
		t.Errorf("token IDs to embed: %d %s, want 400", r.Status, r.Body)
	}
	if len(e.model.Requests()) != 0 {
		t.Fatal("a refused request reached the model server")
	}

	// What the model server refuses comes back as its refusal; both calls count, and the third is over the quota.
	e.model.Enqueue(llmtest.Error(400, "This model's maximum context length is 8 tokens."), llmtest.Text("Fine."))
	_, err = client.Chat.Completions.New(ctx, chat)
	if e := wantAPIError(t, err, http.StatusBadRequest, ""); !strings.Contains(e.Message, "maximum context length") {
		t.Errorf("the model server's refusal: %q", e.Message)
	}
	if _, err := client.Chat.Completions.New(ctx, chat); err != nil {
		t.Fatal(apiErr(err))
	}
	_, err = client.Chat.Completions.New(ctx, chat)
	if e := wantAPIError(t, err, http.StatusTooManyRequests, ""); e.Code != "rate_limit_exceeded" {
		t.Errorf("over the daily quota: %s", e.RawJSON())
	}
}

// TestOpenAIProxyOfflineModel: with no model server configured the offline model answers, and says so in "model".
func TestOpenAIProxyOfflineModel(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "offline")
	client := proxyClient(n, agentToken(t, n, p.AccountID))
	c, err := client.Chat.Completions.New(ctxFor(t), openai.ChatCompletionNewParams{
		Model: "gpt-4o-mini", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if c.Model != "offline" || c.Choices[0].Message.Content != offline.Notice {
		t.Fatalf("completion %s", c.RawJSON())
	}
}

// TestAgentCallsTheModelThroughTheProxy is the Fixie SDK's story: an agent answering a query calls the model through
// the proxy with the very token the platform sent it, for the query's user.
func TestAgentCallsTheModelThroughTheProxy(t *testing.T) {
	t.Parallel()
	upstream := llmtest.NewServer(t)
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		// The agent's own few-shots run on the offline model; what it asks through the proxy goes to the server.
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = upstream.URL, "sk-test-upstream", "offline"
	}))
	p, _ := n.NewAccount(t, "ada")
	upstream.Enqueue(llmtest.Text("a haiku about the sea"))
	verifier, err := agentkit.NewVerifier(n.URL+"/.well-known/jwks.json", auth.FixieAudience, agentkit.WithAgentID("ada/poet"))
	if err != nil {
		t.Fatal(err)
	}
	agent, err := agentkit.New(agentkit.Agent{
		BasePrompt: "I write poems.",
		FewShots:   []string{"Q: Write a poem about the moon\nAsk Func[poem]: the moon\nFunc[poem] says: a poem\nA: a poem"},
		Funcs: map[string]agentkit.Func{"poem": func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
			client := proxyClient(n, c.Token.Raw)
			resp, err := client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
				Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Write a poem about " + c.Message.Text)}})
			if err != nil {
				return agentproto.Message{}, err
			}
			return agentproto.Message{Text: resp.Choices[0].Message.Content}, nil
		}},
	}, agentkit.WithVerifier(verifier))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(agent)
	t.Cleanup(srv.Close)
	if _, err := n.RegisterAgent(ctxFor(t), p, commands.AgentInput{Handle: "poet", FuncURL: &srv.URL}); err != nil {
		t.Fatal(err)
	}
	s, err := n.SessionCommands.Create(ctxFor(t), p, commands.NewSession{FrontendAgent: "poet"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SessionCommands.Post(ctxFor(t), p, commands.NewSessionMessage{Session: s.ID, Text: "Write a poem about the sea"}); err != nil {
		t.Fatal(err)
	}
	var answer string
	waittest.Until(t, "the session's answer", func() bool {
		ls, _, err := n.Sessions.Get(ctxFor(t), s.ID, eventstore.Fresh)
		if err != nil || len(ls.Messages) < 2 {
			return false
		}
		answer = ls.Messages[1].Text
		return true
	})
	if answer != "a haiku about the sea" {
		t.Fatalf("answer %q", answer)
	}
	if got := upstream.Requests(); len(got) != 1 || got[0].Messages[0].Content != "Write a poem about the sea" {
		t.Fatalf("the model server got %+v", got)
	}
}
