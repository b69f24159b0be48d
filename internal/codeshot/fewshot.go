package codeshot

import (
	"slices"
	"strings"
)

// Split splits one string holding several few-shots the way Fixie's SDK did: every line is stripped of surrounding
// whitespace, the text is split wherever a blank line is followed by a "Q:" line, and each example is stripped.
// An empty or blank string gives one empty example, which Validate reports.
func Split(fewShots string) []string {
	text := stripLines(fewShots)
	parts := strings.Split(text, "\n\nQ:")
	for i := range parts {
		if i > 0 {
			parts[i] = "Q:" + parts[i]
		}
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// Normalize strips a few-shot example, or a base prompt, the way Fixie's SDK did before sending it: surrounding
// whitespace goes, and so does the whitespace around every line. Use it on a list of few-shots (Split already
// normalises what it returns). Normalised text always passes the whitespace and newline rules of Validate.
func Normalize(text string) string {
	return stripLines(strings.TrimSpace(text))
}

// stripLines strips every line of text. "\r\n" and a lone "\r" end a line too, as Python's splitlines had it.
func stripLines(text string) string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, "\n")
}

// Example is one parsed few-shot example.
type Example struct {
	// Text is the example as it was given.
	Text string
	// Lines are its lines, classified. Line i of the example (1-based) is Lines[i-1].
	Lines []Line
}

// Parse classifies every line of every example. It never fails: any line that is not one of Fixie's patterns is
// free text. Call Validate to learn whether the examples are well formed.
func Parse(examples []string) []Example {
	out := make([]Example, len(examples))
	for i, text := range examples {
		raw := strings.Split(text, "\n")
		lines := make([]Line, len(raw))
		for j, r := range raw {
			lines[j] = classify(r)
		}
		out[i] = Example{Text: text, Lines: lines}
	}
	return out
}

// Queries returns the text of the example's "Q:" lines: its sample queries. A conversational example may hold
// several.
func (e Example) Queries() []string {
	var qs []string
	for _, l := range e.Lines {
		if l.Kind == Query && l.Text != "" {
			qs = append(qs, l.Text)
		}
	}
	return qs
}

// Funcs returns the funcs the example calls ("Ask Func[f]" or "Func[f] says"), each once, in order of first use.
func (e Example) Funcs() []string { return e.names(AskFunc, FuncSays) }

// Agents returns the agents the example asks ("Ask Agent[a]" or "Agent[a] says"), each once, in order of first use.
func (e Example) Agents() []string { return e.names(AskAgent, AgentSays) }

func (e Example) names(kinds ...Kind) []string {
	var names []string
	for _, l := range e.Lines {
		for _, k := range kinds {
			if l.Kind == k && !slices.Contains(names, l.Name) {
				names = append(names, l.Name)
			}
		}
	}
	return names
}

// SampleQueries returns the sample queries of all examples, each once, in order. The router embeds them to decide
// which agent a query belongs to; the registry shows them as the agent's "queries".
func SampleQueries(examples []Example) []string {
	var qs []string
	for _, e := range examples {
		for _, q := range e.Queries() {
			if !slices.Contains(qs, q) {
				qs = append(qs, q)
			}
		}
	}
	return qs
}

// FuncsUsed returns the funcs any example calls, each once, in order of first use.
func FuncsUsed(examples []Example) []string {
	var names []string
	for _, e := range examples {
		for _, f := range e.Funcs() {
			if !slices.Contains(names, f) {
				names = append(names, f)
			}
		}
	}
	return names
}

// AgentsUsed returns the agents any example asks, each once, in order of first use.
func AgentsUsed(examples []Example) []string {
	var names []string
	for _, e := range examples {
		for _, a := range e.Agents() {
			if !slices.Contains(names, a) {
				names = append(names, a)
			}
		}
	}
	return names
}
