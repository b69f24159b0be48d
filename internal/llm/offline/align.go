package offline

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is what a token of a text is.
type tokKind uint8

const (
	wordTok  tokKind = iota // letters ("plus", "Oslo", "e-mail")
	valueTok                // holds a digit: a number with its sign, decimals and unit ("-3", "123.45", "5kg", "50%", "0091")
	opTok                   // an operator symbol ("+", "*", "(")
)

// word is a token of a text and where it is. Tokens are what the alignment compares; the punctuation and spacing
// between them are left where they are.
type word struct {
	text       string
	start, end int // byte offsets in the text
	kind       tokKind
}

// operators are the characters that are tokens of their own: a line can turn words into them ("5 plus 3" →
// "5 + 3"), and "2+2" is not "2-2".
const operators = "+-*/^=<>%×÷()−"

// words splits s into tokens:
//
//   - words and values: runs of letters and digits, joined across one inner connector between two of them ("3.14",
//     "1,000", "don't", "e-mail", "Europe/Paris", "10:30"), except "-" and "/" between two digits, which are
//     operators ("10-4", "1/2"); so "0, 19" is two tokens and "$123.45" one ("123.45", the "$" left around it);
//   - a minus sign that starts a number is part of it ("-3", "10 minus -4", "is -2"), unless it follows an operand
//     ("5-3", "5 -3"), where it is an operator; a "%" right after a number is part of it ("50%");
//   - operator symbols, one token each.
func words(s string) []word {
	var out []word
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case isWordRune(r) || (isMinus(r) && startsNumber(s[i+n:]) && !afterOperand(s, out, i)):
			start := i
			i = scanWord(s, i+n)
			if i < len(s) && s[i] == '%' && unicode.IsDigit(lastRune(s[start:i])) {
				i++
			}
			kind := wordTok
			if strings.ContainsFunc(s[start:i], unicode.IsDigit) {
				kind = valueTok
			}
			out = append(out, word{text: s[start:i], start: start, end: i, kind: kind})
		case strings.ContainsRune(operators, r):
			out = append(out, word{text: s[i : i+n], start: i, end: i + n, kind: opTok})
			i += n
		default:
			i += n
		}
	}
	return out
}

// scanWord returns where the word that goes on at i ends.
func scanWord(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			i += n
			continue
		}
		if strings.ContainsRune(".,'’-_/:", r) && i+n < len(s) {
			next, _ := utf8.DecodeRuneInString(s[i+n:])
			arithmetic := (r == '-' || r == '/') && unicode.IsDigit(lastRune(s[:i])) && unicode.IsDigit(next)
			if isWordRune(next) && !arithmetic {
				i += n
				continue
			}
		}
		break
	}
	return i
}

func isMinus(r rune) bool { return r == '-' || r == '−' }

// startsNumber reports whether s starts with a digit, or a decimal point and a digit.
func startsNumber(s string) bool {
	s = strings.TrimPrefix(s, ".")
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsDigit(r)
}

