// Package loop is the step machine of a Code Shot agent's query: the model continues the transcript a line at a
// time; an "Ask Func[f]: args" line calls the agent's func, an "Ask Agent[a]: q" line asks another agent, and their
// answers go back into the transcript as "Func[f] says: ..." / "Agent[a] says: ..."; an "A: ..." line ends the query.
//
// It is pure: from the steps a query recorded so far, Next says what the query needs next (a model call, a func
// call, another agent's answer, or a failure); Request builds the model call and Steps reads the model's answer
// back as steps. The Code Shot executor (handlers/codeshot) does what Next says and records the result as the
// query's next step, one event each — so a query resumes after a crash from its last recorded step: the model is
// not asked again for a line it gave, and a func whose result was recorded is not called again. A func call that
// was asked for but whose result was not recorded is made again with the same idempotency key (Key), so an agent
// that honours the key (agentkit does) runs it once.
//
// It imports llm, codeshot, events and domain/session (for the step vocabulary); nothing of the log's I/O or the
// faces.
package loop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/llm"
)

// Spec is the Code Shot agent being run.
type Spec struct {
	Handle     string
	BasePrompt string
	Examples   []string
	// Model is the model string ("provider/name" or bare); "" = the router's default.
	Model string
}

// ActionKind is what a query needs next.
type ActionKind int

// The actions.
const (
	// Model: ask the model for the next line(s) of the transcript (model call number Call).
	Model ActionKind = iota
	// CallFunc: call func Name with input Text; its answer is the step after the ask at Index.
	CallFunc
	// AskAgent: ask agent Name the query Text (the ask is the step at Index).
	AskAgent
	// Fail: record a failure step whose text (Text) the user reads.
	Fail
	// Wait: the query is answered, failed, or waits for another agent's answer: nothing to do.
	Wait
)

// Action is what Next says a query needs.
type Action struct {
	Kind  ActionKind
	Name  string
	Text  string
	Index int
	Call  int
}

// DefaultMaxCalls bounds the model calls of one query: a looping agent ends with a clear message.
const DefaultMaxCalls = 10

// Next says what a query of agent `handle` needs after the steps it recorded.
func Next(handle string, steps []events.SessionAgentStep, maxCalls int) Action {
	if maxCalls <= 0 {
		maxCalls = DefaultMaxCalls
	}
	var last events.SessionAgentStep
	if len(steps) > 0 {
		last = steps[len(steps)-1]
	}
	switch last.Kind {
	case session.StepAnswer, session.StepFailed:
		return Action{Kind: Wait}
	case session.StepAskFunc:
		return Action{Kind: CallFunc, Name: last.Name, Text: last.Text, Index: last.Index}
	case session.StepAskAgent:
		return Action{Kind: AskAgent, Name: last.Name, Text: last.Text, Index: last.Index}
	}
	call := modelCalls(steps)
	if call >= maxCalls {
		return Action{Kind: Fail, Text: fmt.Sprintf("agent %s gave no answer within %d steps; it may be looping (its last line: %q)",
			handle, maxCalls, session.StepLine(last))}
	}
	return Action{Kind: Model, Call: call}
}

// modelCalls counts the model calls a query made so far.
func modelCalls(steps []events.SessionAgentStep) int {
	n := 0
	for _, s := range steps {
		switch s.Kind {
		case session.StepThought, session.StepAskFunc, session.StepAskAgent, session.StepAnswer:
			n = max(n, s.Call+1)
		}
	}
	return n
}

// Key is the idempotency key of the func call a query's step `index` asked for: the same call, made again after a
// crash, carries the same key.
func Key(replyID, path string, index int) string {
	return replyID + "/" + path + "/" + strconv.Itoa(index)
}

// DefaultMaxTokens bounds each model call (Fixie's default).
const DefaultMaxTokens = 1000

// Request is the model call for the next line(s) of a query's transcript: the agent's base prompt and few-shots,
// the session's finished exchanges (history, for conversational agents), and the transcript so far.
func Request(spec Spec, query string, history []string, steps []events.SessionAgentStep) llm.Request {
	transcript := make([]string, 0, len(steps)+1)
	transcript = append(transcript, "Q: "+session.OneLine(query))
	for _, s := range steps {
		transcript = append(transcript, session.StepLine(s))
	}
	prompt := llm.CodeShotPrompt{BasePrompt: spec.BasePrompt, Examples: spec.Examples, History: history, Transcript: transcript}
	zero := 0.0
	return llm.Request{Model: spec.Model, Messages: prompt.Messages(), Stop: llm.CodeShotStop(), Temperature: &zero,
		MaxTokens: DefaultMaxTokens}
}

