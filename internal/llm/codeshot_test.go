package llm_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
)

func TestCodeShotPromptRoundTrip(t *testing.T) {
	t.Parallel()
	p := llm.CodeShotPrompt{
		BasePrompt: "I am an agent that generates random numbers.",
		Examples: []string{
			"Q: Generate a random number between 0 and 19.\nAsk Func[genrand]: 0, 19\nFunc[genrand] says: 17\nA: The random number is 17.",
			"Q: Flip a coin\nThought: a coin has two sides\nAsk Func[genrand]: 0, 1\nFunc[genrand] says: 1\nA: Heads.",
		},
		History:    []string{"Q: Generate a random number between 1 and 6\nAsk Func[genrand]: 1, 6\nFunc[genrand] says: 4\nA: The random number is 4."},
		Transcript: []string{"Q: Generate a random number between 5 and 50", "Ask Func[genrand]: 5, 50", "Func[genrand] says: 23"},
	}
	msgs := p.Messages()
	if len(msgs) != 2 || msgs[0].Role != llm.RoleSystem || msgs[1].Role != llm.RoleUser {
		t.Fatalf("messages = %+v, want one system and one user message", msgs)
	}
	if !strings.HasPrefix(msgs[0].Content, p.BasePrompt+"\n\n") {
		t.Errorf("system message %q does not start with the base prompt", msgs[0].Content)
	}
	wantUser := p.Examples[0] + "\n\n" + p.Examples[1] + "\n\n" + p.History[0] + "\n\n" +
		"Q: Generate a random number between 5 and 50\nAsk Func[genrand]: 5, 50\nFunc[genrand] says: 23"
	if msgs[1].Content != wantUser {
		t.Errorf("user message =\n%s\nwant\n%s", msgs[1].Content, wantUser)
	}

	got, ok := llm.ParseCodeShotPrompt(msgs)
	if !ok {
		t.Fatal("ParseCodeShotPrompt did not recognise its own format")
	}
	if got.BasePrompt != p.BasePrompt {
		t.Errorf("base prompt = %q, want %q", got.BasePrompt, p.BasePrompt)
	}
	wantExamples := append(append([]string{}, p.Examples...), p.History...)
	if !reflect.DeepEqual(got.Examples, wantExamples) || len(got.History) != 0 {
		t.Errorf("examples = %q, history = %q; want every finished exchange in examples", got.Examples, got.History)
	}
	if !reflect.DeepEqual(got.Transcript, p.Transcript) {
		t.Errorf("transcript = %q, want %q", got.Transcript, p.Transcript)
	}
	if !reflect.DeepEqual(got.Messages(), msgs) {
		t.Error("rendering the parsed prompt again changed the messages")
	}
}

func TestParseCodeShotPromptRejectsChat(t *testing.T) {
	t.Parallel()
	cases := map[string][]llm.Message{
		"one user message":   {{Role: llm.RoleUser, Content: "Q: hello"}},
		"plain chat":         {{Role: llm.RoleSystem, Content: "You are helpful."}, {Role: llm.RoleUser, Content: "What can you do?"}},
		"paragraph not a Q:": {{Role: llm.RoleSystem, Content: ""}, {Role: llm.RoleUser, Content: "Some notes\n\nQ: a\nA: b\n\nQ: c"}},
		"three messages": {{Role: llm.RoleSystem, Content: ""}, {Role: llm.RoleUser, Content: "Q: a"},
			{Role: llm.RoleAssistant, Content: "A: b"}},
	}
	for name, msgs := range cases {
		if _, ok := llm.ParseCodeShotPrompt(msgs); ok {
			t.Errorf("%s: parsed as a Code Shot prompt", name)
		}
	}
}

func TestSplitFewShots(t *testing.T) {
	t.Parallel()
	// Seed 000's few-shots, as the Python SDK's FEW_SHOTS string holds them.
	text := "Q: What is the current price for SYMBOL?\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $123.45\nA: The current price for SYMBOL is $123.45.\n\n" +
		"Q: SYMBOL share price\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $34.52\nA: The share price for SYMBOL is $34.52.\n\n" +
		"Q: Price for SYMBOL\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $99.11\nA: The share price for SYMBOL is $99.11\n"
	got := llm.SplitFewShots(text)
	if len(got) != 3 {
		t.Fatalf("got %d examples, want 3: %q", len(got), got)
	}
	if got[2] != "Q: Price for SYMBOL\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $99.11\nA: The share price for SYMBOL is $99.11" {
		t.Errorf("third example = %q", got[2])
	}
}

func TestParseCodeShotLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		line string
		want llm.CodeShotLine
	}{
		{"Q: Price for SYMBOL", llm.CodeShotLine{Kind: llm.LineQuery, Prefix: "Q:", Text: "Price for SYMBOL"}},
		{"A: Heads.", llm.CodeShotLine{Kind: llm.LineAnswer, Prefix: "A:", Text: "Heads."}},
		{"Ask Func[genrand]: 0, 19", llm.CodeShotLine{Kind: llm.LineAskFunc, Name: "genrand", Prefix: "Ask Func[genrand]:", Text: "0, 19"}},
		{"Func[genrand] says: 17", llm.CodeShotLine{Kind: llm.LineFuncSays, Name: "genrand", Prefix: "Func[genrand] says:", Text: "17"}},
		{"Ask Agent[router]: weather in Paris", llm.CodeShotLine{Kind: llm.LineAskAgent, Name: "router", Prefix: "Ask Agent[router]:", Text: "weather in Paris"}},
		{"Agent[router] says: sunny", llm.CodeShotLine{Kind: llm.LineAgentSays, Name: "router", Prefix: "Agent[router] says:", Text: "sunny"}},
		{"Thought: I need a number", llm.CodeShotLine{Kind: llm.LineText, Text: "Thought: I need a number"}},
		{"Ask Func[bad name]: x", llm.CodeShotLine{Kind: llm.LineText, Text: "Ask Func[bad name]: x"}},
	}
	for _, c := range cases {
		got := llm.ParseCodeShotLine(c.line)
		if got != c.want {
			t.Errorf("ParseCodeShotLine(%q) = %+v, want %+v", c.line, got, c.want)
		}
		if got.String() != c.line {
			t.Errorf("String() of %q = %q", c.line, got.String())
		}
	}
	built := llm.CodeShotLine{Kind: llm.LineFuncSays, Name: "genrand", Text: "23"}.String()
	if built != "Func[genrand] says: 23" {
		t.Errorf("built line = %q", built)
	}
}
