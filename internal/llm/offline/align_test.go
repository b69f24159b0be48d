package offline

import (
	"reflect"
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

func TestAlign(t *testing.T) {
	t.Parallel()
	cases := []struct {
		example, real string
		want          []subst
	}{
		// Punctuation and case do not count; equal runs pair word by word.
		{"Generate a random number between 0 and 19.", "generate a random number between 5 and 50",
			[]subst{{[]string{"0"}, "5"}, {[]string{"19"}, "50"}}},
		{"What is the current price for SYMBOL?", "What is the stock price for GOOG?",
			[]subst{{[]string{"current"}, "stock"}, {[]string{"SYMBOL"}, "GOOG"}}},
		// Runs of different lengths are replaced whole, with the real text's own spacing.
		{"Weather in Paris", "Weather in New York City", []subst{{[]string{"Paris"}, "New York City"}}},
		// A word only one side has gives nothing.
		{"Price for SYMBOL", "Price please for SYMBOL", nil},
		{"Price for SYMBOL", "Price for", nil},
	}
	for _, c := range cases {
		if got := align(c.example, c.real); !reflect.DeepEqual(got, c.want) {
			t.Errorf("align(%q, %q) = %q, want %q", c.example, c.real, got, c.want)
		}
	}
}

func TestAlignResult(t *testing.T) {
	t.Parallel()
	if got, want := alignResult("$123.45", "105.22"), []subst{{[]string{"123.45"}, "105.22"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("price: %q, want %q", got, want)
	}
	got := alignResult("Sunny, 23 degrees", "Rain, 9 degrees")
	want := []subst{{[]string{"Sunny", "23", "degrees"}, "Rain, 9 degrees"}, {[]string{"Sunny"}, "Rain"}, {[]string{"23"}, "9"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weather: %q, want %q", got, want)
	}
	if got := substitute("Agent says: Sunny, 23 degrees", want); got != "Agent says: Rain, 9 degrees" {
		t.Errorf("whole result: %q", got)
	}
}

func TestSubstitute(t *testing.T) {
	t.Parallel()
	substs := []subst{{[]string{"0"}, "5"}, {[]string{"19"}, "50"}, {[]string{"17"}, "23"}}
	cases := map[string]string{
		"0, 19":                        "5, 50",
		"The random number is 17.":     "The random number is 23.",
		"between 10 and 190":           "between 10 and 190", // whole words only
		"The current price for SYMBOL": "The current price for SYMBOL",
	}
	for in, want := range cases {
		if got := substitute(in, substs); got != want {
			t.Errorf("substitute(%q) = %q, want %q", in, got, want)
		}
	}
	// No chains: 0→5 and 5→7 applied to "0 5" give "5 7", not "7 7".
	if got := substitute("0 5", []subst{{[]string{"0"}, "5"}, {[]string{"5"}, "7"}}); got != "5 7" {
		t.Errorf("chained substitution: %q", got)
	}
	// Longer sequences first.
	if got := substitute("in New York today", []subst{{[]string{"New"}, "Old"}, {[]string{"new", "york"}, "Oslo"}}); got != "in Oslo today" {
		t.Errorf("longest first: %q", got)
	}
}
