package codeshot

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// BuiltinFuncPrefix starts the name of every func the platform itself provides (fixie_local_datetime, ...). A
// few-shot may call such a func whatever funcs its agent registers.
const BuiltinFuncPrefix = "fixie_"

// Options says what the examples are checked against.
type Options struct {
	// Conversational allows several question-answer turns in one example (^(Qx*A)+$ instead of ^Qx*A$).
	Conversational bool
	// Funcs are the funcs the agent registers. Nil means the list is unknown and every func name is accepted: an
	// agent registered by URL does not tell the platform its funcs, only its few-shots. A non-nil list (even an
	// empty one) is enforced: a func outside it, and not built in (fixie_*), is a problem.
	Funcs []string
}

// Rule names one validation rule; every Problem carries the rule it broke.
type Rule string

// The rules of Fixie 1.0's few-shot validation, plus an explicit rule for an empty example (Fixie failed on one with
// an unreadable message).
const (
	RuleEmpty           Rule = "empty"            // an example has no text, or there are no examples
	RuleWhitespace      Rule = "whitespace"       // a line starts or ends with whitespace or "\r"
	RuleTrailingNewline Rule = "trailing-newline" // an example ends with a newline
	RuleFirstLine       Rule = "first-line"       // the first line is not "Q:"
	RuleEmptyQuery      Rule = "empty-query"      // a "Q:" line has no query after it
	RuleAskFuncReply    Rule = "ask-func-reply"   // "Ask Func[f]" not immediately followed by "Func[f] says"
	RuleAskAgentReply   Rule = "ask-agent-reply"  // "Ask Agent[a]" not immediately followed by "Agent[a] says"
	RuleUnknownFunc     Rule = "unknown-func"     // a func the agent does not register
	RuleLastLineAnswer  Rule = "last-line-answer" // the last recognised line is not "A:"
	RuleSequence        Rule = "sequence"         // the recognised lines do not follow ^Qx*A$ (or ^(Qx*A)+$)
	RuleNewEmbed        Rule = "new-embed"        // an embed first appears on an Ask Agent, Ask Func or A: line
	RuleBasePrompt      Rule = "base-prompt"      // the base prompt has an edge newline or a padded line
)

// Problem is one broken rule, located so that a user can find and fix it.
type Problem struct {
	// Example is the 1-based index of the few-shot example; 0 means the base prompt.
	Example int
	// Line is the 1-based line within the example (or base prompt); 0 means the example as a whole.
	Line int
	Rule Rule
	// Detail says what is wrong and how to put it right.
	Detail string
}

// String reads like `few-shot 2, line 3: "Ask Func[quote]" must be followed by "Func[quote] says:", found "A: ..."`.
func (p Problem) String() string {
	where := fmt.Sprintf("few-shot %d", p.Example)
	if p.Example == 0 {
		where = "base prompt"
	}
	if p.Line > 0 {
		where += fmt.Sprintf(", line %d", p.Line)
	}
	return where + ": " + p.Detail
}

// ValidationError holds every problem found, ordered by where it is (base prompt first, then by example and line).
type ValidationError struct {
	Problems []Problem
}

// maxListed bounds how many problems the error message spells out; all of them stay in Problems.
const maxListed = 5

// Error leads with the first problem and lists a few more.
func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more problems", len(e.Problems)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}

// Validate checks a base prompt and few-shot examples against every rule of Fixie 1.0 and returns nil or a
// *ValidationError holding all the problems found. It checks the text as given: pass examples through Split or
// Normalize first to accept what Fixie's SDK would have cleaned up (padded lines, edge newlines), or validate the
// raw text to hold an agent to the letter of the rules.
func Validate(basePrompt string, examples []string, opts Options) error {
	var problems []Problem
	problems = append(problems, checkBasePrompt(basePrompt)...)
	if len(examples) == 0 {
		problems = append(problems, Problem{Example: 1, Rule: RuleEmpty,
			Detail: `there are no few-shots; give at least one, a "Q:" line with a sample query through to an "A:" line`})
	}
	for i, text := range examples {
		problems = append(problems, checkExample(i+1, text, opts)...)
	}
	if len(problems) == 0 {
		return nil
	}
	slices.SortStableFunc(problems, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Example, b.Example), cmp.Compare(a.Line, b.Line))
	})
	return &ValidationError{Problems: problems}
}

