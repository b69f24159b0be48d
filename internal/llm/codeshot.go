package llm

import (
	"regexp"
	"strings"
)

// CodeShotPrompt is the prompt for one step of a Code Shot agent: the model reads it and writes the next line of
// the transcript. This package owns both ends of the format: the Code Shot executor builds the messages with
// Messages, and the offline model reads them back with ParseCodeShotPrompt.
//
// There are two messages. The system message holds the base prompt, a blank line, and CodeShotInstruction (which
// tells a chat model to write the next line only). The user message holds the few-shot examples separated by a
// blank line, then a blank line, then the finished exchanges of this conversation in the same form, then the
// transcript in progress: "Q: <query>" and the lines produced so far. For example:
//
//	Q: Generate a random number between 0 and 19.
//	Ask Func[genrand]: 0, 19
//	Func[genrand] says: 17
//	A: The random number is 17.
//
//	Q: Generate a random number between 5 and 50
//	Ask Func[genrand]: 5, 50
//	Func[genrand] says: 23
//
// The model answers with the next line ("A: The random number is 23."). A real model may run on past that line;
// the caller passes CodeShotStop() as stop sequences so that it stops before writing a "Func[...] says:" or
// "Agent[...] says:" line itself, and takes the lines of the answer in order.
type CodeShotPrompt struct {
	// BasePrompt is the agent's base prompt, e.g. "I am an agent that answers questions about stock prices."
	BasePrompt string
	// Examples are the agent's few-shot examples, each "Q: ...\n...\nA: ..." with no surrounding blank lines.
	Examples []string
	// History are the finished exchanges of this conversation, oldest first, in the same form as Examples.
	History []string
	// Transcript is the exchange in progress, one line per entry: "Q: <query>", then the lines so far, e.g.
	// "Ask Func[genrand]: 5, 50" and "Func[genrand] says: 23". An entry must not hold a newline: it would be read
	// back as two lines.
	Transcript []string
}

// CodeShotInstruction follows the base prompt in the system message of a Code Shot prompt. Completion models of
// Fixie's day continued the prompt by themselves; a chat model needs to be told to.
const CodeShotInstruction = "The user message holds examples of questions and how they were answered, " +
	"one example per paragraph, and ends with a question being answered now. " +
	"Write only the next line of that last paragraph, in the format the examples use: " +
	`"Ask Func[name]: input" to call a function, "Ask Agent[name]: query" to ask another agent, ` +
	`"Thought: ..." to think aloud, "A: ..." for the final answer. ` +
	`Never write a "Func[name] says:" or "Agent[name] says:" line: those lines are the replies of the function ` +
	"or agent, and they are added for you."

// CodeShotStop returns the stop sequences to pass with a Code Shot prompt: a model stops before it writes a func's
// or an agent's reply itself, or starts a new example. (OpenAI accepts at most four.)
func CodeShotStop() []string { return []string{"\nFunc[", "\nAgent[", "\nQ:"} }

// Messages renders the prompt as chat messages, in the format described on CodeShotPrompt.
func (p CodeShotPrompt) Messages() []Message {
	system := CodeShotInstruction
	if p.BasePrompt != "" {
		system = p.BasePrompt + "\n\n" + CodeShotInstruction
	}
	blocks := make([]string, 0, len(p.Examples)+len(p.History)+1)
	for _, b := range p.Examples {
		blocks = append(blocks, strings.TrimSpace(b))
	}
	for _, b := range p.History {
		blocks = append(blocks, strings.TrimSpace(b))
	}
	blocks = append(blocks, strings.Join(p.Transcript, "\n"))
	return []Message{
		{Role: RoleSystem, Content: system},
		{Role: RoleUser, Content: strings.Join(blocks, "\n\n")},
	}
}

// ParseCodeShotPrompt reads back the messages that CodeShotPrompt.Messages produced. It reports false when the
// messages are not a Code Shot prompt (a plain chat): anything but one system and one user message, or a user
// message whose paragraphs do not all start with "Q:".
//
// The text does not say where the examples end and the history begins, so every finished exchange comes back in
// Examples and History is empty; rendering the result again gives the same messages.
func ParseCodeShotPrompt(msgs []Message) (CodeShotPrompt, bool) {
	if len(msgs) != 2 || msgs[0].Role != RoleSystem || msgs[1].Role != RoleUser {
		return CodeShotPrompt{}, false
	}
	blocks := splitExamples(msgs[1].Content)
	if len(blocks) == 0 {
		return CodeShotPrompt{}, false
	}
	for _, b := range blocks {
		if ParseCodeShotLine(firstLine(b)).Kind != LineQuery {
			return CodeShotPrompt{}, false
		}
	}
	base := msgs[0].Content
	base = strings.TrimSuffix(base, CodeShotInstruction)
	base = strings.TrimRight(base, "\n")
	last := blocks[len(blocks)-1]
	return CodeShotPrompt{
		BasePrompt: base,
		Examples:   blocks[:len(blocks)-1],
		Transcript: strings.Split(last, "\n"),
	}, true
}

