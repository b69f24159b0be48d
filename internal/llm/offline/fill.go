package offline

import (
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/internal/llm"
)

// source is a text an example's lines take words from — its question, or a func's or agent's result — aligned with
// the real text in its place.
type source struct {
	a      alignment
	real   string
	result bool
	// name says what the text is, in a reason: "the question", "Func[weather]'s answer".
	name string
}

// owner is the source word a word of a line repeats; src < 0 means none (the line's own word).
type owner struct{ src, idx int }

// owners finds, for each word of a line, the source word it repeats:
//
//  1. each source's longest common subsequence with the line: a question's earliest matches, a result's latest
//     (an answer restates the question first and ends on the result: "9 divided by 3 is 3");
//  2. a word claimed by several sources goes to the latest result, the freshest fact;
//  3. a word still unclaimed that equals a word of exactly one source goes to that source ("SYMBOL share price" /
//     "The share price for SYMBOL is ...": the order differs, the word is the same).
func owners(lw []word, srcs []source) []owner {
	own := make([]owner, len(lw))
	for i := range own {
		own[i] = owner{src: -1}
	}
	for s, src := range srcs {
		for i, k := range lcs(lw, src.a.ex, src.result) {
			if own[i].src < 0 || src.result {
				own[i] = owner{s, k}
			}
		}
	}
	for i, w := range lw {
		if own[i].src >= 0 {
			continue
		}
		var found []owner
		for s, src := range srcs {
			for k, x := range src.a.ex {
				if strings.EqualFold(x.text, w.text) {
					found = append(found, owner{s, k})
					break
				}
			}
		}
		if len(found) == 1 {
			own[i] = found[0]
		}
	}
	return own
}

// operators are the characters by which a line can turn words into something else ("5 plus 3" → "5 + 3").
const operators = "+-*/^=<>%×÷()"

// fill puts the real texts' words in an example line, or says why it cannot be done with certainty.
//
// Every word the line repeats from a source takes what stands in its place in the real text; a result repeated
// whole is replaced whole. A repeated word with nothing certain in its place, or a source that does not align at
// all, is a reason. With strict (a line that decides what is asked or answered before any result is back) the line
// must also not depend on what differs: when the question differs from the example in words the line does not
// carry, the line may hold nothing of its own beyond them (no words of its own, no operators), and it may differ in
// one such word at most.
func fill(line string, srcs []source, strict bool) (string, string) {
	pl := llm.ParseCodeShotLine(line)
	text := pl.Text
	lw := words(text)
	own := owners(lw, srcs)
	repl := make([]string, len(lw)) // what each word becomes
	skip := make([]bool, len(lw))   // inside a whole result replaced at its first word
	for i, w := range lw {
		repl[i] = w.text
	}
	for s, src := range srcs {
		if start, end, ok := wholeResult(own, s, src); ok {
			rw := words(src.real)
			repl[start] = src.real[rw[0].start:rw[len(rw)-1].end]
			for i := start + 1; i <= end; i++ {
				skip[i] = true
			}
			for i := start; i <= end; i++ {
				own[i].idx = -1 // handled whole
			}
		}
	}
	used := map[int]bool{} // question words the line repeats
	var lineOwn []string   // the line's own words
	for i, o := range own {
		switch {
		case o.src < 0:
			lineOwn = append(lineOwn, lw[i].text)
			continue
		case o.idx < 0:
			continue
		}
		src := srcs[o.src]
		if o.src == 0 {
			used[o.idx] = true
		}
		if why := src.a.problem(); why != "" && src.result {
			return "", why + " (" + src.name + ")"
		}
		ex := src.a.ex[o.idx].text
		switch src.a.state[o.idx] {
		case replaced:
			repl[i] = src.a.to[o.idx]
		case dropped:
			if isValue(ex) {
				return "", fmt.Sprintf("the examples' %q has no counterpart in %s", ex, src.name)
			}
		case missing:
			// Once the call is made, an answer may keep a word of the example's wording; never a value.
			if strict || isValue(ex) {
				return "", fmt.Sprintf("the examples' %q has no counterpart in %s", ex, src.name)
			}
		}
	}
	if strict {
		if why := dependsOnDifferences(text, lw, lineOwn, srcs[0], used); why != "" {
			return "", why
		}
	}
	var b strings.Builder
	last := 0
	for i, w := range lw {
		if skip[i] {
			last = w.end
			continue
		}
		b.WriteString(text[last:w.start])
		b.WriteString(repl[i])
		last = w.end
	}
	b.WriteString(text[last:])
	pl.Text = b.String()
	return pl.String(), ""
}

// wholeResult finds a result that the line repeats whole, word after word: the line positions it spans.
func wholeResult(own []owner, s int, src source) (int, int, bool) {
	if !src.result || len(src.a.ex) == 0 || len(words(src.real)) == 0 {
		return 0, 0, false
	}
	var at []int
	for i, o := range own {
		if o.src == s {
			at = append(at, i)
		}
	}
	if len(at) != len(src.a.ex) {
		return 0, 0, false
	}
	for k, i := range at {
		if own[i].idx != k || i != at[0]+k {
			return 0, 0, false
		}
	}
	return at[0], at[len(at)-1], true
}

// dependsOnDifferences says why a line cannot be trusted for a question that differs from its example in words
// the line does not carry, or "".
func dependsOnDifferences(text string, lw []word, lineOwn []string, q source, used map[int]bool) string {
	var diffs []string
	for k, w := range q.a.ex {
		if used[k] {
			continue
		}
		lower := strings.ToLower(w.text)
		switch q.a.state[k] {
		case missing:
			diffs = append(diffs, fmt.Sprintf("%q", w.text))
		case replaced:
			if !isValue(w.text) {
				diffs = append(diffs, fmt.Sprintf("%q (yours: %q)", w.text, q.a.to[k]))
			}
		case dropped:
			if !leadIns[lower] && !isValue(w.text) {
				diffs = append(diffs, fmt.Sprintf("%q", w.text))
			}
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	if len(diffs) > 1 {
		return "the question differs from the examples in " + strings.Join(diffs, ", ")
	}
	// What the line writes that comes from no source: its own words and the operators between words.
	ops := 0
	last := 0
	for _, w := range lw {
		ops += operatorsIn(text[last:w.start])
		last = w.end
	}
	ops += operatorsIn(text[last:])
	if len(lineOwn) == 0 && ops == 0 {
		return ""
	}
	return fmt.Sprintf("the examples turn %s into %q in a way that cannot be redone without it", diffs[0], text)
}

func operatorsIn(s string) int {
	n := 0
	for _, r := range s {
		if strings.ContainsRune(operators, r) {
			n++
		}
	}
	return n
}