// afterOperand reports whether a minus at i follows an operand (so it subtracts): a value or ")" before it, or a
// word right against it ("x-1").
func afterOperand(s string, before []word, i int) bool {
	if len(before) == 0 {
		return false
	}
	prev := before[len(before)-1]
	switch {
	case prev.kind == valueTok || prev.text == ")":
		return true
	case prev.kind == wordTok:
		return prev.end == i
	}
	return false
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isValue reports whether a token is a value: it holds a digit ("19", "-2", "123.45", "3M"). Values are what a
// question asks about; the offline model never makes one up or leaves one out.
func isValue(w string) bool { return strings.ContainsFunc(w, unicode.IsDigit) }

// capitalized reports whether a word starts with an upper-case letter (a name: "Oslo", "New", "York").
func capitalized(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// leadIns are words a question may start with, or leave out at its start, without changing what it asks
// ("What is 9 divided by 3" and "9 divided by 3", "Generate a random number" and "random number"); courtesies are
// words it may add anywhere ("Flip a coin please"); fillers are words that join the parts of a question and that
// an example may have or lack between its values and names ("3, 7 and 2" / "5, 10, 15", "in Denver" / "Oslo").
var (
	leadIns = wordSet("what what's whats how much is are was the a an can could would will you tell me show give " +
		"please i want need to do does generate calculate compute find get")
	courtesies = wordSet("please thanks thank you kindly hi hello hey")
	fillers    = wordSet("and the a an of in at on")
)

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

func in(set map[string]bool, w word) bool { return w.kind == wordTok && set[strings.ToLower(w.text)] }

// span is a stretch where an example's text and the real one differ: the example's tokens ex[elo:ehi] stand where
// the real text has re[rlo:rhi]. Either side may be empty.
type span struct{ elo, ehi, rlo, rhi int }

// diff is an example's text (a question, or a func's or agent's result) compared with the real one, token by token.
type diff struct {
	ex, re []word
	real   string
	// spans are where they differ, in order; the tokens between them are the same on both sides.
	spans []span
	// anchored counts the tokens they share that say something (not lead-ins, fillers or courtesies).
	anchored int
	// lead is where the first anchor is in ex: a span before it opens the question ("Remember that ..." /
	// "Forget that ..."), where a word is most often the verb of what is asked.
	lead int
}

// compare diffs an example's text with the real one. The longest common subsequence of their words and operators
// (ignoring case) anchors them, so that "12 times 7" / "7 times 12" anchor on "times" and
// differ in their values. With question, the words before the first anchor that are lead-ins on either side are
// let be ("What is 9 divided by 3" / "100 divided by 4"); courtesies the real text adds are let be anywhere.
func compare(ex []word, real string, question bool) diff {
	var re []word
	exHas := map[string]bool{}
	for _, w := range ex {
		exHas[strings.ToLower(w.text)] = true
	}
	for _, w := range words(real) {
		if !in(courtesies, w) || exHas[strings.ToLower(w.text)] {
			re = append(re, w)
		}
	}
	d := diff{ex: ex, re: re, real: real}
	anchors := wordLCS(ex, re)
	i0, j0 := 0, 0
	add := func(i, j int, leading bool) {
		if leading && question {
			for i0 < i && in(leadIns, ex[i0]) {
				i0++
			}
			for j0 < j && (in(leadIns, re[j0]) || in(courtesies, re[j0])) {
				j0++
			}
		}
		if i0 < i || j0 < j {
			d.spans = append(d.spans, span{i0, i, j0, j})
		}
	}
	first := true
	d.lead = len(ex)
	for i := range ex {
		j, ok := anchors[i]
		if !ok {
			continue
		}
		add(i, j, first)
		if first {
			d.lead = i
		}
		first = false
		if !in(leadIns, ex[i]) && !in(fillers, ex[i]) && !in(courtesies, ex[i]) {
			d.anchored++
		}
		i0, j0 = i+1, j+1
	}
	add(len(ex), len(re), first)
	return d
}

// wordLCS matches two token lists by their longest common subsequence of words and operators, ignoring case:
// index in a → index in b. Values never anchor: they are what a question asks about, so they are always compared
// as spans (equal ones are let be). Of equal lengths, the earliest matches win.
func wordLCS(a, b []word) map[int]int {
	n, m := len(a), len(b)
	weight := func(i, j int) int {
		if a[i].kind != b[j].kind || !strings.EqualFold(a[i].text, b[j].text) {
			return 0
		}
		if a[i].kind == valueTok {
			return 0 // a value equal by chance is no anchor ("9-5" / "3 minus 5"); equal spans are let be
		}
		return 1
	}
	t := make([][]int, n+1)
	for i := range t {
		t[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			t[i][j] = max(t[i+1][j], t[i][j+1])
			if w := weight(i, j); w > 0 {
				t[i][j] = max(t[i][j], t[i+1][j+1]+w)
			}
		}
	}
	out := map[int]int{}
	for i, j := 0, 0; i < n && j < m; {
		switch w := weight(i, j); {
		case w > 0 && t[i][j] == t[i+1][j+1]+w:
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

// lcs matches two token lists by their longest common subsequence, ignoring case: index in a → index in b. latest
// prefers the last possible match of each token, else the first.
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

// same reports whether a span's two sides are the same tokens (a value anchored nowhere, but equal).
func (d diff) same(s span) bool {
	if s.ehi-s.elo != s.rhi-s.rlo {
		return false
	}
	for k := range s.ehi - s.elo {
		if !strings.EqualFold(d.ex[s.elo+k].text, d.re[s.rlo+k].text) {
			return false
		}
	}
	return true
}

// realText is the real text a span's real side covers, as written ("New York City", "gym PIN", "-2").
func (d diff) realText(s span) string {
	if s.rlo == s.rhi {
		return ""
	}
	return d.real[d.re[s.rlo].start:d.re[s.rhi-1].end]
}

// quoteEx and quoteRe quote a span's two sides, for a reason.
func (d diff) quoteEx(s span) string { return quoteWords(d.ex[s.elo:s.ehi]) }
func (d diff) quoteRe(s span) string { return quoteWords(d.re[s.rlo:s.rhi]) }

func quoteWords(ws []word) string {
	t := make([]string, len(ws))
	for i, w := range ws {
		t[i] = w.text
	}
	return fmt.Sprintf("%q", strings.Join(t, " "))
}

// refinements are the ways a span can be read, most whole first: each a list of smaller spans that together cover
// it. The first is the span itself; then, with as many tokens on both sides, token by token; with as many values
// on both sides, value by value (the other tokens fillers); with no values, the example's one name for the real
// text's one run of names ("in Denver" / "Oslo", "Paris" / "New York City"). What a reading leaves unpaired on
// either side is a span of its own with one side empty.
func (d diff) refinements(s span) [][]span {
	out := [][]span{{s}}
	ne, nr := s.ehi-s.elo, s.rhi-s.rlo
	if ne == 0 || nr == 0 {
		return out
	}
	if ne == nr && ne > 1 {
		var r []span
		for k := range ne {
			if p := (span{s.elo + k, s.elo + k + 1, s.rlo + k, s.rlo + k + 1}); !d.same(p) {
				r = append(r, p)
			}
		}
		out = append(out, r)
	}
	ev, rv := kindIndexes(d.ex, s.elo, s.ehi, valueTok), kindIndexes(d.re, s.rlo, s.rhi, valueTok)
	if len(ev) > 0 && len(ev) == len(rv) && (ne > 1 || nr > 1) {
		out = append(out, d.pairUp(s, ev, rv))
	}
	if len(ev) == 0 && len(rv) == 0 {
		if k, first, last, ok := names(d.ex, d.re, s); ok {
			out = append(out, d.pairUp(s, []int{k}, []int{first}, last))
		}
	}
	return out
}

// pairUp pairs the example's tokens at es with the real ones at rs in order (the last real pair running to
// lastRe, when given), and makes the tokens left between them spans of one side.
func (d diff) pairUp(s span, es, rs []int, lastRe ...int) []span {
	var out []span
	i0, j0 := s.elo, s.rlo
	rest := func(i, j int) {
		for ; i0 < i; i0++ {
			out = append(out, span{i0, i0 + 1, j0, j0})
		}
		for ; j0 < j; j0++ {
			out = append(out, span{i0, i0, j0, j0 + 1})
		}
	}
	for k := range es {
		rhi := rs[k] + 1
		if k == len(es)-1 && len(lastRe) > 0 {
			rhi = lastRe[0] + 1
		}
		rest(es[k], rs[k])
		if p := (span{es[k], es[k] + 1, rs[k], rhi}); !d.same(p) {
			out = append(out, p)
		}
		i0, j0 = es[k]+1, rhi
	}
	rest(s.ehi, s.rhi)
	return out
}

func kindIndexes(ws []word, lo, hi int, kind tokKind) []int {
	var out []int
	for k := lo; k < hi; k++ {
		if ws[k].kind == kind {
			out = append(out, k)
		}
	}
	return out
}

// names finds, in a span, the one name among the example's tokens (a capitalised word that does not start its
// text) and the one run of names among the real tokens that stands for it.
func names(ex, re []word, s span) (k, first, last int, ok bool) {
	name := func(w word) bool { return w.start > 0 && w.kind == wordTok && capitalized(w.text) }
	k, first, last = -1, -1, -1
	for i := s.elo; i < s.ehi; i++ {
		if name(ex[i]) {
			if k >= 0 {
				return 0, 0, 0, false
			}
			k = i
		}
	}
	for r := s.rlo; r < s.rhi; r++ {
		if !name(re[r]) {
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

// onlyFillers reports whether every token of ws is a filler or a courtesy: words whose presence or absence does
// not change what is asked.
func onlyFillers(ws []word) bool {
	for _, w := range ws {
		if !in(fillers, w) && !in(courtesies, w) {
			return false
		}
	}
	return true
}

// numberWords are numbers written in words: they stand where an example has a value ("between zero and nine").
var numberWords = wordSet("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen " +
	"fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred " +
	"thousand million billion")

// shape is what a span is made of: values (or numbers in words), operators, words, and names (a run of
// capitalised words is one name: "New York City"). A span is replaced only by one of the same shape, whatever its
// words: "locker code" by "gym PIN", "Paris" by "New York City", "0" by "zero", "6*8" by "2+2"; not "7" by "7
// squared", "12" by "half of 12", "9-5" by "3 minus 5", nor "SYMBOL" by "AAPL yesterday".
func shape(ws []word) string {
	var b strings.Builder
	for i, w := range ws {
		switch {
		case w.kind == valueTok || in(numberWords, w):
			b.WriteByte('V')
		case w.kind == opTok:
			b.WriteByte('O')
		case capitalized(w.text) && i > 0 && capitalized(ws[i-1].text) && ws[i-1].kind == wordTok:
			// the name goes on
		default:
			b.WriteByte('W')
		}
	}
	return b.String()
}

func hasValue(ws []word) bool {
	for _, w := range ws {
		if w.kind == valueTok {
			return true
		}
	}
	return false
}
