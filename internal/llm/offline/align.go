package offline

import (
	"slices"
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

// subst replaces a sequence of words (compared without regard to case) with a text.
type subst struct {
	from []string
	to   string
}

// align compares an example's text with the real one word by word (a longest common subsequence, ignoring case)
// and returns what differs as substitutions: the example's words between two common words, replaced by the real
// text between the same two common words. Where both sides of a difference have as many words, each word is
// paired with its counterpart ("0 and 19" / "5 and 50" gives 0→5 and 19→50), so that punctuation between them in
// the lines to fill ("0, 19") survives. A difference with nothing on either side (a word only one text has) gives
// nothing.
func align(example, real string) []subst {
	ex, re := words(example), words(real)
	n, m := len(ex), len(re)
	// lcs[i][j] is the length of the longest common subsequence of ex[i:] and re[j:].
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if strings.EqualFold(ex[i].text, re[j].text) {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []subst
	emit := func(exRun, reRun []word) {
		if len(exRun) == 0 || len(reRun) == 0 {
			return
		}
		if len(exRun) == len(reRun) {
			for k := range exRun {
				out = append(out, subst{from: []string{exRun[k].text}, to: reRun[k].text})
			}
			return
		}
		from := make([]string, len(exRun))
		for k, w := range exRun {
			from[k] = w.text
		}
		out = append(out, subst{from: from, to: real[reRun[0].start:reRun[len(reRun)-1].end]})
	}
	i, j, i0, j0 := 0, 0, 0, 0
	for i < n && j < m {
		switch {
		case strings.EqualFold(ex[i].text, re[j].text):
			emit(ex[i0:i], re[j0:j])
			i, j = i+1, j+1
			i0, j0 = i, j
		case lcs[i+1][j] >= lcs[i][j+1]:
			i++
		default:
			j++
		}
	}
	emit(ex[i0:], re[j0:])
	return out
}

// alignResult is align for a func's or agent's result, plus the whole example result replaced by the whole real
// one: where a line repeats the example's result in full, it gets the real result in full, whatever the words
// they happen to share ("Sunny, 23 degrees" / "Rain, 9 degrees" still gives Sunny→Rain and 23→9 elsewhere).
func alignResult(example, real string) []subst {
	ex, re := words(example), words(real)
	if len(ex) == 0 || len(re) == 0 {
		return nil
	}
	out := align(example, real)
	if len(ex) > 1 {
		from := make([]string, len(ex))
		for k, w := range ex {
			from[k] = w.text
		}
		out = append([]subst{{from: from, to: real[re[0].start:re[len(re)-1].end]}}, out...)
	}
	return out
}

// substitute applies substs to text, left to right, trying longer sequences first and earlier substs first
// among equals; replaced text is not looked at again.
func substitute(text string, substs []subst) string {
	if len(substs) == 0 {
		return text
	}
	order := slices.Clone(substs)
	slices.SortStableFunc(order, func(a, b subst) int { return len(b.from) - len(a.from) })
	ws := words(text)
	var b strings.Builder
	last := 0
	for i := 0; i < len(ws); {
		matched := false
		for _, s := range order {
			if i+len(s.from) > len(ws) || !wordsEqual(ws[i:i+len(s.from)], s.from) {
				continue
			}
			end := ws[i+len(s.from)-1].end
			b.WriteString(text[last:ws[i].start])
			b.WriteString(s.to)
			last = end
			i += len(s.from)
			matched = true
			break
		}
		if !matched {
			i++
		}
	}
	b.WriteString(text[last:])
	return b.String()
}

func wordsEqual(ws []word, texts []string) bool {
	for k, w := range ws {
		if !strings.EqualFold(w.text, texts[k]) {
			return false
		}
	}
	return true
}
