package codeshot

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Kind is what a few-shot line (or a line of model output) is.
type Kind int

// The kinds of line. Fixie recognised six patterns; anything else (a "Thought: ..." line, the continuation of a
// long answer, a blank line) is free text.
const (
	Text      Kind = iota // free text
	Query                 // Q: <query>
	Answer                // A: <answer>
	AskFunc               // Ask Func[f]: <argument>
	FuncSays              // Func[f] says: <result>
	AskAgent              // Ask Agent[a]: <query>
	AgentSays             // Agent[a] says: <reply>
)

// String names the kind the way a user writes it in a few-shot.
func (k Kind) String() string {
	switch k {
	case Query:
		return "Q:"
	case Answer:
		return "A:"
	case AskFunc:
		return "Ask Func"
	case FuncSays:
		return "Func says"
	case AskAgent:
		return "Ask Agent"
	case AgentSays:
		return "Agent says"
	default:
		return "text"
	}
}

// recognised reports whether the kind is one of Fixie's six patterns (everything but free text).
func (k Kind) recognised() bool { return k != Text }

// Line is one classified line.
type Line struct {
	Kind Kind
	// Name is the func of an AskFunc or FuncSays line, or the agent of an AskAgent or AgentSays line.
	Name string
	// Text is what follows the pattern's colon, without surrounding whitespace: the query, the answer, the func's
	// argument or result, the agent's query or reply. For free text it is the whole line.
	Text string
	// Raw is the line as it was given.
	Raw string
}

// String writes the line back in its canonical form, e.g. "Func[genrand] says: 17". The executor uses it to feed
// a func's result to the model.
func (l Line) String() string {
	switch l.Kind {
	case Query:
		return joinPayload("Q:", l.Text)
	case Answer:
		return joinPayload("A:", l.Text)
	case AskFunc:
		return joinPayload("Ask Func["+l.Name+"]:", l.Text)
	case FuncSays:
		return joinPayload("Func["+l.Name+"] says:", l.Text)
	case AskAgent:
		return joinPayload("Ask Agent["+l.Name+"]:", l.Text)
	case AgentSays:
		return joinPayload("Agent["+l.Name+"] says:", l.Text)
	default:
		return l.Text
	}
}

func joinPayload(prefix, text string) string {
	if text == "" {
		return prefix
	}
	return prefix + " " + text
}

// ParseLine classifies one line of model output. Surrounding whitespace (including a "\r" left by CRLF output) is
// ignored, as Fixie stripped every line; a string holding several lines should be split by the caller first.
//
// The patterns are Fixie's: "Q:", "A:", "Ask Func[f]:", "Func[f] says:", "Ask Agent[a]:", "Agent[a] says:", where
// a name is one or more word characters (letters, digits, underscore). A line that almost matches (such as
// "Ask Func[my-func]: x") is free text, as it was in Fixie.
func ParseLine(s string) Line {
	l := classify(strings.TrimSpace(s))
	l.Raw = s
	return l
}

// classify matches the patterns at the very start of s, without trimming it first: a few-shot line that starts with
// a space is not a recognised line (and the whitespace rule reports it).
func classify(s string) Line {
	if rest, ok := strings.CutPrefix(s, "Q:"); ok {
		return Line{Kind: Query, Text: strings.TrimSpace(rest), Raw: s}
	}
	if rest, ok := strings.CutPrefix(s, "A:"); ok {
		return Line{Kind: Answer, Text: strings.TrimSpace(rest), Raw: s}
	}
	if rest, ok := strings.CutPrefix(s, "Ask Func["); ok {
		if name, rest, ok := bracketName(rest, "]:"); ok {
			return Line{Kind: AskFunc, Name: name, Text: strings.TrimSpace(rest), Raw: s}
		}
	}
	if rest, ok := strings.CutPrefix(s, "Func["); ok {
		if name, rest, ok := bracketName(rest, "] says:"); ok {
			return Line{Kind: FuncSays, Name: name, Text: strings.TrimSpace(rest), Raw: s}
		}
	}
	if rest, ok := strings.CutPrefix(s, "Ask Agent["); ok {
		if name, rest, ok := bracketName(rest, "]:"); ok {
			return Line{Kind: AskAgent, Name: name, Text: strings.TrimSpace(rest), Raw: s}
		}
	}
	if rest, ok := strings.CutPrefix(s, "Agent["); ok {
		if name, rest, ok := bracketName(rest, "] says:"); ok {
			return Line{Kind: AgentSays, Name: name, Text: strings.TrimSpace(rest), Raw: s}
		}
	}
	return Line{Kind: Text, Text: strings.TrimSpace(s), Raw: s}
}

// bracketName reads a run of word characters followed by suffix, returning the name and what follows the suffix.
func bracketName(s, suffix string) (name, rest string, ok bool) {
	n := wordPrefixLen(s)
	if n == 0 {
		return "", "", false
	}
	rest, ok = strings.CutPrefix(s[n:], suffix)
	if !ok {
		return "", "", false
	}
	return s[:n], rest, true
}

// wordPrefixLen is the length in bytes of the run of word characters at the start of s.
func wordPrefixLen(s string) int {
	n := 0
	for n < len(s) {
		r, size := utf8.DecodeRuneInString(s[n:])
		if !isWordRune(r) {
			break
		}
		n += size
	}
	return n
}

// isWordRune is Python's \w for str patterns (the SDK's regexes are Python's): letters, numbers and underscore.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}
