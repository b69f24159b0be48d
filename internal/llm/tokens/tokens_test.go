package tokens_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// The expected counts below are the ones published in OpenAI's cookbook ("How to count tokens with tiktoken"),
// which checked them against the API's own usage figures.

func TestCount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		model, text string
		want        int
	}{
		{"gpt-4", "tiktoken is great!", 6},       // cl100k: t|ik|token| is| great|!
		{"gpt-4o-mini", "tiktoken is great!", 6}, // o200k: t|ikt|oken| is| great|!
		{"gpt-4", "antidisestablishmentarianism", 6},
		{"gpt-4o", "antidisestablishmentarianism", 6},
		{"gpt-4", "2 + 2 = 4", 7},
		{"gpt-4o", "2 + 2 = 4", 7},
		{"gpt-3.5-turbo", "お誕生日おめでとう", 9},
		{"gpt-4o", "お誕生日おめでとう", 8},
		{"llama3", "お誕生日おめでとう", 8}, // unknown models count in o200k_base
		{"gpt-4o", "", 0},
	}
	for _, c := range cases {
		if got := tokens.Count(c.model, c.text); got != c.want {
			t.Errorf("Count(%q, %q) = %d, want %d", c.model, c.text, got, c.want)
		}
	}
}

func TestEncoding(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"gpt-4":                  tokens.Cl100kBase,
		"gpt-4-0613":             tokens.Cl100kBase,
		"gpt-4-turbo":            tokens.Cl100kBase,
		"gpt-3.5-turbo":          tokens.Cl100kBase,
		"text-embedding-3-small": tokens.Cl100kBase,
		"gpt-4o":                 tokens.O200kBase,
		"gpt-4o-mini":            tokens.O200kBase,
		"gpt-4.1":                tokens.O200kBase,
		"gpt-5":                  tokens.O200kBase,
		"o3-mini":                tokens.O200kBase,
		"llama3":                 tokens.O200kBase,
		"meta-llama/Llama-3-8B":  tokens.O200kBase,
		"":                       tokens.O200kBase,
	}
	for model, want := range cases {
		if got := tokens.Encoding(model); got != want {
			t.Errorf("Encoding(%q) = %s, want %s", model, got, want)
		}
	}
}

