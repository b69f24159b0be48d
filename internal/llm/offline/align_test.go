package offline

import (
	"reflect"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"Generate a random number between 0 and 19.": {"Generate", "a", "random", "number", "between", "0", "and", "19"},
		"Ask: 0, 19":                {"Ask", "0", "19"},
		"is $123.45.":               {"is", "123.45"},
		"1,000 don't e-mail 10:30":  {"1,000", "don't", "e-mail", "10:30"},
		"What's the price of GOOG?": {"What's", "the", "price", "of", "GOOG"},
		"Zürich, Köln":              {"Zürich", "Köln"},
		"":                          nil,
		"?!":                        nil,
	}
	for in, want := range cases {
		var got []string
		for _, w := range words(in) {
			got = append(got, w.text)
			if in[w.start:w.end] != w.text {
				t.Errorf("%q: word %q at wrong offsets", in, w.text)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

// show renders an alignment as "word=state[:to]" per example word, then what it could not place.
func show(a alignment) string {
	names := map[wordState]string{pending: "pending", kept: "kept", replaced: "replaced", dropped: "dropped", missing: "missing"}
	var parts []string
	for k, w := range a.ex {
		p := w.text + "=" + names[a.state[k]]
		if a.state[k] == replaced {
			p += ":" + a.to[k]
		}
		parts = append(parts, p)
	}
	out := strings.Join(parts, " ")
	if len(a.unplaced) > 0 {
		out += " | unplaced " + strings.Join(a.unplaced, ",")
	}
	if len(a.extra) > 0 {
		out += " | extra " + strings.Join(a.extra, ",")
	}
	return out
}

func TestAlign(t *testing.T) {
	t.Parallel()
	cases := []struct{ example, real, want string }{
		// Punctuation and case do not count; equal stretches pair word by word.
		{"Generate a random number between 0 and 19.", "generate a random number between 5 and 50",
			"Generate=kept a=kept random=kept number=kept between=kept 0=replaced:5 and=kept 19=replaced:50"},
		{"What is the current price for SYMBOL?", "What is the stock price for GOOG?",
			"What=kept is=kept the=kept current=replaced:stock price=kept for=kept SYMBOL=replaced:GOOG"},
		// A lead-in the question leaves out is dropped; the values around it still pair.
		{"Generate a random number between 0 and 19.", "random number between 5 and 50",
			"Generate=dropped a=dropped random=kept number=kept between=kept 0=replaced:5 and=kept 19=replaced:50"},
		{"What is 9 divided by 3?", "100 divided by 4",
			"What=dropped is=dropped 9=replaced:100 divided=kept by=kept 3=replaced:4"},
		// As many values on both sides: the values pair, the example's other words are missing.
		{"Draw a bar chart of 3, 7 and 2.", "Draw a bar chart of 5, 10, 15",
			"Draw=kept a=kept bar=kept chart=kept of=kept 3=replaced:5 7=replaced:10 and=missing 2=replaced:15"},
		{"What is 5 plus 3?", "what is 2+2",
			"What=kept is=kept 5=replaced:2 plus=missing 3=replaced:2"},
		// A name of several words takes one word's place.
		{"Weather in Paris", "Weather in New York City", "Weather=kept in=kept Paris=replaced:New York City"},
		// A value for a word, or a value with no place: unplaced.
		{"What is the square root of 2 divided by 4?", "square root of 144",
			"What=dropped is=dropped the=dropped square=kept root=kept of=kept 2=missing divided=missing by=missing 4=missing | unplaced 144"},
		{"What is 12 times 7?", "What's the capital of France?",
			"What=missing is=missing 12=missing times=missing 7=missing | extra What's,the,capital,of,France"},
		// Words the example has nothing like; courtesies are let be.
		{"What is 12 times 7?", "What is 12 times 7 squared?", "What=kept is=kept 12=kept times=kept 7=kept | extra squared"},
		{"Flip a coin", "Flip a coin please", "Flip=kept a=kept coin=kept"},
		// The question's own lead-in is let be; the example's is not paired with it.
		{"What is the weather in Paris?", "Tell me the weather in Oslo",
			"What=dropped is=dropped the=kept weather=kept in=kept Paris=replaced:Oslo"},
	}
	for _, c := range cases {
		if got := show(align(c.example, c.real)); got != c.want {
			t.Errorf("align(%q, %q)\n got %s\nwant %s", c.example, c.real, got, c.want)
		}
	}
}

func TestFill(t *testing.T) {
	t.Parallel()
	q := func(example, real string) source {
		return source{a: align(example, real), real: real, name: "the question"}
	}
	res := func(example, real string) source {
		return source{a: align(example, real), real: real, result: true, name: "Func[f]'s answer"}
	}
	cases := []struct {
		line    string
		srcs    []source
		strict  bool
		want    string
		wantWhy string
	}{
		{"Ask Func[genrand]: 0, 19", []source{q("Generate a random number between 0 and 19.", "random number between 5 and 50")}, true,
			"Ask Func[genrand]: 5, 50", ""},
		// The same word as a value of the question and as the result: each occurrence takes its own.
		{"A: 9 divided by 3 is 3.", []source{q("What is 9 divided by 3?", "What is 100 divided by 4?"), res("3", "25")}, false,
			"A: 100 divided by 4 is 25.", ""},
		{"A: The answer is 3.", []source{q("What is 9 divided by 3?", "What is 100 divided by 4?"), res("3", "25")}, false,
			"A: The answer is 25.", ""},
		// A result repeated whole is replaced whole; in pieces, piece by piece.
		{"A: It is sunny in Paris, 23 degrees.", []source{q("What is the weather in Paris?", "What is the weather in Oslo?"),
			res("Sunny, 23 degrees", "Rain, 9 degrees")}, false, "A: It is Rain in Oslo, 9 degrees.", ""},
		{"A: Paris: Sunny, 23 degrees", []source{q("What is the weather in Paris?", "What is the weather in Oslo?"),
			res("Sunny, 23 degrees", "Light rain and wind, 9 degrees")}, false, "A: Oslo: Light rain and wind, 9 degrees", ""},
		{"A: The share price for SYMBOL is $34.52.", []source{q("SYMBOL share price", "MSFT share price"), res("$34.52", "$411.20")}, false,
			"A: The share price for MSFT is $411.20.", ""},
		// An operator stands for a word the question does not have: no certain line.
		{"Ask Func[calc]: 5 + 3", []source{q("What is 5 plus 3?", "what is 2+2")}, true, "", `"plus"`},
		{"Ask Func[calc]: 12 * 7", []source{q("What is 12 times 7?", "What is 12 modulo 7?")}, true, "", `"times" (yours: "modulo")`},
		// A line repeating a value with no counterpart.
		{"Ask Func[genrand]: 0, 19", []source{q("Generate a random number between 0 and 19.", "Generate a random number below 50")}, true,
			"", "no counterpart"},
		// A word that differs and that the line does not need: a plain line may still be written.
		{"Ask Func[quote]: SYMBOL", []source{q("What is the current price for SYMBOL?", "What is the stock price for GOOG?")}, true,
			"Ask Func[quote]: GOOG", ""},
	}
	for _, c := range cases {
		got, why := fill(c.line, c.srcs, c.strict)
		if got != c.want || !strings.Contains(why, c.wantWhy) || (c.wantWhy == "") != (why == "") {
			t.Errorf("fill(%q) = %q, %q; want %q, a reason with %q", c.line, got, why, c.want, c.wantWhy)
		}
	}
}