func checkBasePrompt(prompt string) []Problem {
	var problems []Problem
	if strings.HasPrefix(prompt, "\n") {
		problems = append(problems, Problem{Rule: RuleBasePrompt, Detail: "the base prompt starts with a newline; remove it"})
	}
	if strings.HasSuffix(prompt, "\n") {
		problems = append(problems, Problem{Rule: RuleBasePrompt, Detail: "the base prompt ends with a newline; remove it"})
	}
	for j, line := range strings.Split(prompt, "\n") {
		if d := paddingDetail(line); d != "" {
			problems = append(problems, Problem{Line: j + 1, Rule: RuleBasePrompt, Detail: d})
		}
	}
	return problems
}

// paddingDetail describes whitespace at either end of a line, or returns "" when there is none.
func paddingDetail(line string) string {
	first, _ := utf8.DecodeRuneInString(line)
	last, _ := utf8.DecodeLastRuneInString(line)
	switch {
	case line == "":
		return ""
	case last == '\r':
		return fmt.Sprintf(`the line ends with a carriage return ("\r"); use "\n" line endings: %q`, truncate(line))
	case unicode.IsSpace(first):
		return fmt.Sprintf("the line starts with whitespace; remove it: %q", truncate(line))
	case unicode.IsSpace(last):
		return fmt.Sprintf("the line ends with whitespace; remove it: %q", truncate(line))
	}
	return ""
}

func checkExample(n int, text string, opts Options) []Problem {
	if strings.TrimSpace(text) == "" {
		return []Problem{{Example: n, Rule: RuleEmpty,
			Detail: `the few-shot is empty; write a "Q:" line with a sample query, then end with an "A:" line`}}
	}
	var problems []Problem
	add := func(line int, rule Rule, format string, args ...any) {
		problems = append(problems, Problem{Example: n, Line: line, Rule: rule, Detail: fmt.Sprintf(format, args...)})
	}
	if strings.HasSuffix(text, "\n") {
		add(0, RuleTrailingNewline, "the few-shot ends with a newline; remove the trailing newline")
		text = strings.TrimRight(text, "\n")
	}
	ex := Parse([]string{text})[0]

	for j, l := range ex.Lines {
		if d := paddingDetail(l.Raw); d != "" {
			add(j+1, RuleWhitespace, "%s", d)
		}
		if l.Kind == Query && l.Text == "" {
			add(j+1, RuleEmptyQuery, `"Q:" must be followed by a sample query, as in "Q: What is 12 times 7?"`)
		}
	}

	if first := ex.Lines[0]; first.Kind != Query {
		add(1, RuleFirstLine, `a few-shot must start with a "Q:" line, found %s`, quoteLine(first.Raw))
	}

	checkAsks(ex.Lines, add)
	checkFuncs(ex.Lines, opts.Funcs, add)
	checkEmbeds(ex.Lines, add)
	checkLastLine(ex.Lines, add)
	checkSequence(ex.Lines, opts.Conversational, add)
	return problems
}

type addFunc func(line int, rule Rule, format string, args ...any)

// checkAsks checks that every "Ask Func[f]" (or "Ask Agent[a]") is immediately followed by "Func[f] says" (or
// "Agent[a] says"): the model's continuation stops there and the platform supplies the reply.
func checkAsks(lines []Line, add addFunc) {
	for j, l := range lines {
		var want Kind
		var rule Rule
		switch l.Kind {
		case AskFunc:
			want, rule = FuncSays, RuleAskFuncReply
		case AskAgent:
			want, rule = AgentSays, RuleAskAgentReply
		default:
			continue
		}
		found := "the end of the few-shot"
		if j+1 < len(lines) {
			next := lines[j+1]
			if next.Kind == want && next.Name == l.Name {
				continue
			}
			found = quoteLine(next.Raw)
		}
		add(j+1, rule, "%q must be followed by %q, found %s",
			pattern(l.Kind, l.Name), pattern(want, l.Name), found)
	}
}

// checkFuncs reports each unknown func once per example, at its first line. A nil list means the funcs are unknown.
func checkFuncs(lines []Line, funcs []string, add addFunc) {
	if funcs == nil {
		return
	}
	registered := "the agent registers no funcs"
	if len(funcs) > 0 {
		registered = "its funcs: " + strings.Join(funcs, ", ")
	}
	var reported []string
	for j, l := range lines {
		if l.Kind != AskFunc && l.Kind != FuncSays {
			continue
		}
		if strings.HasPrefix(l.Name, BuiltinFuncPrefix) || slices.Contains(funcs, l.Name) || slices.Contains(reported, l.Name) {
			continue
		}
		reported = append(reported, l.Name)
		add(j+1, RuleUnknownFunc, "Func[%s] is not a func of this agent (%s); register it, or call a built-in func (named %s...)",
			l.Name, registered, BuiltinFuncPrefix)
	}
}

