package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// bagEmbedder is a small deterministic embedder for these tests: hashed, lower-cased words, L2-normalised. (The
// platform's own embedders live in internal/embedding; the offline model only needs the interface.)
type bagEmbedder struct {
	calls atomic.Int64
	texts atomic.Int64
}

const bagDim = 256

func (*bagEmbedder) Name() string { return "test-bag" }
func (*bagEmbedder) Dim() int     { return bagDim }
func (e *bagEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	e.texts.Add(int64(len(texts)))
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, bagDim)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%bagDim]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n == 0 {
			v[0], n = 1, 1
		}
		for k := range v {
			v[k] /= float32(math.Sqrt(n))
		}
		out[i] = v
	}
	return out, nil
}

// Seed 001: the genrand agent of Fixie's agent protocol.
const genrandExample = "Q: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\nA: The random number is 17."

// step asks the offline model for the next line the way the Code Shot executor does: the prompt's messages, its
// stop sequences, streaming.
func step(t *testing.T, p *offline.Provider, cs llm.CodeShotPrompt) string {
	t.Helper()
	var streamed strings.Builder
	pieces := 0
	resp, err := p.Complete(t.Context(), llm.Request{Model: "offline", Messages: cs.Messages(), Stop: llm.CodeShotStop()},
		func(d llm.Delta) { streamed.WriteString(d.Text); pieces++ })
	if err != nil {
		t.Fatal(err)
	}
	if streamed.String() != resp.Text {
		t.Errorf("streamed %q, answered %q", streamed.String(), resp.Text)
	}
	if want := len(resp.Text) / 40; pieces < want {
		t.Errorf("answer %q came in %d piece(s), want pieces of a few words (at least %d)", resp.Text, pieces, want)
	}
	if resp.Model != "offline" || resp.FinishReason != llm.FinishStop || resp.Usage.CompletionTokens != tokens.Count("offline", resp.Text) {
		t.Errorf("response %+v", resp)
	}
	return resp.Text
}

func TestGenrandOverThreeTurns(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	cs := llm.CodeShotPrompt{
		BasePrompt: "I am an agent that generates random numbers.",
		Examples: []string{
			genrandExample,
			"Q: Flip a coin\nAsk Func[coin]: flip\nFunc[coin] says: heads\nA: The coin landed heads.",
		},
		Transcript: []string{"Q: Generate a random number between 5 and 50"},
	}
	if got, want := step(t, p, cs), "Ask Func[genrand]: 5, 50"; got != want {
		t.Fatalf("turn 1 = %q, want %q", got, want)
	}
	// The executor calls the func and appends its real result.
	cs.Transcript = append(cs.Transcript, "Ask Func[genrand]: 5, 50", "Func[genrand] says: 23")
	if got, want := step(t, p, cs), "A: The random number is 23."; got != want {
		t.Fatalf("turn 2 = %q, want %q", got, want)
	}
	// The next query in the same conversation has the finished exchange as history.
	cs.History = []string{strings.Join(append(cs.Transcript, "A: The random number is 23."), "\n")}
	cs.Transcript = []string{"Q: Flip a coin please"}
	if got, want := step(t, p, cs), "Ask Func[coin]: flip"; got != want {
		t.Fatalf("turn 3 = %q, want %q", got, want)
	}
	cs.Transcript = append(cs.Transcript, "Ask Func[coin]: flip", "Func[coin] says: tails")
	if got, want := step(t, p, cs), "A: The coin landed tails."; got != want {
		t.Fatalf("turn 3 answer = %q, want %q", got, want)
	}
}

func TestStockQuoteFewShots(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	cs := llm.CodeShotPrompt{
		BasePrompt: "I am an agent that answers questions about stock prices.",
		Examples:   stockExamples(t),
		Transcript: []string{"Q: What is the stock price for GOOG?"},
	}
	if got, want := step(t, p, cs), "Ask Func[quote]: GOOG"; got != want {
		t.Fatalf("step 1 = %q, want %q", got, want)
	}
	cs.Transcript = append(cs.Transcript, "Ask Func[quote]: GOOG", "Func[quote] says: 105.22")
	// "current" became "stock" (the query's word), SYMBOL became GOOG, and the example's price the real one,
	// keeping the example's "$" around the number the func returned bare.
	if got, want := step(t, p, cs), "A: The stock price for GOOG is $105.22."; got != want {
		t.Fatalf("step 2 = %q, want %q", got, want)
	}

	cs.Transcript = []string{"Q: MSFT share price"}
	if got, want := step(t, p, cs), "Ask Func[quote]: MSFT"; got != want {
		t.Fatalf("share price = %q, want %q", got, want)
	}
	cs.Transcript = append(cs.Transcript, "Ask Func[quote]: MSFT", "Func[quote] says: $411.20")
	if got, want := step(t, p, cs), "A: The share price for MSFT is $411.20."; got != want {
		t.Fatalf("share price answer = %q, want %q", got, want)
	}
}

