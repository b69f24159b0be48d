// Package loop runs one query of a Code Shot agent: the model continues the transcript a line at a time; an
// "Ask Func[f]: args" line calls the agent's func, an "Ask Agent[a]: q" line asks another agent, and their answers go
// back into the transcript as "Func[f] says: ..." / "Agent[a] says: ..."; an "A: ..." line ends the query.
//
// Every step is recorded in a Journal before the next one starts, and a query resumes from the steps already
// recorded: after a crash the model is not asked again for a line it gave, and a func whose result was recorded is
// not called again. A func call that was asked for but whose result was not recorded is made again with the same
// idempotency key, so an agent that honours the key (agentkit does) runs it once.
//
// It imports llm and codeshot, and nothing of the log or the faces: the caller records the steps where it wants.
package loop

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
)

// Kind is what a step of a query was.
type Kind string

// The kinds of steps.
const (
	KindThought   Kind = "thought"    // a free line of the model's ("Thought: ...")
	KindAskFunc   Kind = "ask_func"   // the model asked for a func call: Name, Text = the input
	KindFuncSays  Kind = "func_says"  // the func's answer: Name, Text
	KindAskAgent  Kind = "ask_agent"  // the model asked another agent: Name, Text = the query
	KindAgentSays Kind = "agent_says" // the other agent's answer
	KindAnswer    Kind = "answer"     // the final answer: Text
	KindFailed    Kind = "failed"     // the query failed: Text says why, for the user
)

// Step is one recorded step.
type Step struct {
	// Index numbers the steps of a query from 0; a journal keeps the first step recorded at an index.
	Index int    `json:"index"`
	Kind  Kind   `json:"kind"`
	Name  string `json:"name,omitempty"`
	Text  string `json:"text"`
	// Call is the model call (from 0) that produced a thought, ask or answer step.
	Call int `json:"call,omitempty"`
}

// Line is the step as a transcript line.
func (s Step) Line() string {
	switch s.Kind {
	case KindAskFunc:
		return "Ask Func[" + s.Name + "]: " + s.Text
	case KindFuncSays:
		return "Func[" + s.Name + "] says: " + oneLine(s.Text)
	case KindAskAgent:
		return "Ask Agent[" + s.Name + "]: " + s.Text
	case KindAgentSays:
		return "Agent[" + s.Name + "] says: " + oneLine(s.Text)
	case KindAnswer:
		return "A: " + s.Text
	default:
		return s.Text
	}
}

// oneLine keeps a func's or agent's answer on one transcript line: a newline in it would read as a new line of the
// transcript.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// Journal keeps a query's steps.
type Journal interface {
	// Record stores a step durably before the query goes on. Recording an index that is already recorded must keep
	// the first one (a redelivered query records its steps again).
	Record(ctx context.Context, s Step) error
}

// Funcs calls an agent's funcs.
type Funcs interface {
	// Call runs func fn with input args. key identifies this call of this query: the same key on a repeated call
	// lets the agent answer without running the func again.
	Call(ctx context.Context, fn, args, key string) (string, error)
}

// Agents asks other agents (Ask Agent[a]).
type Agents interface {
	Ask(ctx context.Context, handle, query string) (string, error)
}

// Spec is the Code Shot agent being run.
type Spec struct {
	Handle     string
	BasePrompt string
	Examples   []string
	// Model is the model string ("provider/name" or bare); "" = the router's default.
	Model string
}

// Query is one query and what came before it.
type Query struct {
	// Text is the user's query.
	Text string
	// History are earlier finished exchanges of the session, "Q: ...\nA: ...", oldest first.
	History []string
	// Done are the steps an earlier attempt of this same query recorded (resume after a crash).
	Done []Step
	// Key identifies the query; func calls are keyed by it and the step index.
	Key string
	// Stream receives the answer's text as the model writes it (may be nil).
	Stream func(delta string)
}

// Runner runs queries.
type Runner struct {
	Model  llm.Provider
	Funcs  Funcs
	Agents Agents
	// MaxCalls bounds the model calls of one query (default 10): a looping agent ends with a clear message.
	MaxCalls int
	// MaxTokens bounds each model call (Fixie's default: 1000).
	MaxTokens int
}

// ErrFailed marks a query that ended in a KindFailed step; the error's message is the step's text.
var ErrFailed = errors.New("code shot query failed")

// FailedError is a query's failure as the user should read it, and what caused it when that is known in this run
// (a resumed query knows only the text it recorded).
type FailedError struct {
	Text string
	Err  error
}

func (e *FailedError) Error() string { return e.Text }

// Unwrap gives ErrFailed and the cause, so that a caller can tell a model server that is down (errs.Unavailable)
// from an agent that failed.
func (e *FailedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrFailed}
	}
	return []error{ErrFailed, e.Err}
}