// checkEmbeds enforces that an embed key is introduced by the query or by a reply (a func's or an agent's), never by
// what the model writes itself (Ask Func, Ask Agent, A:): a model that learnt to invent embed keys would refer to
// embeds that do not exist. Free text belongs to the recognised line before it, as in Fixie.
func checkEmbeds(lines []Line, add addFunc) {
	known := map[string]bool{}
	last, lastLine := Query, 1
	for j, l := range lines {
		if l.Kind.recognised() {
			last, lastLine = l.Kind, j+1
		}
		for _, key := range EmbedRefs(l.Raw) {
			if known[key] {
				continue
			}
			known[key] = true
			if last != AskFunc && last != AskAgent && last != Answer {
				continue
			}
			where := fmt.Sprintf("on an %q line", describe(last))
			if !l.Kind.recognised() {
				where = fmt.Sprintf("in text that continues the %q line %d", describe(last), lastLine)
			}
			add(j+1, RuleNewEmbed, `embed #%s first appears %s; a new embed may first appear only in the "Q:" line or in a reply ("Func[...] says:", "Agent[...] says:")`,
				key, where)
		}
	}
}

// checkLastLine checks that the last recognised line is "A:": the answer is what ends a query.
func checkLastLine(lines []Line, add addFunc) {
	for j := len(lines) - 1; j >= 0; j-- {
		l := lines[j]
		if !l.Kind.recognised() {
			continue
		}
		if l.Kind != Answer {
			add(j+1, RuleLastLineAnswer, `a few-shot must end with an "A:" line, its last recognised line is %s`, quoteLine(l.Raw))
		}
		return
	}
	add(0, RuleLastLineAnswer, `a few-shot must end with an "A:" line, and this one has no "Q:", "A:", "Ask Func" or "Func says" line at all`)
}

// checkSequence checks that the recognised lines come in the order ^Qx*A$, or ^(Qx*A)+$ for a conversational agent.
// A missing first "Q:" and a missing last "A:" have their own rules; this one reports the first line out of order
// only, because the rest of the example is misread after it anyway.
func checkSequence(lines []Line, conversational bool, add addFunc) {
	openQ, answerLine := 0, 0 // the line of the "Q:" awaiting its answer, of the last "A:"
	for j, l := range lines {
		if !l.Kind.recognised() {
			continue
		}
		if answerLine == 0 {
			switch l.Kind {
			case Query:
				if openQ > 0 {
					add(j+1, RuleSequence, `the "Q:" on line %d is never answered: an "A:" line must come before the next "Q:"`, openQ)
					return
				}
				openQ = j + 1
			case Answer:
				openQ, answerLine = 0, j+1
			}
			continue
		}
		switch {
		case l.Kind == Query && conversational:
			openQ, answerLine = j+1, 0
		case l.Kind == Query:
			add(j+1, RuleSequence, `only a conversational agent may have several "Q:" turns in one few-shot; to start a new few-shot, put a blank line before %s`, quoteLine(l.Raw))
			return
		case conversational:
			add(j+1, RuleSequence, `after the "A:" on line %d only a new "Q:" may follow, found %s`, answerLine, quoteLine(l.Raw))
			return
		default:
			add(j+1, RuleSequence, `nothing but the answer's own text may follow the "A:" on line %d, found %s`, answerLine, quoteLine(l.Raw))
			return
		}
	}
}

// pattern writes the start of a line of the given kind, as in "Ask Func[quote]" or "Func[quote] says:".
func pattern(k Kind, name string) string {
	switch k {
	case AskFunc:
		return "Ask Func[" + name + "]"
	case FuncSays:
		return "Func[" + name + "] says:"
	case AskAgent:
		return "Ask Agent[" + name + "]"
	case AgentSays:
		return "Agent[" + name + "] says:"
	}
	return k.String()
}

// describe names a kind of line in a message.
func describe(k Kind) string {
	switch k {
	case AskFunc:
		return "Ask Func[...]"
	case AskAgent:
		return "Ask Agent[...]"
	}
	return k.String()
}

// quoteLine quotes a line for a message, or says it is empty.
func quoteLine(s string) string {
	if s == "" {
		return "an empty line"
	}
	return fmt.Sprintf("%q", truncate(s))
}

// truncate shortens s for quoting in a message, marking the cut with an ellipsis.
func truncate(s string) string {
	const n = 60
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
