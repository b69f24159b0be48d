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
		// Signs belong to their number; an operator between two operands is a token of its own.
		"What is 3 minus 5? It is -2.": {"What", "is", "3", "minus", "5", "It", "is", "-2"},
		"-3 times 4":                   {"-3", "times", "4"},
		"10 minus -4":                  {"10", "minus", "-4"},
		"10 - -4":                      {"10", "-", "-4"},
		"what is 2+2":                  {"what", "is", "2", "+", "2"},
		"7*12, 10-4, 1/2, 5 -3":        {"7", "*", "12", "10", "-", "4", "1", "/", "2", "5", "-", "3"},
		"sqrt(2) / 4":                  {"sqrt", "(", "2", ")", "/", "4"},
		"(-8) ^ 0.5":                   {"(", "-8", ")", "^", "0.5"},
		// Decimals and units are part of a value.
		"-.5 and 3.25kg, 50% of 12.5 km": {"-.5", "and", "3.25kg", "50%", "of", "12.5", "km"},
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

// showDiff renders a diff's spans as "example→real" pieces.
func showDiff(d diff) string {
	var parts []string
	for _, s := range d.spans {
		var e, r []string
		for _, w := range d.ex[s.elo:s.ehi] {
			e = append(e, w.text)
		}
		for _, w := range d.re[s.rlo:s.rhi] {
			r = append(r, w.text)
		}
		parts = append(parts, strings.Join(e, " ")+"→"+strings.Join(r, " "))
	}
	return strings.Join(parts, " | ")
}

func TestCompare(t *testing.T) {
	t.Parallel()
	cases := []struct{ example, real, want string }{
		{"Generate a random number between 0 and 19.", "generate a random number between 5 and 50", "0→5 | 19→50"},
		// Words anchor before values: the values swap places.
		{"What is 12 times 7?", "7 times 12", "12→7 | 7→12"},
		// Values never anchor: equal ones are spans of their own, let be later.
		{"What is 10 minus 4?", "What is 4 minus 4?", "10→4 | 4→4"},
		// Lead-ins at the start are let be on either side; courtesies anywhere.
		{"What is 9 divided by 3?", "Tell me 100 divided by 4 please", "9→100 | 3→4"},
		{"Generate a random number between 0 and 19.", "random number between zero and nine", "0→zero | 19→nine"},
		{"Remember that my locker code is 4512", "Remember that my gym PIN is 0091", "locker code→gym PIN | 4512→0091"},
		{"What is 5 plus 3?", "what is 2+2", "5 plus 3→2 + 2"},
		{"What is 12 times 7?", "What is 12 times 7 squared?", "12→12 | 7→7 squared"},
		{"What is the square root of 2 divided by 4?", "square root of 144", "2 divided by 4→144"},
		{"Draw a bar chart of 3, 7 and 2.", "Draw a bar chart of 5, 10, 15", "3 7 and 2→5 10 15"},
	}
	for _, c := range cases {
		if got := showDiff(compare(words(c.example), c.real, true)); got != c.want {
			t.Errorf("compare(%q, %q) = %s, want %s", c.example, c.real, got, c.want)
		}
	}
}