func TestCountMessages(t *testing.T) {
	t.Parallel()
	msgs := []llm.Message{
		{Role: "system", Content: "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."},
		{Role: "system", Name: "example_user", Content: "New synergies will help drive top-line growth."},
		{Role: "system", Name: "example_assistant", Content: "Things working well together will increase revenue."},
		{Role: "system", Name: "example_user", Content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."},
		{Role: "system", Name: "example_assistant", Content: "Let's talk later when we're less busy about how to do better."},
		{Role: "user", Content: "This late pivot means we don't have time to boil the ocean for the client deliverable."},
	}
	for model, want := range map[string]int{"gpt-3.5-turbo": 129, "gpt-4-0613": 129, "gpt-4": 129, "gpt-4o": 124, "gpt-4o-mini": 124} {
		if got := tokens.CountMessages(model, msgs); got != want {
			t.Errorf("CountMessages(%q) = %d, want %d", model, got, want)
		}
	}
	if got := tokens.CountMessages("gpt-4o", nil); got != 0 {
		t.Errorf("CountMessages(no messages) = %d, want 0", got)
	}
}

func TestCountTools(t *testing.T) {
	t.Parallel()
	tools := []llm.Tool{{
		Name:        "get_current_weather",
		Description: "Get the current weather in a given location",
		Parameters: json.RawMessage(`{
			"type": "object",
			"properties": {
				"location": {"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
				"unit": {"type": "string", "description": "The unit of temperature to return", "enum": ["celsius", "fahrenheit"]}
			},
			"required": ["location"]
		}`),
	}}
	msgs := []llm.Message{
		{Role: "system", Content: "You are a helpful assistant that can answer to questions about the weather."},
		{Role: "user", Content: "What's the weather like in San Francisco?"},
	}
	for model, want := range map[string]int{"gpt-3.5-turbo": 105, "gpt-4": 105, "gpt-4o": 101, "gpt-4o-mini": 101} {
		if got := tokens.CountMessages(model, msgs) + tokens.CountTools(model, tools); got != want {
			t.Errorf("messages+tools for %q = %d, want %d", model, got, want)
		}
	}
	if got := tokens.CountTools("gpt-4o", nil); got != 0 {
		t.Errorf("CountTools(no tools) = %d, want 0", got)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	got, cut := tokens.Truncate("gpt-4o", "tiktoken is great!", 4)
	if !cut || got != "tiktoken is" {
		t.Errorf("Truncate to 4 = %q, %v; want %q, true", got, cut, "tiktoken is")
	}
	got, cut = tokens.Truncate("gpt-4o", "tiktoken is great!", 6)
	if cut || got != "tiktoken is great!" {
		t.Errorf("Truncate to 6 = %q, %v; want the text uncut", got, cut)
	}
}

func BenchmarkCountMessages(b *testing.B) {
	msgs := []llm.Message{{Role: "user", Content: "Generate a random number between 5 and 50, and then tell me whether it is prime."}}
	for b.Loop() {
		tokens.CountMessages("gpt-4o", msgs)
	}
}

func TestUsage(t *testing.T) {
	t.Parallel()
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{{Role: "user", Content: "hello world"}}}
	// 3 per message + "user" (1) + "hello world" (2) + 3 to prime the reply; the answer "tiktoken is great!" is 6,
	// and a call adds its name and arguments.
	got := tokens.Usage(req, llm.Response{Text: "tiktoken is great!"})
	if want := (llm.Usage{PromptTokens: 9, CompletionTokens: 6, TotalTokens: 15}); got != want {
		t.Errorf("Usage = %+v, want %+v", got, want)
	}
	got = tokens.Usage(req, llm.Response{ToolCalls: []llm.ToolCall{{Name: "hello", Arguments: "hello world"}}})
	if got.CompletionTokens != 3 {
		t.Errorf("tool call completion tokens = %d, want 3", got.CompletionTokens)
	}
}

func TestSplitJoinsToText(t *testing.T) {
	t.Parallel()
	for _, enc := range []string{tokens.Cl100kBase, tokens.O200kBase} {
		for _, text := range []string{"tiktoken is great!", "お誕生日おめでとう", "a\r\n\tb  c 123456 ...\n\n", ""} {
			toks, err := tokens.Split(enc, text)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(toks, ""); got != text {
				t.Errorf("%s: Split(%q) joins to %q", enc, text, got)
			}
			if len(toks) != tokens.Count(map[string]string{tokens.Cl100kBase: "gpt-4", tokens.O200kBase: "gpt-4o"}[enc], text) {
				t.Errorf("%s: Split(%q) gives %d tokens, Count another number", enc, text, len(toks))
			}
		}
	}
}

// TestCounterRemembersWhatCountCounts: a remembered count is the count, for texts that are their own key, very long
// ones (keyed by digest), the same text under two encodings, and after the counter filled up and started afresh.
func TestCounterRemembersWhatCountCounts(t *testing.T) {
	t.Parallel()
	c := tokens.NewCounter(3)
	long := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 20)
	huge := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 2000) // past the length kept as a key
	texts := []string{"user", "hello world, how are you?", long, long + "!", huge, huge + "!", "user"}
	for round := 0; round < 3; round++ {
		for _, model := range []string{"gpt-4", "gpt-4o"} {
			for _, text := range texts {
				if got, want := c.Count(model, text), tokens.Count(model, text); got != want {
					t.Fatalf("round %d, %s, %.20q: counter says %d, Count %d", round, model, text, got, want)
				}
			}
		}
	}
	if got := c.Count("gpt-4o", ""); got != 0 {
		t.Fatalf("empty text: %d", got)
	}
}

// TestCounterUsageIsUsage: the counter's usage of a chat is Usage's, the first time (nothing remembered) and the
// next (everything remembered), with names, tool calls and a text too long to be its own key.
func TestCounterUsageIsUsage(t *testing.T) {
	t.Parallel()
	c := tokens.NewCounter(100)
	huge := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 2000)
	req := llm.Request{Model: "gpt-4o", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "You are terse."},
		{Role: llm.RoleUser, Content: "What is 2+2?", Name: "ada"},
		{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "add", Arguments: `{"a":2,"b":2}`}}},
		{Role: "tool", Content: "4", ToolCallID: "call_1"},
		{Role: llm.RoleUser, Content: huge},
	}}
	resp := llm.Response{Text: "Four."}
	want := tokens.Usage(req, resp)
	for round := range 2 {
		if got := c.Usage(req, resp); got != want {
			t.Fatalf("round %d: counter's usage %+v, Usage %+v", round, got, want)
		}
	}
}

func TestContextWindowByFamily(t *testing.T) {
	for _, c := range []struct {
		model string
		want  int
		known bool
	}{
		{"gpt-4o-mini", 128_000, true}, {"openai/gpt-4.1-nano", 1_047_576, true}, {"gpt-4", 8_192, true},
		{"gpt-4-0613", 8_192, true}, {"gpt-4-turbo-2024-04-09", 128_000, true}, {"gpt-5-mini", 400_000, true},
		{"o3-mini", 200_000, true}, {"llama3.1:8b", tokens.DefaultContextWindow, false},
	} {
		if got, known := tokens.ContextWindow(c.model); got != c.want || known != c.known {
			t.Errorf("ContextWindow(%q) = %d, %v; want %d, %v", c.model, got, known, c.want, c.known)
		}
	}
}
