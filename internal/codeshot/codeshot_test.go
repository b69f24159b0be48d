package codeshot

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

const genrandFewShots = `Q: Generate a random number between 0 and 19.
Ask Func[genrand]: 0, 19
Func[genrand] says: 17
A: The random number is 17.

Q: Generate a random value from 5 to 10, inclusive.
Ask Func[genrand]: 5, 10
Func[genrand] says: 8
A: The random number is 8.`

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"stock quote agent", stockFewShots(t), []string{
			"Q: What is the current price for SYMBOL?\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $123.45\nA: The current price for SYMBOL is $123.45.",
			"Q: SYMBOL share price\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $34.52\nA: The share price for SYMBOL is $34.52.",
			"Q: Price for SYMBOL\nAsk Func[quote]: SYMBOL\nFunc[quote] says: $99.11\nA: The share price for SYMBOL is $99.11",
		}},
		{"indented lines and CRLF are stripped",
			"    Q: one\r\n    A: 1   \r\n\r\n    Q: two\r\n\tA: 2\r\n",
			[]string{"Q: one\nA: 1", "Q: two\nA: 2"}},
		{"a blank line not followed by Q: stays in the example",
			"Q: one\nThought: hmm\n\nA: 1\n\nQ: two\nA: 2",
			[]string{"Q: one\nThought: hmm\n\nA: 1", "Q: two\nA: 2"}},
		{"several blank lines between examples", "Q: one\nA: 1\n\n\n\nQ: two\nA: 2", []string{"Q: one\nA: 1", "Q: two\nA: 2"}},
		{"empty", "", []string{""}},
		{"blank", " \n\n  ", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Split(tt.in)
			if !slices.Equal(got, tt.want) {
				t.Errorf("Split(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	got := Normalize("\n  Q: hi  \r\n\tA: there \n")
	if want := "Q: hi\nA: there"; got != want {
		t.Errorf("Normalize = %q, want %q", got, want)
	}
	// What Normalize returns passes the whitespace and newline rules.
	if err := Validate(Normalize(" I am an agent. \n"), []string{got}, Options{}); err != nil {
		t.Errorf("normalised text fails validation: %v", err)
	}
}

func TestParseLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want Line
	}{
		{"Q: What is 12 times 7?", Line{Kind: Query, Text: "What is 12 times 7?"}},
		{"A: 84.", Line{Kind: Answer, Text: "84."}},
		{"Ask Func[genrand]: 0, 19", Line{Kind: AskFunc, Name: "genrand", Text: "0, 19"}},
		{"  Ask Func[genrand]: 5, 50\r", Line{Kind: AskFunc, Name: "genrand", Text: "5, 50"}},
		{"Func[genrand] says: 17", Line{Kind: FuncSays, Name: "genrand", Text: "17"}},
		{"Ask Agent[weather]: Is it raining in Paris?", Line{Kind: AskAgent, Name: "weather", Text: "Is it raining in Paris?"}},
		{"Agent[weather] says: No.", Line{Kind: AgentSays, Name: "weather", Text: "No."}},
		{"Ask Func[fixie_utc_datetime]:", Line{Kind: AskFunc, Name: "fixie_utc_datetime"}},
		{"Func[météo2] says: ok", Line{Kind: FuncSays, Name: "météo2", Text: "ok"}},
		{"Thought: I need the price first.", Line{Kind: Text, Text: "Thought: I need the price first."}},
		{"Ask Func[my-func]: x", Line{Kind: Text, Text: "Ask Func[my-func]: x"}},
		{"Ask Func[]: x", Line{Kind: Text, Text: "Ask Func[]: x"}},
		{"Func[quote] said: 1", Line{Kind: Text, Text: "Func[quote] said: 1"}},
		{"Ask Func[quote] SYMBOL", Line{Kind: Text, Text: "Ask Func[quote] SYMBOL"}},
		{"Question: is this Q?", Line{Kind: Text, Text: "Question: is this Q?"}},
		{"", Line{Kind: Text}},
	}
	for _, tt := range tests {
		got := ParseLine(tt.in)
		tt.want.Raw = tt.in
		if got != tt.want {
			t.Errorf("ParseLine(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestLineStringRoundTrips(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"Q: What is 12 times 7?", "A: 84", "Ask Func[calc]: 12 * 7", "Func[calc] says: 84",
		"Ask Agent[router]: What is 12 times 7?", "Agent[router] says: 84", "Thought: easy", "Q:",
	} {
		if got := ParseLine(s).String(); got != s {
			t.Errorf("ParseLine(%q).String() = %q", s, got)
		}
	}
}

func TestEmbedRefs(t *testing.T) {
	t.Parallel()
	// Expected values checked against Python's re with Fixie's pattern.
	tests := []struct {
		in   string
		want []string
	}{
		{"Mask out the background in #1", []string{"1"}},
		{"#a", []string{"a"}},
		{"##a", nil},
		{"###a", []string{"a"}},
		{"####a", nil},
		{"#####a", []string{"a"}},
		{"#a #b #a", []string{"a", "b"}},
		{"a#b", []string{"b"}},
		{"#a#b", []string{"a", "b"}},
		{"##a#b", []string{"b"}},
		{"#a##b", []string{"a"}},
		{"#", nil},
		{"# a", nil},
		{"#a-b", []string{"a"}},
		{"#a_b2!", []string{"a_b2"}},
		{"#é1", []string{"é1"}},
		{"x ##tag and #real.", []string{"real"}},
		{"no refs here", nil},
	}
	for _, tt := range tests {
		if got := EmbedRefs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("EmbedRefs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestExtraction(t *testing.T) {
	t.Parallel()
	examples := Parse(append(Split(genrandFewShots),
		"Q: What's the weather in Paris and what time is it there?\n"+
			"Ask Agent[weather]: weather in Paris\nAgent[weather] says: sunny\n"+
			"Ask Func[fixie_local_datetime]: Europe/Paris\nFunc[fixie_local_datetime] says: 10:00\n"+
			"A: Sunny, and it is 10:00.",
		"Q: Generate a random number between 0 and 19.\nA: 3"))
	if got, want := SampleQueries(examples), []string{
		"Generate a random number between 0 and 19.",
		"Generate a random value from 5 to 10, inclusive.",
		"What's the weather in Paris and what time is it there?",
	}; !slices.Equal(got, want) {
		t.Errorf("SampleQueries = %q, want %q", got, want)
	}
	if got, want := FuncsUsed(examples), []string{"genrand", "fixie_local_datetime"}; !slices.Equal(got, want) {
		t.Errorf("FuncsUsed = %q, want %q", got, want)
	}
	if got, want := AgentsUsed(examples), []string{"weather"}; !slices.Equal(got, want) {
		t.Errorf("AgentsUsed = %q, want %q", got, want)
	}
	if got := examples[2].Lines[3]; got.Kind != AskFunc || got.Name != "fixie_local_datetime" || got.Text != "Europe/Paris" {
		t.Errorf("example 3, line 4 = %+v", got)
	}
	conv := Parse([]string{"Q: When did it happen? #text1\nA: In March.\nQ: Why?\nA: For a reason."})[0]
	if got, want := conv.Queries(), []string{"When did it happen? #text1", "Why?"}; !slices.Equal(got, want) {
		t.Errorf("Queries of a conversational example = %q, want %q", got, want)
	}
}

func TestValidateAcceptsGoodFewShots(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		basePrompt string
		examples   []string
		opts       Options
	}{
		{"genrand", "I am a simple agent that generates a random number between two given values.",
			Split(genrandFewShots), Options{Funcs: []string{"genrand"}}},
		{"stock quote", "I am an agent that answers questions about stock prices.",
			Split(stockFewShots(t)), Options{Funcs: []string{"quote"}}},
		{"unknown func list accepts any func", "", Split(stockFewShots(t)), Options{}},
		{"built-in funcs need no registration", "I answer from an uploaded file.",
			[]string{"Q: When did the thing happen? #text1\nAsk Func[fixie_query_embed]: When did the thing happen? #text1\n" +
				"Func[fixie_query_embed] says: It happened on March 1, 2023\nA: The thing happened on March 1, 2023."},
			Options{Funcs: []string{}}},
		{"conversational turns", "Hi, I'm a helpful chatbot.",
			[]string{"Q: When did the thing happen? #text1\nAsk Func[fixie_query_embed]: When did the thing happen? #text1\n" +
				"Func[fixie_query_embed] says: It happened on March 1, 2023\nA: The thing happened on March 1, 2023.\n" +
				"Q: What was the thing?\nAsk Func[fixie_query_embed]: What was the thing? #text1\n" +
				"Func[fixie_query_embed] says: The thing was an event.\nA: The thing was an event."},
			Options{Conversational: true, Funcs: []string{}}},
		{"func says without ask (the coin agent)", "I am a simple agent that tosses a coin.",
			Split("Q: Toss a coin.\nFunc[coin] says: heads\nA: It's heads!\n\nQ: Toss a coin 3 times.\n" +
				"Func[coin] says: heads\nFunc[coin] says: heads\nFunc[coin] says: tails\nA: It was heads, heads, then tails!"),
			Options{Funcs: []string{"coin"}}},
		{"thoughts, agents and a multi-line answer", "I plan.\nI delegate.",
			[]string{"Q: Weather in Paris?\nThought: I should ask the router.\nAsk Agent[router]: Weather in Paris?\n" +
				"Agent[router] says: Sunny.\nThought: Done.\nA: It is sunny\nin Paris today."},
			Options{}},
		{"embeds introduced by the query and by a reply", "I mask images.",
			[]string{"Q: Mask out the background in #img\nAsk Func[mask]: background #img\n" +
				"Func[mask] says: Here is the mask #mask\nA: Here is the mask #mask for #img, ##hashtags are fine"},
			Options{Funcs: []string{"mask"}}},
		{"blank line inside an example", "", []string{"Q: one\n\nA: 1"}, Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := Validate(tt.basePrompt, tt.examples, tt.opts); err != nil {
				t.Errorf("Validate: %v", err)
			}
		})
	}
}

// want is one expected problem: where, which rule, and a piece of its message.
type want struct {
	example, line int
	rule          Rule
	says          string
}

func TestValidateReportsEveryRule(t *testing.T) {
	t.Parallel()
	const good = "Q: What is 12 times 7?\nAsk Func[calc]: 12 * 7\nFunc[calc] says: 84\nA: 12 times 7 is 84."
	calc := Options{Funcs: []string{"calc"}}
	tests := []struct {
		name       string
		basePrompt string
		examples   []string
		opts       Options
		want       []want
	}{
		{"empty example", "", []string{good, ""}, calc,
			[]want{{2, 0, RuleEmpty, "few-shot 2: the few-shot is empty"}}},
		{"no few-shots at all", "", nil, calc,
			[]want{{1, 0, RuleEmpty, "few-shot 1: there are no few-shots"}}},
		{"empty few-shots string", "", Split(""), calc,
			[]want{{1, 0, RuleEmpty, "is empty"}}},
		{"line starts with whitespace", "", []string{"Q: hi\n Ask Func[calc]: 1\nFunc[calc] says: 1\nA: 1"}, calc,
			[]want{{1, 2, RuleWhitespace, `few-shot 1, line 2: the line starts with whitespace; remove it: " Ask Func[calc]: 1"`}}},
		{"line ends with whitespace", "", []string{"Q: hi \nA: there"}, calc,
			[]want{{1, 1, RuleWhitespace, "ends with whitespace"}}},
		{"line ends with a carriage return", "", []string{"Q: hi\r\nA: there"}, calc,
			[]want{{1, 1, RuleWhitespace, `carriage return`}}},
		{"trailing newline", "", []string{good + "\n"}, calc,
			[]want{{1, 0, RuleTrailingNewline, "few-shot 1: the few-shot ends with a newline"}}},
		{"first line is not Q:", "", []string{"Ask Func[calc]: 1 + 1\nFunc[calc] says: 2\nA: 2"}, calc,
			[]want{{1, 1, RuleFirstLine, `must start with a "Q:" line, found "Ask Func[calc]: 1 + 1"`}}},
		{"first line is a thought", "", []string{"Thought: hmm\nQ: hi\nA: there"}, calc,
			[]want{{1, 1, RuleFirstLine, `found "Thought: hmm"`}}},
		{"Q: without a query", "", []string{"Q:\nA: there"}, calc,
			[]want{{1, 1, RuleEmptyQuery, `"Q:" must be followed by a sample query`}}},
		{"Ask Func followed by A:", "",
			[]string{good, "Q: What is the price of GOOG?\nThought: I need a quote.\nAsk Func[quote]: GOOG\nA: The price is 1."},
			Options{Funcs: []string{"calc", "quote"}},
			[]want{{2, 3, RuleAskFuncReply, `few-shot 2, line 3: "Ask Func[quote]" must be followed by "Func[quote] says:", found "A: The price is 1."`}}},
		{"Ask Func answered by another func", "", []string{"Q: hi\nAsk Func[calc]: 1\nFunc[calx] says: 1\nA: 1"}, Options{},
			[]want{{1, 2, RuleAskFuncReply, `found "Func[calx] says: 1"`}}},
		{"Ask Func on the last line", "", []string{"Q: hi\nAsk Func[calc]: 1"}, calc,
			[]want{
				{1, 2, RuleAskFuncReply, "found the end of the few-shot"},
				{1, 2, RuleLastLineAnswer, `must end with an "A:" line, its last recognised line is "Ask Func[calc]: 1"`},
			}},
		{"Ask Func separated from its reply", "", []string{"Q: hi\nAsk Func[calc]: 1\nThought: wait\nFunc[calc] says: 1\nA: 1"}, calc,
			[]want{{1, 2, RuleAskFuncReply, `found "Thought: wait"`}}},
		{"Ask Agent followed by another agent", "", []string{"Q: hi\nAsk Agent[weather]: rain?\nAgent[router] says: no\nA: no"}, calc,
			[]want{{1, 2, RuleAskAgentReply, `"Ask Agent[weather]" must be followed by "Agent[weather] says:", found "Agent[router] says: no"`}}},
		{"unknown func", "", []string{"Q: price?\nAsk Func[quote]: GOOG\nFunc[quote] says: 1\nA: 1"}, calc,
			[]want{{1, 2, RuleUnknownFunc, "Func[quote] is not a func of this agent (its funcs: calc)"}}},
		{"unknown func in a reply only", "", []string{"Q: coin?\nFunc[coin] says: heads\nA: heads"}, Options{Funcs: []string{}},
			[]want{{1, 2, RuleUnknownFunc, "Func[coin] is not a func of this agent (the agent registers no funcs)"}}},
		{"last recognised line is a func reply", "", []string{"Q: hi\nAsk Func[calc]: 1\nFunc[calc] says: 1\nThought: done"}, calc,
			[]want{{1, 3, RuleLastLineAnswer, `its last recognised line is "Func[calc] says: 1"`}}},
		{"no recognised line at all", "", []string{"Hello there"}, calc,
			[]want{
				{1, 0, RuleLastLineAnswer, "has no"},
				{1, 1, RuleFirstLine, `found "Hello there"`},
			}},
		{"second Q: in a non-conversational agent", "", []string{"Q: a\nA: b\nQ: c\nA: d"}, calc,
			[]want{{1, 3, RuleSequence, `only a conversational agent may have several "Q:" turns`}}},
		{"Q: before the answer", "", []string{"Q: a\nQ: b\nA: c"}, Options{Conversational: true},
			[]want{{1, 2, RuleSequence, `the "Q:" on line 1 is never answered`}}},
		{"func call after the answer", "", []string{"Q: a\nA: b\nAsk Func[calc]: 1\nFunc[calc] says: 1\nA: c"}, calc,
			[]want{{1, 3, RuleSequence, `nothing but the answer's own text may follow the "A:" on line 2, found "Ask Func[calc]: 1"`}}},
		{"func call after the answer in a conversation", "", []string{"Q: a\nA: b\nAsk Func[calc]: 1\nFunc[calc] says: 1\nA: c"},
			Options{Conversational: true},
			[]want{{1, 3, RuleSequence, `after the "A:" on line 2 only a new "Q:" may follow`}}},
		{"two answers", "", []string{"Q: a\nA: b\nA: c"}, calc,
			[]want{{1, 3, RuleSequence, `found "A: c"`}}},
		{"new embed on A:", "", []string{"Q: Draw a chart of 1, 2\nA: Here it is #chart"}, calc,
			[]want{{1, 2, RuleNewEmbed, `embed #chart first appears on an "A:" line`}}},
		{"new embed on Ask Func", "", []string{"Q: Mask the background\nAsk Func[mask]: background #img\nFunc[mask] says: done\nA: done"}, Options{},
			[]want{{1, 2, RuleNewEmbed, `embed #img first appears on an "Ask Func[...]" line`}}},
		{"new embed on Ask Agent", "", []string{"Q: Mask the background\nAsk Agent[masker]: #img\nAgent[masker] says: done\nA: done"}, Options{},
			[]want{{1, 2, RuleNewEmbed, `embed #img first appears on an "Ask Agent[...]" line`}}},
		{"new embed in the continuation of an answer", "", []string{"Q: Draw it\nA: Here it is:\nsee ###pic"}, Options{},
			[]want{{1, 3, RuleNewEmbed, `embed #pic first appears in text that continues the "A:" line 2`}}},
		{"base prompt starts with a newline", "\nI am an agent.", []string{good}, calc,
			[]want{{0, 0, RuleBasePrompt, "base prompt: the base prompt starts with a newline"}}},
		{"base prompt ends with a newline", "I am an agent.\n", []string{good}, calc,
			[]want{{0, 0, RuleBasePrompt, "ends with a newline"}}},
		{"base prompt has a padded line", "I am an agent.\n  I add numbers.", []string{good}, calc,
			[]want{{0, 2, RuleBasePrompt, `base prompt, line 2: the line starts with whitespace; remove it: "  I add numbers."`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkProblems(t, Validate(tt.basePrompt, tt.examples, tt.opts), tt.want)
		})
	}
}

func checkProblems(t *testing.T, err error, wants []want) {
	t.Helper()
	var verr *ValidationError
	if !errors.As(err, &verr) {
		t.Fatalf("Validate = %v, want a *ValidationError", err)
	}
	var got, exp []string
	for _, p := range verr.Problems {
		got = append(got, fmt.Sprintf("%d:%d:%s", p.Example, p.Line, p.Rule))
	}
	for _, w := range wants {
		exp = append(exp, fmt.Sprintf("%d:%d:%s", w.example, w.line, w.rule))
	}
	if !slices.Equal(got, exp) {
		t.Fatalf("problems (example:line:rule) = %v, want %v\nerror: %v", got, exp, err)
	}
	for i, w := range wants {
		if s := verr.Problems[i].String(); !strings.Contains(s, w.says) {
			t.Errorf("problem %d = %q, want it to contain %q", i+1, s, w.says)
		}
	}
	if first := verr.Problems[0].String(); !strings.HasPrefix(err.Error(), first) {
		t.Errorf("error %q does not lead with the first problem %q", err, first)
	}
}

func TestValidateReturnsAllProblems(t *testing.T) {
	t.Parallel()
	err := Validate(" I add numbers.", []string{
		"Q: What is 1 plus 1?\nAsk Func[calc]: 1 + 1\nFunc[calc] says: 2\nA: 2",
		"Ask Func[calc]: 2 + 2\nFunc[calc] says: 4\nA: 4 ",
		"Q: What is 3 plus 3?\nAsk Func[quote]: 3 + 3\nA: 6",
	}, Options{Funcs: []string{"calc"}})
	checkProblems(t, err, []want{
		{0, 1, RuleBasePrompt, "base prompt, line 1: the line starts with whitespace"},
		{2, 1, RuleFirstLine, "few-shot 2, line 1:"},
		{2, 3, RuleWhitespace, "few-shot 2, line 3: the line ends with whitespace"},
		{3, 2, RuleAskFuncReply, "few-shot 3, line 2:"},
		{3, 2, RuleUnknownFunc, "Func[quote]"},
	})
	for _, s := range []string{"few-shot 2, line 1", "few-shot 3, line 2"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestValidationErrorListsAFewProblems(t *testing.T) {
	t.Parallel()
	examples := make([]string, 8)
	for i := range examples {
		examples[i] = "Q: hi\nA: there "
	}
	err := Validate("", examples, Options{})
	var verr *ValidationError
	if !errors.As(err, &verr) || len(verr.Problems) != 8 {
		t.Fatalf("Validate = %v, want 8 problems", err)
	}
	if !strings.HasSuffix(err.Error(), "; and 3 more problems") {
		t.Errorf("error = %q, want it to end with a count of the problems not listed", err)
	}
}

// stockFewShots are the few-shots of seed 000's stock quote agent, as its authors wrote them (a Python
// triple-quoted string: it starts and ends with a newline).
func stockFewShots(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("testdata/stockquote.txt")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
