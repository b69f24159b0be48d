package offline

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// word is a word of a text and where it is. Words are what the alignment compares; the punctuation and spacing
// between them are left where they are.
type word struct {
	text       string
	start, end int // byte offsets in the text
}

// words splits s into words: runs of letters and digits, joined across one inner connector between two of them
// ("3.14", "1,000", "don't", "e-mail", "Europe/Paris", "10:30"), so that "0, 19" is two words and "$123.45" is one.
func words(s string) []word {
	var out []word
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if !isWordRune(r) {
			i += n
			continue
		}
		start := i
		i += n
		for i < len(s) {
			r, n := utf8.DecodeRuneInString(s[i:])
			if isWordRune(r) {
				i += n
				continue
			}
			if strings.ContainsRune(".,'’-_/:", r) && i+n < len(s) {
				if next, _ := utf8.DecodeRuneInString(s[i+n:]); isWordRune(next) {
					i += n
					continue
				}
			}
			break
		}
		out = append(out, word{text: s[start:i], start: start, end: i})
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isValue reports whether a word is a value: it holds a digit ("19", "123.45", "3M"). Values are what a question
// asks about; the offline model never makes one up or leaves one out.
func isValue(w string) bool { return strings.ContainsFunc(w, unicode.IsDigit) }

// capitalized reports whether a word starts with an upper-case letter (a name: "Oslo", "New", "York").
func capitalized(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// leadIns are words a question may start with, or leave out at its start, without changing what it asks
// ("What is 9 divided by 3" and "9 divided by 3"); courtesies are words it may add anywhere ("Flip a coin please").
var (
	leadIns    = wordSet("what what's whats how is are was the a an can could would will you tell me show give please i want need to do does")
	courtesies = wordSet("please thanks thank you kindly hi hello hey")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// wordState is how an example's word maps onto the real text.
type wordState uint8

const (
	pending  wordState = iota // not yet placed (never left so by align)
	kept                      // the real text has the same word
	replaced                  // the real text has another word or phrase in its place
	dropped                   // part of a lead-in the real text leaves out ("Generate a", "What is")
	missing                   // the real text has nothing certain in its place
)

// alignment is how an example's text (a question, or a func's result) maps onto the real one, word by word.
type alignment struct {
	ex    []word
	state []wordState
	// to is, for each replaced word, the real text in its place.
	to []string
	// unplaced are the real text's values that no word of the example stands for: the example cannot carry them.
	unplaced []string
	// extra are words of the real text, past its lead-in, that the example has nothing like ("squared", "tomorrow").
	extra []string
}

// align compares an example's text with the real one word by word: the longest common subsequence (ignoring case)
// anchors them, and each stretch between two anchors is paired as far as it can be with certainty:
//
//   - stretches of as many words on both sides pair word by word, a value only with a value;
//   - stretches with as many values on both sides pair their values in order ("3, 7 and 2" / "5, 10, 15"), and
//     the example's other words there are missing;
//   - stretches with no values pair the one name of the example's with the real text's one run of names ("in
//     Denver" / "Oslo", "Paris" / "New York City");
//   - anything else is missing on the example's side, and extra (or unplaced, for values) on the real side.
//
// Texts with no word in common do not align at all. Before the first anchor, the example's unpaired words are a lead-in the real text leaves out (dropped), and the
// real text's unpaired words a lead-in of its own, which is let be.
func align(example, real string) alignment {
	ex, re := words(example), words(real)
	a := alignment{ex: ex, state: make([]wordState, len(ex)), to: make([]string, len(ex))}
	anchors := lcs(ex, re, false)
	if len(ex) > 0 && len(re) > 0 && len(anchors) == 0 {
		// Not one word in common: the example says nothing about this text.
		for k := range ex {
			a.state[k] = missing
		}
		for _, w := range re {
			if isValue(w.text) {
				a.unplaced = append(a.unplaced, w.text)
			} else if !courtesies[strings.ToLower(w.text)] {
				a.extra = append(a.extra, w.text)
			}
		}
		return a
	}
	i0, j0 := 0, 0
	for i := range ex {
		j, ok := anchors[i]
		if !ok {
			continue
		}
		a.stretch(real, i0, i, re[j0:j], i0 == 0 && j0 == 0)
		a.state[i] = kept
		i0, j0 = i+1, j+1
	}
	a.stretch(real, i0, len(ex), re[j0:], len(anchors) == 0)
	return a
}

// lcs matches two word lists by their longest common subsequence, ignoring case: index in a → index in b. latest
// prefers the last possible match of each word, else the first.
func lcs(a, b []word, latest bool) map[int]int {
	n, m := len(a), len(b)
	eq := func(i, j int) bool { return strings.EqualFold(a[i].text, b[j].text) }
	// t[i][j]: with latest, the LCS length of a[:i] and b[:j]; else of a[i:] and b[j:].
	t := make([][]int, n+1)
	for i := range t {
		t[i] = make([]int, m+1)
	}
	out := map[int]int{}
	if latest {
		for i := 1; i <= n; i++ {
			for j := 1; j <= m; j++ {
				if eq(i-1, j-1) {
					t[i][j] = t[i-1][j-1] + 1
				} else {
					t[i][j] = max(t[i-1][j], t[i][j-1])
				}
			}
		}
		for i, j := n, m; i > 0 && j > 0; {
			switch {
			case eq(i-1, j-1):
				out[i-1] = j - 1
				i, j = i-1, j-1
			case t[i-1][j] >= t[i][j-1]:
				i--
			default:
				j--
			}
		}
		return out
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if eq(i, j) {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case eq(i, j):
			out[i] = j
			i, j = i+1, j+1
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// stretch places the example's words lo..hi against the real words re that stand between the same two anchors.
func (a *alignment) stretch(real string, lo, hi int, re []word, leading bool) {
	ex := a.ex[lo:hi]
	exVals, reVals := valueIndexes(ex), valueIndexes(re)
	paired := map[int]bool{} // real words given a place
	pair := func(k, r int) {
		if isValue(ex[k].text) == isValue(re[r].text) {
			a.state[lo+k], a.to[lo+k] = replaced, re[r].text
			paired[r] = true
		}
	}
	switch {
	case len(ex) == 0 || len(re) == 0:
	case len(ex) == len(re):
		for k := range ex {
			// A lead-in the real text words otherwise ("What is" / "Tell me") is left out, not paired.
			if !leading || !leadIns[strings.ToLower(ex[k].text)] {
				pair(k, k)
			}
		}
	case len(exVals) > 0 && len(exVals) == len(reVals):
		for k, x := range exVals {
			pair(x, reVals[k])
		}
	case len(exVals) == 0 && len(reVals) == 0:
		// A name for a name, though the words around them differ: "in Denver" / "Oslo", "Paris" / "New York City".
		if k, first, last, ok := names(ex, re); ok {
			a.state[lo+k], a.to[lo+k] = replaced, real[re[first].start:re[last].end]
			for r := first; r <= last; r++ {
				paired[r] = true
			}
		}
	}
	// What stayed unpaired: the example's words are dropped (a lead-in) or missing; the real text's values are
	// unplaced, and its other words extra unless they are its lead-in or courtesies.
	for k := lo; k < hi; k++ {
		if a.state[k] == pending {
			a.state[k] = missing
			if leading {
				a.state[k] = dropped
			}
		}
	}
	for r, w := range re {
		switch {
		case paired[r]:
		case isValue(w.text):
			a.unplaced = append(a.unplaced, w.text)
		case !leading && !courtesies[strings.ToLower(w.text)]:
			a.extra = append(a.extra, w.text)
		}
	}
}

// names finds the one name among an example's words (a capitalised word that does not start its text) and the one
// run of names among the real words that stands for it.
func names(ex, re []word) (k, first, last int, ok bool) {
	name := func(w word) bool { return w.start > 0 && capitalized(w.text) && !isValue(w.text) }
	k, first, last = -1, -1, -1
	for i, w := range ex {
		if name(w) {
			if k >= 0 {
				return 0, 0, 0, false
			}
			k = i
		}
	}
	for r, w := range re {
		if !name(w) {
			continue
		}
		if first >= 0 && r != last+1 {
			return 0, 0, 0, false
		}
		if first < 0 {
			first = r
		}
		last = r
	}
	return k, first, last, k >= 0 && first >= 0
}

func valueIndexes(ws []word) []int {
	var out []int
	for k, w := range ws {
		if isValue(w.text) {
			out = append(out, k)
		}
	}
	return out
}

// problem says why the example cannot stand for the real text at all, or "".
func (a alignment) problem() string {
	switch {
	case len(a.unplaced) > 0:
		return "the examples have no place for " + quoteList(a.unplaced)
	case len(a.extra) > 0:
		return "the examples say nothing like " + quoteList(a.extra)
	}
	return ""
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = `"` + w + `"`
	}
	return strings.Join(q, ", ")
}