func TestThoughtLinesOneAtATime(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	cs := llm.CodeShotPrompt{
		Examples: []string{"Q: What is the weather in Paris?\nThought: I should ask the weather agent about Paris\n" +
			"Ask Agent[weather]: Paris\nAgent[weather] says: Sunny, 23 degrees\nA: It is sunny in Paris, 23 degrees."},
		Transcript: []string{"Q: What is the weather in Oslo?"},
	}
	want := []string{
		"Thought: I should ask the weather agent about Oslo",
		"Ask Agent[weather]: Oslo",
	}
	for _, w := range want {
		got := step(t, p, cs)
		if got != w {
			t.Fatalf("next line = %q, want %q", got, w)
		}
		cs.Transcript = append(cs.Transcript, got)
	}
	cs.Transcript = append(cs.Transcript, "Agent[weather] says: Rain, 9 degrees")
	if got, want := step(t, p, cs), "A: It is Rain in Oslo, 9 degrees."; got != want {
		t.Fatalf("answer = %q, want %q", got, want)
	}
}

func TestPlainChatGetsTheNotice(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	var streamed strings.Builder
	resp, err := p.Complete(t.Context(), llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a helpful assistant."},
		{Role: llm.RoleUser, Content: "What is the capital of France?"},
	}}, func(d llm.Delta) { streamed.WriteString(d.Text) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != offline.Notice || streamed.String() != offline.Notice {
		t.Errorf("answer = %q", resp.Text)
	}
	for _, want := range []string{"offline model", "not a language model", "Code Shot", "OPENAI_BASE_URL", "OPENAI_API_KEY", "provider/name"} {
		if !strings.Contains(resp.Text, want) {
			t.Errorf("notice does not mention %q", want)
		}
	}
	if resp.Model != "offline" {
		t.Errorf("model = %q: the offline model must not answer in another model's name", resp.Model)
	}
	if !resp.Refused {
		t.Errorf("the notice is not marked as a refusal: a caller could store it as an answer")
	}
	if resp.Usage.PromptTokens != tokens.CountMessages("gpt-4o", []llm.Message{
		{Role: llm.RoleSystem, Content: "You are a helpful assistant."},
		{Role: llm.RoleUser, Content: "What is the capital of France?"},
	}) || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Errorf("usage = %+v", resp.Usage)
	}
}