// SplitFewShots splits a few-shot text into examples the way Fixie's SDK did: a new example starts at a "Q:" line
// that follows a blank line; each example is trimmed of surrounding whitespace and blank lines.
func SplitFewShots(text string) []string { return splitExamples(text) }

func splitExamples(text string) []string {
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var blocks []string
	var cur []string
	flush := func() {
		if b := strings.TrimSpace(strings.Join(cur, "\n")); b != "" {
			blocks = append(blocks, b)
		}
		cur = cur[:0]
	}
	prevBlank := true
	for _, line := range lines {
		blank := strings.TrimSpace(line) == ""
		if prevBlank && strings.HasPrefix(line, "Q:") {
			flush()
		}
		cur = append(cur, line)
		prevBlank = blank
	}
	flush()
	return blocks
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// LineKind is the kind of a line of a Code Shot example or transcript.
type LineKind int

// The kinds of Code Shot lines. Any line that matches none of the patterns is LineText (e.g. "Thought: ...").
const (
	LineText      LineKind = iota
	LineQuery              // Q: <query>
	LineAnswer             // A: <answer>
	LineAskFunc            // Ask Func[name]: <input>
	LineFuncSays           // Func[name] says: <result>
	LineAskAgent           // Ask Agent[name]: <query>
	LineAgentSays          // Agent[name] says: <reply>
)

// CodeShotLine is one parsed line. Prefix is the line up to and including the colon of its pattern and Text is
// what follows, without the one space that separates them. For LineText, Prefix is empty and Text is the line.
type CodeShotLine struct {
	Kind   LineKind
	Name   string // the func or agent, for the Ask/says kinds
	Prefix string
	Text   string
}

// The patterns of Fixie's SDK (fixieai/agents/utils.py).
var (
	reAskFunc   = regexp.MustCompile(`^Ask Func\[(\w+)\]:`)
	reFuncSays  = regexp.MustCompile(`^Func\[(\w+)\] says:`)
	reAskAgent  = regexp.MustCompile(`^Ask Agent\[(\w+)\]:`)
	reAgentSays = regexp.MustCompile(`^Agent\[(\w+)\] says:`)
)

// ParseCodeShotLine classifies a line by the patterns of Fixie's Code Shot syntax.
func ParseCodeShotLine(line string) CodeShotLine {
	rest := func(prefixLen int) string { return strings.TrimPrefix(line[prefixLen:], " ") }
	switch {
	case strings.HasPrefix(line, "Q:"):
		return CodeShotLine{Kind: LineQuery, Prefix: "Q:", Text: rest(2)}
	case strings.HasPrefix(line, "A:"):
		return CodeShotLine{Kind: LineAnswer, Prefix: "A:", Text: rest(2)}
	}
	for _, p := range []struct {
		re   *regexp.Regexp
		kind LineKind
	}{{reAskFunc, LineAskFunc}, {reFuncSays, LineFuncSays}, {reAskAgent, LineAskAgent}, {reAgentSays, LineAgentSays}} {
		if m := p.re.FindStringSubmatch(line); m != nil {
			return CodeShotLine{Kind: p.kind, Name: m[1], Prefix: m[0], Text: rest(len(m[0]))}
		}
	}
	return CodeShotLine{Kind: LineText, Text: line}
}

// String renders the line back: Prefix, a space, Text. A line with no Prefix is built from Kind and Name, so
// CodeShotLine{Kind: LineFuncSays, Name: "genrand", Text: "23"}.String() is "Func[genrand] says: 23".
func (l CodeShotLine) String() string {
	prefix := l.Prefix
	if prefix == "" {
		switch l.Kind {
		case LineQuery:
			prefix = "Q:"
		case LineAnswer:
			prefix = "A:"
		case LineAskFunc:
			prefix = "Ask Func[" + l.Name + "]:"
		case LineFuncSays:
			prefix = "Func[" + l.Name + "] says:"
		case LineAskAgent:
			prefix = "Ask Agent[" + l.Name + "]:"
		case LineAgentSays:
			prefix = "Agent[" + l.Name + "] says:"
		default:
			return l.Text
		}
	}
	if l.Text == "" {
		return prefix
	}
	return prefix + " " + l.Text
}
