package offline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/internal/llm"
)

// exLine is a line of an example after its question.
type exLine struct {
	pl   llm.CodeShotLine
	toks []word
	// says is a func's or agent's result: the executor writes it, not the model.
	says bool
	// call is an "Ask Func" or "Ask Agent" line.
	call bool
}

// source is a text an example's lines repeat from — its question, or a func's or agent's result — compared with
// the real text in its place once that is known.
type source struct {
	ex     []word
	result bool
	// at is, for a result, the index of its line; the question's is -1.
	at int
	// name says what the text is, in a reason: "the question", "Func[weather]'s answer".
	name string

	known  bool // the real text is known, and d and chosen are set
	d      diff
	chosen []span // how the differences were read (see diff.refinements)
	spanOf []int  // for each example token: its span in chosen, or -1
}

// owner is the source token a token of a line repeats; src < 0 means none (the line's own token).
type owner struct{ src, idx int }

// plan is how an example's lines are written again for a real question: which of their tokens repeat which
// tokens of the question and of the results, and what those became.
type plan struct {
	lines []exLine
	srcs  []*source
	// own is, for each line the model writes, the owner of each of its tokens.
	own [][]owner
}

// newPlan reads an example's lines after its question (seg) and finds what each line repeats of the question
// (example text q) and of the results before it.
func newPlan(q string, seg []string) *plan {
	p := &plan{srcs: []*source{{ex: words(q), at: -1, name: "the question"}}}
	for i, l := range seg {
		pl := llm.ParseCodeShotLine(l)
		line := exLine{pl: pl, toks: words(pl.Text)}
		switch pl.Kind {
		case llm.LineFuncSays, llm.LineAgentSays:
			line.says = true
			p.srcs = append(p.srcs, &source{ex: line.toks, result: true, at: i,
				name: strings.TrimSuffix(pl.Prefix, " says:") + "'s answer"})
		case llm.LineAskFunc, llm.LineAskAgent:
			line.call = true
		}
		p.lines = append(p.lines, line)
	}
	p.own = make([][]owner, len(seg))
	for i, line := range p.lines {
		if line.says {
			continue
		}
		var visible []int
		for s, src := range p.srcs {
			if src.at < i {
				visible = append(visible, s)
			}
		}
		p.own[i] = p.owners(line.toks, visible)
	}
	return p
}