// Run answers the query, recording each step in j. It returns the answer text and every step of the query.
func (r *Runner) Run(ctx context.Context, spec Spec, q Query, j Journal) (string, []Step, error) {
	maxCalls := r.MaxCalls
	if maxCalls <= 0 {
		maxCalls = 10
	}
	steps := append([]Step(nil), q.Done...)
	record := func(s Step) error {
		s.Index = len(steps)
		if err := j.Record(ctx, s); err != nil {
			return fmt.Errorf("record step %d of %s: %w", s.Index, spec.Handle, err)
		}
		steps = append(steps, s)
		return nil
	}
	failWith := func(cause error, format string, args ...any) (string, []Step, error) {
		text := fmt.Sprintf(format, args...)
		if err := record(Step{Kind: KindFailed, Text: text}); err != nil {
			return "", steps, err
		}
		return "", steps, &FailedError{Text: text, Err: cause}
	}
	fail := func(format string, args ...any) (string, []Step, error) { return failWith(nil, format, args...) }
	for {
		if ctx.Err() != nil {
			return "", steps, ctx.Err()
		}
		var last Step
		if len(steps) > 0 {
			last = steps[len(steps)-1]
		}
		switch last.Kind {
		case KindAnswer:
			return last.Text, steps, nil
		case KindFailed:
			return "", steps, &FailedError{Text: last.Text}
		case KindAskFunc:
			if r.Funcs == nil {
				return fail("agent %s asked for func %s, but no func can be called here", spec.Handle, last.Name)
			}
			out, err := r.Funcs.Call(ctx, last.Name, last.Text, q.Key+"/"+strconv.Itoa(last.Index))
			if err != nil {
				if ctx.Err() != nil {
					return "", steps, ctx.Err()
				}
				return fail("agent %s: func %s failed: %v", spec.Handle, last.Name, err)
			}
			if err := record(Step{Kind: KindFuncSays, Name: last.Name, Text: out}); err != nil {
				return "", steps, err
			}
			continue
		case KindAskAgent:
			if r.Agents == nil {
				return fail("agent %s asked agent %s, but no agent can be asked here", spec.Handle, last.Name)
			}
			out, err := r.Agents.Ask(ctx, last.Name, last.Text)
			if err != nil {
				if ctx.Err() != nil {
					return "", steps, ctx.Err()
				}
				return fail("agent %s: asking agent %s failed: %v", spec.Handle, last.Name, err)
			}
			if err := record(Step{Kind: KindAgentSays, Name: last.Name, Text: out}); err != nil {
				return "", steps, err
			}
			continue
		}
		call := modelCalls(steps)
		if call >= maxCalls {
			return fail("agent %s gave no answer within %d steps; it may be looping (its last line: %q)", spec.Handle, maxCalls, last.Line())
		}
		lines, err := r.next(ctx, spec, q, steps)
		if err != nil {
			if ctx.Err() != nil {
				return "", steps, ctx.Err()
			}
			return failWith(err, "agent %s: the model failed: %s", spec.Handle, readable(err))
		}
		produced := false
		for i := 0; i < len(lines); i++ {
			st, stop := stepOf(lines[i])
			if st.Kind == "" {
				break // the model started writing a reply or a new question itself: ignore the rest
			}
			if st.Kind == KindAnswer {
				// An answer runs on over the free lines that follow it.
				for i+1 < len(lines) {
					if next, _ := stepOf(lines[i+1]); next.Kind != KindThought {
						break
					}
					i++
					st.Text += "\n" + lines[i]
				}
			}
			st.Call = call
			if err := record(st); err != nil {
				return "", steps, err
			}
			produced = true
			if stop {
				break
			}
		}
		if !produced {
			return fail("agent %s: the model gave no usable line (it wrote %q)", spec.Handle, strings.Join(lines, " / "))
		}
	}
}

// readable is what a failure says to a user: the message of a coded error (without the cause behind it, which is
// for logs), or the error itself.
func readable(err error) string {
	if errs.As(err) != nil {
		return errs.MessageOf(err)
	}
	return err.Error()
}

// stepOf turns one line of model output into a step, and says whether the model's turn ends with it. A line the
// model must not write (a func's reply, a new question) gives a zero step.
func stepOf(line string) (Step, bool) {
	l := codeshot.ParseLine(line)
	switch l.Kind {
	case codeshot.AskFunc:
		return Step{Kind: KindAskFunc, Name: l.Name, Text: l.Text}, true
	case codeshot.AskAgent:
		return Step{Kind: KindAskAgent, Name: l.Name, Text: l.Text}, true
	case codeshot.Answer:
		return Step{Kind: KindAnswer, Text: l.Text}, true
	case codeshot.Text:
		return Step{Kind: KindThought, Text: l.Raw}, false
	default: // Query, FuncSays, AgentSays
		return Step{}, true
	}
}

// modelCalls counts the model calls a query made so far.
func modelCalls(steps []Step) int {
	n := 0
	for _, s := range steps {
		switch s.Kind {
		case KindThought, KindAskFunc, KindAskAgent, KindAnswer:
			n = max(n, s.Call+1)
		}
	}
	return n
}

// next asks the model for the next line(s) of the transcript.
func (r *Runner) next(ctx context.Context, spec Spec, q Query, steps []Step) ([]string, error) {
	transcript := []string{"Q: " + oneLine(q.Text)}
	for _, s := range steps {
		transcript = append(transcript, s.Line())
	}
	prompt := llm.CodeShotPrompt{BasePrompt: spec.BasePrompt, Examples: spec.Examples, History: q.History, Transcript: transcript}
	maxTokens := r.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 1000
	}
	zero := 0.0
	req := llm.Request{Model: spec.Model, Messages: prompt.Messages(), Stop: llm.CodeShotStop(), Temperature: &zero, MaxTokens: maxTokens}
	var onDelta func(llm.Delta)
	if q.Stream != nil {
		onDelta = answerStreamer(q.Stream)
	}
	resp, err := r.Model.Complete(ctx, req, onDelta)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, l := range strings.Split(resp.Text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, nil
}

// answerStreamer passes on the text of an "A:" line while the model writes it; other lines (thoughts, asks) are not
// the answer and stay unseen until they are steps.
func answerStreamer(stream func(string)) func(llm.Delta) {
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