// Steps reads the model's answer to call number `call` as the steps it gave: free lines (thoughts) up to the first
// ask or answer, which ends the model's turn. An answer runs on over the free lines that follow it. A line the model
// must not write (a func's reply, a new question) ends what is read. No usable line at all is a failure step.
func Steps(handle, output string, call int) []events.SessionAgentStep {
	var lines []string
	for _, l := range strings.Split(output, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	var out []events.SessionAgentStep
	for i := 0; i < len(lines); i++ {
		st, stop := stepOf(lines[i])
		if st.Kind == "" {
			break // the model started writing a reply or a new question itself: ignore the rest
		}
		if st.Kind == session.StepAnswer {
			for i+1 < len(lines) {
				if next, _ := stepOf(lines[i+1]); next.Kind != session.StepThought {
					break
				}
				i++
				st.Text += "\n" + lines[i]
			}
		}
		st.Call = call
		out = append(out, st)
		if stop {
			break
		}
	}
	if len(out) == 0 {
		return []events.SessionAgentStep{{Kind: session.StepFailed,
			Text: fmt.Sprintf("agent %s: the model gave no usable line (it wrote %q)", handle, strings.Join(lines, " / "))}}
	}
	return out
}

// stepOf turns one line of model output into a step, and says whether the model's turn ends with it. A line the
// model must not write (a func's reply, a new question) gives a zero step.
func stepOf(line string) (events.SessionAgentStep, bool) {
	l := codeshot.ParseLine(line)
	switch l.Kind {
	case codeshot.AskFunc:
		return events.SessionAgentStep{Kind: session.StepAskFunc, Name: l.Name, Text: l.Text}, true
	case codeshot.AskAgent:
		return events.SessionAgentStep{Kind: session.StepAskAgent, Name: l.Name, Text: l.Text}, true
	case codeshot.Answer:
		return events.SessionAgentStep{Kind: session.StepAnswer, Text: l.Text}, true
	case codeshot.Text:
		return events.SessionAgentStep{Kind: session.StepThought, Text: l.Raw}, false
	default: // Query, FuncSays, AgentSays
		return events.SessionAgentStep{}, true
	}
}

// AnswerStreamer passes on the text of an "A:" line while the model writes it; other lines (thoughts, asks) are not
// the answer and stay unseen until they are steps.
func AnswerStreamer(stream func(string)) func(llm.Delta) {
	var line strings.Builder // the current line, while it is not known whether it is the answer
	answering := false
	return func(d llm.Delta) {
		var out strings.Builder
		for _, r := range d.Text {
			switch {
			case answering:
				out.WriteRune(r)
			case r == '\n':
				line.Reset()
			default:
				line.WriteRune(r)
				if rest, ok := strings.CutPrefix(strings.TrimLeft(line.String(), " "), "A: "); ok {
					answering = true
					out.WriteString(rest)
				}
			}
		}
		if out.Len() > 0 {
			stream(out.String())
		}
	}
}

// Funcs calls an agent's funcs (in memory: see Run).
type Funcs interface {
	Call(ctx context.Context, fn, args, key string) (string, error)
}

// Run answers a query in memory: it does what Next says until the query is answered, with no journal and no other
// agents (an "Ask Agent" ends it with a failure). The platform's executor records each step instead and resumes from
// them (handlers/queries); Run is for tests and tools that want the step machine alone. It returns the answer and
// the steps; a query that ends in a failure step returns its text as the error.
func Run(ctx context.Context, model llm.Provider, funcs Funcs, spec Spec, query string, maxCalls int) (string, []events.SessionAgentStep, error) {
	var steps []events.SessionAgentStep
	add := func(s ...events.SessionAgentStep) {
		for _, st := range s {
			st.Index = len(steps)
			steps = append(steps, st)
		}
	}
	for {
		act := Next(spec.Handle, steps, maxCalls)
		switch act.Kind {
		case Wait:
			last := steps[len(steps)-1]
			if last.Kind == session.StepFailed {
				return "", steps, errors.New(last.Text)
			}
			return last.Text, steps, nil
		case Fail:
			add(events.SessionAgentStep{Kind: session.StepFailed, Text: act.Text})
		case Model:
			resp, err := model.Complete(ctx, Request(spec, query, nil, steps), nil)
			if err != nil {
				return "", steps, fmt.Errorf("agent %s: the model failed: %w", spec.Handle, err)
			}
			add(Steps(spec.Handle, resp.Text, act.Call)...)
		case CallFunc:
			if funcs == nil {
				add(events.SessionAgentStep{Kind: session.StepFailed, Text: fmt.Sprintf("agent %s asked for func %s, but no func can be called here", spec.Handle, act.Name)})
				continue
			}
			out, err := funcs.Call(ctx, act.Name, act.Text, Key("mem", spec.Handle, act.Index))
			if err != nil {
				add(events.SessionAgentStep{Kind: session.StepFailed, Text: fmt.Sprintf("agent %s: func %s failed: %v", spec.Handle, act.Name, err)})
				continue
			}
			add(events.SessionAgentStep{Kind: session.StepFuncSays, Name: act.Name, Text: out})
		case AskAgent:
			add(events.SessionAgentStep{Kind: session.StepFailed, Text: fmt.Sprintf("agent %s asked agent %s, but no agent can be asked here", spec.Handle, act.Name)})
		}
	}
}