// "help" and "What can you do?" are answered with the agents the front agent's system message lists; without such a
// list, and for any other chat, with the notice.
func TestHelpListsTheAgents(t *testing.T) {
	t.Parallel()
	p := offline.New(nil)
	list := "- calc: Does arithmetic. Try \"What is 12 times 7?\"\n- genrand: Try \"Generate a random number between 0 and 19.\""
	ask := func(system, user string) llm.Response {
		resp, err := p.Complete(t.Context(), llm.Request{Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	directory := "You are Fixie.\n\n" + llm.AgentsHeading + "\n" + list
	for _, q := range []string{"help", "What can you do?", "Hi! What can you do for me?", "help please"} {
		resp := ask(directory, q)
		if !strings.Contains(resp.Text, list) || !strings.Contains(resp.Text, "OPENAI_API_KEY") || resp.Refused {
			t.Errorf("%q answered %q (refused %v), want the agents listed", q, resp.Text, resp.Refused)
		}
	}
	if resp := ask("You are Fixie.\n\n"+llm.AgentsHeading+"\n(none)", "help"); !strings.Contains(resp.Text, "no agent is registered") {
		t.Errorf("help with no agents answered %q", resp.Text)
	}
	for _, c := range [][2]string{{directory, "What is the capital of France?"}, {directory, "help me with my taxes"},
		{"You are a helpful assistant.", "help"}} {
		if resp := ask(c[0], c[1]); resp.Text != offline.Notice || !resp.Refused {
			t.Errorf("%q answered %q, want the notice", c[1], resp.Text)
		}
	}
	if n := len(offline.Notice); n > 400 {
		t.Errorf("the notice is %d characters: say it in two sentences", n)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	cs := llm.CodeShotPrompt{Examples: stockExamples(t), Transcript: []string{"Q: Price for AAPL"}}
	first := step(t, offline.New(&bagEmbedder{}), cs)
	for range 5 {
		if got := step(t, offline.New(&bagEmbedder{}), cs); got != first {
			t.Fatalf("answers differ: %q then %q", first, got)
		}
	}
}

func TestExampleVectorsAreReused(t *testing.T) {
	t.Parallel()
	emb := &bagEmbedder{}
	p := offline.New(emb)
	cs := llm.CodeShotPrompt{Examples: stockExamples(t), Transcript: []string{"Q: Price for AAPL"}}
	step(t, p, cs)
	cs.Transcript = append(cs.Transcript, "Ask Func[quote]: AAPL", "Func[quote] says: $1.00")
	step(t, p, cs)
	// 4 texts the first step (the question and 3 examples), none new the second.
	if got := emb.texts.Load(); got != 4 {
		t.Errorf("embedded %d texts, want 4", got)
	}
}

func TestWithoutEmbedderComparesWords(t *testing.T) {
	t.Parallel()
	p := offline.New(nil)
	cs := llm.CodeShotPrompt{Examples: stockExamples(t), Transcript: []string{"Q: What is the current price for TSLA?"}}
	if got, want := step(t, p, cs), "Ask Func[quote]: TSLA"; got != want {
		t.Errorf("next line = %q, want %q", got, want)
	}
}

func TestNoExamplesAnswersAtOnce(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	got := step(t, p, llm.CodeShotPrompt{Transcript: []string{"Q: anything"}})
	if !strings.HasPrefix(got, "A: ") || !strings.Contains(got, "offline model") {
		t.Errorf("answer = %q, want an A: line explaining", got)
	}
}

func TestToolChoice(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	tools := []llm.Tool{
		{Name: "get_time", Parameters: json.RawMessage(`{"type":"object","properties":{"tz":{"type":"string"}}}`)},
		{Name: "get_weather", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	}
	ask := func(choice string) (llm.Response, error) {
		return p.Complete(t.Context(), llm.Request{Model: "m", Tools: tools, ToolChoice: choice,
			Messages: []llm.Message{{Role: llm.RoleUser, Content: "what time is it?"}}}, nil)
	}
	resp, err := ask("auto")
	if err != nil || len(resp.ToolCalls) != 0 || resp.Text != offline.Notice {
		t.Errorf("auto: %+v, %v; want the notice and no call", resp, err)
	}
	resp, err = ask("get_time")
	if err != nil || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Name != "get_time" || resp.ToolCalls[0].Arguments != "{}" ||
		resp.FinishReason != llm.FinishToolCalls {
		t.Errorf("named function without required parameters: %+v, %v", resp, err)
	}
	again, _ := ask("get_time")
	if again.ToolCalls[0].ID != resp.ToolCalls[0].ID {
		t.Errorf("call IDs differ for the same request: %q, %q", resp.ToolCalls[0].ID, again.ToolCalls[0].ID)
	}
	for _, choice := range []string{"required", "get_weather", "no_such_tool"} {
		if _, err := ask(choice); !errors.Is(err, llm.ErrBadRequest) {
			t.Errorf("tool_choice %q: error = %v, want ErrBadRequest", choice, err)
		}
	}
}

func TestStopAndMaxTokens(t *testing.T) {
	t.Parallel()
	p := offline.New(nil)
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	resp, err := p.Complete(t.Context(), llm.Request{Model: "gpt-4o", Messages: msgs, Stop: []string{", not"}}, nil)
	if err != nil || resp.Text != "I am Contrail's offline model" {
		t.Errorf("stop: %q, %v", resp.Text, err)
	}
	resp, err = p.Complete(t.Context(), llm.Request{Model: "gpt-4o", Messages: msgs, MaxTokens: 3}, nil)
	if err != nil || resp.FinishReason != llm.FinishLength || resp.Usage.CompletionTokens != 3 {
		t.Errorf("max tokens: %+v, %v", resp, err)
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	p := offline.New(&bagEmbedder{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

type failingEmbedder struct{}

func (failingEmbedder) Name() string { return "broken" }
func (failingEmbedder) Dim() int     { return 1 }
func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("connection refused")
}

func TestEmbedderFailureIsReported(t *testing.T) {
	t.Parallel()
	p := offline.New(failingEmbedder{})
	cs := llm.CodeShotPrompt{Examples: stockExamples(t), Transcript: []string{"Q: Price for AAPL"}}
	_, err := p.Complete(t.Context(), llm.Request{Messages: cs.Messages()}, nil)
	if err == nil || !strings.Contains(err.Error(), "broken") || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("error = %v, want one naming the embedder and its failure", err)
	}
}

// stockExamples are seed 000's stock quote agent's three few-shots.
func stockExamples(t testing.TB) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "codeshot", "testdata", "stockquote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return llm.SplitFewShots(string(b))
}