// owners finds, for each token of a line, the source token it repeats:
//
//  1. each source's longest common subsequence with the line: a question's earliest matches, a result's latest
//     (an answer restates the question first and ends on the result: "9 divided by 3 is 3");
//  2. a token claimed by several sources goes to the latest result, the freshest fact;
//  3. a word or value still unclaimed that equals a token of exactly one source goes to that source ("SYMBOL share
//     price" / "The share price for SYMBOL is ...": the order differs, the word is the same).
func (p *plan) owners(lw []word, visible []int) []owner {
	own := make([]owner, len(lw))
	for i := range own {
		own[i] = owner{src: -1}
	}
	for _, s := range visible {
		src := p.srcs[s]
		for i, k := range lcs(lw, src.ex, src.result) {
			if own[i].src < 0 || src.result {
				own[i] = owner{s, k}
			}
		}
	}
	for i, w := range lw {
		if own[i].src >= 0 || w.kind == opTok {
			continue
		}
		var found []owner
		for _, s := range visible {
			for k, x := range p.srcs[s].ex {
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

// copyAt is where a line repeats a span of a source whole: tokens [from, to) of line.
type copyAt struct{ line, from, to int }

// copies finds where the lines the model writes after a source repeat its span sp whole, and whether one of them
// repeats a part of it that says something ("5 + 3" repeats "5" and "3" of "5 plus 3", not the span).
func (p *plan) copies(s int, sp span) (whole []copyAt, partial []word) {
	src := p.srcs[s]
	for j, line := range p.lines {
		if line.says || j <= src.at {
			continue
		}
		own := p.own[j]
		for pos := 0; pos < len(own); {
			o := own[pos]
			if o.src != s || o.idx < sp.elo || o.idx >= sp.ehi {
				pos++
				continue
			}
			start := pos
			for pos+1 < len(own) && own[pos+1].src == s && own[pos+1].idx == own[pos].idx+1 && own[pos+1].idx < sp.ehi {
				pos++
			}
			end := pos + 1
			switch {
			case own[start].idx == sp.elo && own[end-1].idx == sp.ehi-1:
				whole = append(whole, copyAt{j, start, end})
			case !onlyFillers(line.toks[start:end]):
				partial = append(partial, line.toks[start:end]...)
			}
			pos = end
		}
	}
	return whole, partial
}

// read compares source s with its real text and chooses, for each difference, the first reading of it (see
// diff.refinements) that the example's lines can carry, or says why there is none:
//
//   - a difference the lines repeat whole is replaced there by the real text's aligned span, whatever its words,
//     as long as it is of the same shape (see shape: "locker code" → "gym PIN", "0" → "zero", "6" → "-2");
//   - a difference the lines do not repeat, or repeat only in pieces, changes what is asked ("square root of",
//     "times" / "modulo"): no reading;
//   - words the real text adds, or leaves out, must be fillers or courtesies;
//   - for the question, when the example calls funcs or agents, a difference that holds a value, or that opens
//     the question, must be carried by a call; one other difference of words at most may be left to the other
//     lines, and only where every call just repeats the question's tokens (no words or operators of its own that
//     might stand for it).
func (p *plan) read(s int, real string) string {
	src := p.srcs[s]
	d := compare(src.ex, real, !src.result)
	src.d, src.known = d, true
	src.spanOf = make([]int, len(d.ex))
	for i := range src.spanOf {
		src.spanOf[i] = -1
	}
	if !src.result && len(d.spans) > 0 && d.anchored == 0 {
		return "the question has nothing in common with the examples"
	}
	rd := &reading{p: p, s: s, src: src, d: d}
	for _, l := range p.lines {
		rd.hasCalls = rd.hasCalls || l.call
	}
	var spans []span
	for _, sp := range d.spans {
		if !d.same(sp) {
			spans = append(spans, sp)
		}
	}
	if len(spans) == 0 {
		return ""
	}
	if src.result && (len(spans) > 1 || spans[0] != (span{0, len(d.ex), 0, len(d.re)})) {
		// A result repeated whole is replaced whole ("Sunny, 23 degrees" → "Light rain and wind, 9 degrees").
		if all := (span{0, len(d.ex), 0, len(d.re)}); len(d.ex) > 0 && len(d.re) > 0 {
			if why, _ := rd.check([]span{all}); why == "" {
				return rd.choose(all)
			}
		}
	}
	for _, sp := range spans {
		if why := rd.choose(sp); why != "" {
			return why
		}
	}
	return rd.uncarriedWhy()
}

// reading is one read of a source against its real text (plan.read): the differences found, the readings chosen,
// and the differences of words left to lines other than the calls.
type reading struct {
	p         *plan
	s         int
	src       *source
	d         diff
	hasCalls  bool
	uncarried []span
}

// check says why a reading r of a difference cannot be carried by the example's lines ("" when it can), and which of
// its differences of words it leaves to lines other than the calls.
func (rd *reading) check(r []span) (why string, words []span) {
	p, s, src, d, hasCalls := rd.p, rd.s, rd.src, rd.d, rd.hasCalls
	for _, sp := range r {
		e, re := d.ex[sp.elo:sp.ehi], d.re[sp.rlo:sp.rhi]
		switch {
		case len(e) == 0:
			if !onlyFillers(re) {
				return "the examples say nothing like " + d.quoteRe(sp), nil
			}
		case len(re) == 0:
			if !onlyFillers(e) {
				return fmt.Sprintf("%s has nothing in place of the examples' %s", src.name, d.quoteEx(sp)), nil
			}
		case shape(e) != shape(re) && !(src.result && len(e) == len(d.ex) && len(re) == len(d.re)):
			// (A result repeated whole is replaced whole, whatever its shape: it is the func's own answer.)
			return fmt.Sprintf("%s has %s where the examples have %s", src.name, d.quoteRe(sp), d.quoteEx(sp)), nil
		default:
			whole, partial := p.copies(s, sp)
			if len(partial) > 0 {
				return fmt.Sprintf("the examples turn %s into something else, which cannot be redone for %s",
					d.quoteEx(sp), d.quoteRe(sp)), nil
			}
			if len(whole) == 0 {
				return fmt.Sprintf("%s says %s where the examples say %s, which they do not repeat: it changes what is asked",
					src.name, d.quoteRe(sp), d.quoteEx(sp)), nil
			}
			if src.result || !hasCalls {
				continue
			}
			carried := false
			for _, c := range whole {
				carried = carried || p.lines[c.line].call
			}
			switch {
			case carried:
			case hasValue(e) || hasValue(re):
				return "the examples' calls have no place for " + d.quoteRe(sp), nil
			case sp.elo < d.lead:
				// The words that open a question say what it asks ("Remember" / "Forget"): a call that does not
				// carry them would do the example's thing.
				return fmt.Sprintf("the examples' calls do not say %s, which changes what is asked", d.quoteRe(sp)), nil
			default:
				words = append(words, sp)
			}
		}
	}
	return "", words

}

// choose takes the first reading of a difference that check allows and records it in the source, or says why none
// fits.
func (rd *reading) choose(sp span) string {
	src, d := rd.src, rd.d
	first := ""
	for _, r := range d.refinements(sp) {
		why, words := rd.check(r)
		if why == "" {
			for _, x := range r {
				if x.elo < x.ehi && x.rlo < x.rhi {
					for k := x.elo; k < x.ehi; k++ {
						src.spanOf[k] = len(src.chosen)
					}
					src.chosen = append(src.chosen, x)
				}
			}
			rd.uncarried = append(rd.uncarried, words...)
			return ""
		}
		if first == "" {
			first = why
		}
	}
	return first

}

// uncarriedWhy says why the differences of words left to lines other than the calls cannot be, or "".
func (rd *reading) uncarriedWhy() string {
	p, d := rd.p, rd.d
	switch {
	case len(rd.uncarried) > 1:
		q := make([]string, len(rd.uncarried))
		for i, sp := range rd.uncarried {
			q[i] = d.quoteRe(sp) + " for " + d.quoteEx(sp)
		}
		return "the question differs from the examples in " + strings.Join(q, ", ") + ", which their calls do not repeat"
	case len(rd.uncarried) == 1:
		for j, l := range p.lines {
			if !l.call {
				continue
			}
			for _, o := range p.own[j] {
				if o.src < 0 {
					return fmt.Sprintf("the examples turn %s into %q in a way that cannot be redone for %s",
						d.quoteEx(rd.uncarried[0]), l.pl.Text, d.quoteRe(rd.uncarried[0]))
				}
			}
		}
	}
	return ""
}

// fill writes line i of the example again: each whole repetition of a difference the sources were read with is
// replaced by the real text's span; everything else stays as the example has it.
func (p *plan) fill(i int) string {
	line := p.lines[i]
	text := line.pl.Text
	type repl struct {
		start, end int
		text       string
	}
	var rs []repl
	own := p.own[i]
	for pos := 0; pos < len(own); pos++ {
		o := own[pos]
		if o.src < 0 {
			continue
		}
		src := p.srcs[o.src]
		if !src.known || src.spanOf[o.idx] < 0 {
			continue
		}
		sp := src.chosen[src.spanOf[o.idx]]
		if o.idx != sp.elo {
			continue
		}
		end := pos
		for end+1 < len(own) && own[end+1].src == o.src && own[end+1].idx == own[end].idx+1 && own[end+1].idx < sp.ehi {
			end++
		}
		if own[end].idx != sp.ehi-1 {
			continue // a filler repeated on its own: the line's word
		}
		rs = append(rs, repl{line.toks[pos].start, line.toks[end].end, src.d.realText(sp)})
		pos = end
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].start < rs[b].start })
	var b strings.Builder
	last := 0
	for _, r := range rs {
		b.WriteString(text[last:r.start])
		b.WriteString(r.text)
		last = r.end
	}
	b.WriteString(text[last:])
	pl := line.pl
	pl.Text = b.String()
	return pl.String()
}
