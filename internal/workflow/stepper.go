package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/contrailhq/contrail/internal/expr"
)

// Env is what a decision depends on besides the task and the state.
type Env struct {
	// ExecutionID seeds the random helpers of expressions (with the scope and step), so that a replay draws
	// the same numbers.
	ExecutionID string
	// Now stamps the transitions decided, and is the clock expressions read (datetime.now(), time.time()),
	// so that a decision depends on the time it was made at, not on when it is computed. A sleep counts from
	// recorded times.
	Now time.Time
	// AgentTools are the agent's tools, used when the task inherits them.
	AgentTools []Tool
	// Limits bound an execution; zero fields take the defaults.
	Limits Limits
}

// Limits bound an execution.
type Limits struct {
	// MaxItems bounds the items of a foreach or map-reduce (Julep validates 1,000 for foreach).
	MaxItems int
	// MaxDepth bounds nested workflow calls (a call made by a workflow's last step replaces its caller and
	// does not count).
	MaxDepth int
	// MaxTransitionBytes bounds the JSON of one transition, so that it fits an event.
	MaxTransitionBytes int
	// Expr bounds each expression.
	Expr expr.Limits
}

// DefaultLimits are the limits of an execution.
func DefaultLimits() Limits {
	return Limits{MaxItems: 10_000, MaxDepth: 100, MaxTransitionBytes: 1 << 20}
}

func (e Env) limits() Limits {
	l, d := e.Limits, DefaultLimits()
	if l.MaxItems == 0 {
		l.MaxItems = d.MaxItems
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxTransitionBytes == 0 {
		l.MaxTransitionBytes = d.MaxTransitionBytes
	}
	return l
}

// Decision is what the engine must do next: record the transitions (in order), and perform the effects.
type Decision struct {
	Transitions []Transition
	// Effects are the side effects under way, each until Complete has been recorded for its key: Decide
	// returns them every time, so the engine starts the ones it has not started (by Key).
	Effects []Effect
}

// EffectKind is what an effect does.
type EffectKind string

// The effect kinds.
const (
	EffectModel EffectKind = "model_call"
	EffectTool  EffectKind = "tool_call"
	EffectTimer EffectKind = "timer"
)

// Effect is a side effect the engine performs and reports with Complete.
type Effect struct {
	// Key identifies the effect within the execution ("3/2": scope 3, step 2). Derive an idempotency key
	// for calls out from the execution's id and this key.
	Key  string     `json:"key"`
	Kind EffectKind `json:"kind"`
	// Path is the step's path in the task, for logs and errors.
	Path  string `json:"path"`
	Scope int    `json:"scope"`
	Step  int    `json:"step"`

	Model *ModelCall `json:"model,omitempty"`
	Tool  *ToolCall  `json:"tool,omitempty"`
	// Until is when a timer fires.
	Until time.Time `json:"until,omitzero"`
}

// ModelCall is a prompt step's call to the model.
type ModelCall struct {
	// Messages are the rendered messages ({role, content, ...}).
	Messages []any `json:"messages"`
	// Settings are the step's settings (model, temperature, response_format, ...), evaluated.
	Settings     map[string]any `json:"settings,omitempty"`
	Tools        []Tool         `json:"tools,omitempty"`
	ToolChoice   any            `json:"tool_choice,omitempty"`
	Unwrap       bool           `json:"unwrap,omitempty"`
	AutoRunTools bool           `json:"auto_run_tools,omitempty"`
	DisableCache bool           `json:"disable_cache,omitempty"`
}

// ToolCall is a tool step's call of a system, api_call or integration tool (function tools are answered by
// the client: the execution waits for them).
type ToolCall struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	Arguments map[string]any `json:"arguments"`
	Tool      Tool           `json:"tool"`
}

// Result is what an effect gave: an output, or an error message.
type Result struct {
	Output any    `json:"output,omitempty"`
	Error  string `json:"error,omitempty"`
}

// ErrStale is returned for a completion or resume that does not match the state (already recorded, or for
// a step the execution is not at): the engine drops it.
var ErrStale = errors.New("stale: the execution is not there")

// Start returns the init transition of an execution of t with input, after checking the input.
func Start(t *Task, input any, env Env) (Transition, error) {
	if err := t.ValidateInput(input); err != nil {
		return Transition{}, err
	}
	return Transition{
		Type: TypeInit, Output: input, Current: Target{Workflow: "main", Scope: 0},
		Next: &Target{Workflow: "main", Scope: 0}, At: env.Now,
	}, nil
}

// Decide returns what can happen now.
func Decide(ctx context.Context, t *Task, s *State, env Env) (Decision, error) {
	var d Decision
	if s.Status.Terminal() || s.Transitions == 0 {
		return d, nil
	}
	dc := &decider{ctx: ctx, t: t, s: s, env: env, lim: env.limits(), nextScope: s.NextScope}
	for _, scope := range s.scopes() {
		f := s.Frames[scope]
		trs, eff, err := dc.frame(f)
		if err != nil {
			return Decision{}, err
		}
		if len(trs) > 0 && trs[0].Type == TypeError {
			// The first failure ends the execution; nothing else decided now matters.
			return Decision{Transitions: dc.checked(trs[:1])}, nil
		}
		d.Transitions = append(d.Transitions, trs...)
		if eff != nil {
			d.Effects = append(d.Effects, *eff)
		}
	}
	d.Transitions = dc.checked(d.Transitions)
	return d, nil
}

// Complete turns the result of the effect with key into transitions.
func Complete(ctx context.Context, t *Task, s *State, key string, r Result, env Env) ([]Transition, error) {
	scope, step, err := parseKey(key)
	if err != nil {
		return nil, err
	}
	f := s.Frames[scope]
	if s.Status.Terminal() || f == nil || f.Step != step || f.Waiting != nil || f.Pending != nil {
		return nil, ErrStale
	}
	dc := &decider{ctx: ctx, t: t, s: s, env: env, lim: env.limits(), nextScope: s.NextScope}
	st, ok := dc.stepAt(f)
	if !ok {
		return nil, ErrStale
	}
	info := Info(st)
	if r.Error != "" {
		return dc.checked([]Transition{dc.fail(f, info.Path, r.Error)}), nil
	}
	out := r.Output
	switch st := st.(type) {
	case *PromptStep:
		if out, err = promptOutput(r.Output, st.Unwrap); err != nil {
			return dc.checked([]Transition{dc.fail(f, info.Path, err.Error())}), nil
		}
	case *SleepStep:
		out = f.Current // a sleep passes its input on
	case *ToolCallStep:
	default:
		return nil, fmt.Errorf("%w: %s is not a step with an effect", ErrStale, info.Path)
	}
	return dc.checked(dc.complete(f, TypeStep, out, nil)), nil
}

// Resume answers the oldest step waiting for input (a wait_for_input step, or a function tool's call).
func Resume(t *Task, s *State, input any, env Env) ([]Transition, error) {
	var f *Frame
	for _, scope := range s.scopes() {
		g := s.Frames[scope]
		if g.Waiting != nil && (f == nil || g.Waiting.Seq < f.Waiting.Seq) {
			f = g
		}
	}
	if f == nil {
		return nil, ErrStale
	}
	dc := &decider{t: t, s: s, env: env, lim: env.limits(), nextScope: s.NextScope}
	steps, _ := t.Steps(f.Body)
	tr := dc.transition(f, TypeResume, input)
	if f.Step+1 < len(steps) {
		tr.Next = &Target{Workflow: f.Name, Step: f.Step + 1, Scope: f.Scope}
	}
	return dc.checked([]Transition{tr}), nil
}

// Cancel returns the cancelled transition.
func Cancel(s *State, reason string, env Env) (Transition, error) {
	if s.Status.Terminal() {
		return Transition{}, ErrStale
	}
	cur := Target{Workflow: "main"}
	if sc := s.scopes(); len(sc) > 0 {
		f := s.Frames[sc[0]]
		cur = Target{Workflow: f.Name, Step: f.Step, Scope: f.Scope}
	}
	if reason == "" {
		reason = "cancelled"
	}
	return Transition{Type: TypeCancelled, Output: reason, Current: cur, At: env.Now}, nil
}

// decider decides for one state.
type decider struct {
	ctx       context.Context
	t         *Task
	s         *State
	env       Env
	lim       Limits
	nextScope int
}

func (dc *decider) stepAt(f *Frame) (Step, bool) {
	steps, ok := dc.t.Steps(f.Body)
	if !ok || f.Step >= len(steps) {
		return nil, false
	}
	return steps[f.Step], true
}

func (dc *decider) transition(f *Frame, typ TransitionType, out any) Transition {
	tr := Transition{Type: typ, Output: out, Current: Target{Workflow: f.Name, Step: f.Step, Scope: f.Scope}, At: dc.env.Now}
	if st, ok := dc.stepAt(f); ok {
		tr.StepLabel = Info(st).Label
		// Julep marks every transition with the type of its step.
		tr.Metadata = map[string]any{"step_type": stepTypeNames[st.Kind()]}
	}
	return tr
}

// stepTypeNames are the class names Julep puts in a transition's metadata.
var stepTypeNames = map[Kind]string{
	KindEvaluate: "EvaluateStep", KindPrompt: "PromptStep", KindToolCall: "ToolCallStep", KindIfElse: "IfElseWorkflowStep",
	KindSwitch: "SwitchStep", KindForeach: "ForeachStep", KindMapReduce: "MapReduceStep", KindParallel: "ParallelStep",
	KindSleep: "SleepStep", KindWaitForInput: "WaitForInputStep", KindReturn: "ReturnStep", KindYield: "YieldStep",
	KindLog: "LogStep", KindGet: "GetStep", KindSet: "SetStep", KindError: "ErrorWorkflowStep",
}

// fail is an error transition whose message names the step.
func (dc *decider) fail(f *Frame, path, msg string) Transition {
	tr := dc.transition(f, TypeError, fmt.Sprintf("%s: %s", path, msg))
	tr.StepLabel = ""
	return tr
}

func (dc *decider) failErr(f *Frame, path string, err error) Transition {
	if e, ok := err.(*expr.Error); ok && e.Path != "" {
		return dc.fail(f, path+"."+e.Path, strings.TrimPrefix(e.Error(), e.Path+": "))
	}
	return dc.fail(f, path, err.Error())
}

// complete records the running step's output: a step transition, or the frame's finish when it was its last.
func (dc *decider) complete(f *Frame, typ TransitionType, out any, meta map[string]any) []Transition {
	steps, _ := dc.t.Steps(f.Body)
	tr := dc.transition(f, typ, out)
	for k, v := range meta {
		tr.Metadata[k] = v
	}
	if f.Step+1 < len(steps) {
		tr.Next = &Target{Workflow: f.Name, Step: f.Step + 1, Scope: f.Scope}
		return []Transition{tr}
	}
	tr.Type = TypeFinishBranch
	if f.Parent == -1 {
		tr.Type = TypeFinish
	}
	return []Transition{tr}
}

// end finishes a frame before its last step (a return, or a branch that returned).
func (dc *decider) end(f *Frame, out any, returned bool) []Transition {
	tr := dc.transition(f, TypeFinishBranch, out)
	if f.Parent == -1 {
		tr.Type = TypeFinish
	}
	// A return propagates out of sequential branches up to the workflow it belongs to.
	tr.Returned = returned && !f.Workflow
	return []Transition{tr}
}

// checked replaces a transition too large for an event with an error.
func (dc *decider) checked(trs []Transition) []Transition {
	for i, tr := range trs {
		data, err := json.Marshal(tr)
		if err == nil && len(data) <= dc.lim.MaxTransitionBytes {
			continue
		}
		msg := fmt.Sprintf("%s %d of %s: the output cannot be recorded", tr.Type, tr.Current.Step, tr.Current.Workflow)
		if err != nil {
			msg += ": " + err.Error()
		} else {
			msg += fmt.Sprintf(": %d bytes, more than the %d a transition may hold", len(data), dc.lim.MaxTransitionBytes)
		}
		return append(trs[:i:i], Transition{Type: TypeError, Output: msg, Current: tr.Current, At: tr.At})
	}
	return trs
}

// env is what the expressions of frame f's running step see.
func (dc *decider) exprEnv(f *Frame, purpose string, vars map[string]any) *expr.Env {
	home := dc.s.Frames[f.Home]
	owner := dc.s.Frames[f.Owner]
	e := &expr.Env{Input: f.Current, Vars: vars, Seed: seed(dc.env.ExecutionID, f.Scope, f.Step, purpose),
		Now: dc.env.Now, Limits: dc.lim.Expr}
	if home != nil {
		e.Inputs = append([]any{home.Input}, home.Outputs...)
		e.Outputs = home.Outputs
		if wf := dc.t.Workflows[home.Body]; wf != nil {
			e.Labels = wf.Labels
		}
	}
	if owner != nil {
		e.State = owner.State
	}
	return e
}

func seed(execution string, scope, step int, purpose string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d/%d/%s", execution, scope, step, purpose)
	return h.Sum64()
}

// frame decides for one frame: transitions, or an effect, or nothing (waiting on input or on branches).
func (dc *decider) frame(f *Frame) ([]Transition, *Effect, error) {
	if f.Waiting != nil {
		return nil, nil, nil
	}
	steps, ok := dc.t.Steps(f.Body)
	if !ok {
		return nil, nil, fmt.Errorf("scope %d runs %q, which the task does not have", f.Scope, f.Body)
	}
	if f.Step >= len(steps) {
		// Every step is done (the last one was resumed): the frame ends with its last output.
		f2 := *f
		f2.Step = len(steps) - 1
		return dc.end(&f2, f.Current, false), nil, nil
	}
	st := steps[f.Step]
	if f.Pending != nil {
		return dc.pending(f, st), nil, nil
	}
	// Each kind of step decides in a method of its own (decide_*.go).
	d, ok := st.(stepDecider)
	if !ok {
		return nil, nil, fmt.Errorf("%s: unhandled step %T", Info(st).Path, st)
	}
	return d.decide(dc, f, Info(st).Path, steps)
}

// stepDecider is a step that decides the frame it is the current step of: the transitions to record, or the effect
// to ask for (a model call, a tool call, a timer). steps are the frame's steps.
type stepDecider interface {
	decide(dc *decider, f *Frame, path string, steps []Step) ([]Transition, *Effect, error)
}

func effectKey(f *Frame) string { return strconv.Itoa(f.Scope) + "/" + strconv.Itoa(f.Step) }

func parseKey(key string) (int, int, error) {
	a, b, ok := strings.Cut(key, "/")
	scope, err1 := strconv.Atoi(a)
	step, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("bad effect key %q", key)
	}
	return scope, step, nil
}

// items evaluates a foreach's in or a map-reduce's over.
func (dc *decider) items(f *Frame, x *expr.Expr, path string) ([]any, *Transition) {
	v, err := x.Eval(dc.exprEnv(f, "items", nil))
	if err != nil {
		tr := dc.failErr(f, path, err)
		return nil, &tr
	}
	items, ok := v.([]any)
	if !ok {
		tr := dc.fail(f, path, fmt.Sprintf("want a list to iterate over, got %s (in %q)", typeName(v), x.Source()))
		return nil, &tr
	}
	if len(items) > dc.lim.MaxItems {
		tr := dc.fail(f, path, fmt.Sprintf("%d items, more than the %d allowed", len(items), dc.lim.MaxItems))
		return nil, &tr
	}
	return items, nil
}

// startBranch is the init_branch of a branch of frame f's running step, running the steps at body (a task
// path), named name in transitions.
func (dc *decider) startBranch(f *Frame, kind BranchKind, index int, body, name string, input any, items []any) Transition {
	scope := dc.nextScope
	dc.nextScope++
	target := Target{Workflow: name, Scope: scope}
	next := target
	return Transition{
		Type: TypeInitBranch, Output: input, Current: target, Next: &next, At: dc.env.Now,
		Branch: &Branch{Parent: f.Scope, Step: f.Step, Kind: kind, Index: index, Body: body, Items: items},
	}
}

// pending decides for a frame whose step runs branches: start more, end with a return, or complete the step.
func (dc *decider) pending(f *Frame, st Step) []Transition {
	p := f.Pending
	path := Info(st).Path
	if p.Returned {
		return dc.end(f, p.ReturnValue, true)
	}
	switch st := st.(type) {
	case *ForeachStep:
		if p.Finished == p.Started && p.Started < p.Count {
			return []Transition{dc.startBranch(f, BranchForeach, p.Started, path+".foreach.do", fmt.Sprintf("%s.foreach[%d]", path, p.Started), p.Items[p.Started], nil)}
		}
	case *MapReduceStep:
		var trs []Transition
		for i := p.Started; i < p.Count && p.Started-p.Finished+len(trs) < st.Parallelism; i++ {
			trs = append(trs, dc.startBranch(f, BranchMap, i, path+".map", fmt.Sprintf("%s.map[%d]", path, i), p.Items[i], nil))
		}
		if len(trs) > 0 {
			return trs
		}
	}
	if p.Finished < p.Count {
		return nil
	}
	var out any
	switch st := st.(type) {
	case *ForeachStep, *ParallelStep:
		out = p.Results
	case *MapReduceStep:
		acc, err := st.Initial.Eval(dc.ctx, dc.exprEnv(f, "initial", nil))
		if err != nil {
			return []Transition{dc.failErr(f, path+".initial", err)}
		}
		// The results fold in the order of the items, whatever order the branches finished in.
		for i, r := range p.Results {
			if st.Reduce == nil {
				list, _ := acc.([]any)
				acc = append(append([]any(nil), list...), r)
				continue
			}
			env := dc.exprEnv(f, fmt.Sprintf("reduce%d", i), map[string]any{"results": acc, "_": r})
			if acc, err = st.Reduce.Eval(env); err != nil {
				return []Transition{dc.failErr(f, path+".reduce", err)}
			}
		}
		out = acc
	default:
		out = p.Results[0] // if, switch, workflow: the one branch's output
	}
	return dc.complete(f, TypeStep, out, nil)
}

// modelCall renders a prompt step.
func (dc *decider) modelCall(f *Frame, st *PromptStep) (*ModelCall, error) {
	env := dc.exprEnv(f, "prompt", nil)
	p, err := st.Prompt.Eval(dc.ctx, env)
	if err != nil {
		return nil, err
	}
	var messages []any
	switch x := p.(type) {
	case []any:
		messages = x
	case string:
		messages = []any{map[string]any{"role": "user", "content": x}}
	default:
		return nil, fmt.Errorf("a prompt is text or a list of messages, the expression gave %s", typeName(p))
	}
	call := &ModelCall{Messages: messages, ToolChoice: st.ToolChoice, Unwrap: st.Unwrap, AutoRunTools: st.AutoRunTools, DisableCache: st.DisableCache}
	if st.Settings != nil {
		s, err := st.Settings.Eval(dc.ctx, env)
		if err != nil {
			return nil, err
		}
		call.Settings, _ = s.(map[string]any)
	}
	call.Tools = st.Tools
	if call.Tools == nil {
		call.Tools = dc.tools()
	}
	return call, nil
}

// tools are the task's tools, after the agent's when the task inherits them (a task's tool replaces the
// agent's of the same name).
func (dc *decider) tools() []Tool {
	if !dc.t.InheritTools {
		return dc.t.Tools
	}
	own := map[string]bool{}
	for _, tl := range dc.t.Tools {
		own[tl.Name] = true
	}
	var out []Tool
	for _, tl := range dc.env.AgentTools {
		if !own[tl.Name] {
			out = append(out, tl)
		}
	}
	return append(out, dc.t.Tools...)
}

func (dc *decider) toolCall(f *Frame, st *ToolCallStep) ([]Transition, *Effect, error) {
	path := Info(st).Path
	var tool *Tool
	for _, tl := range dc.tools() {
		if tl.Name == st.Tool {
			tool = &tl
			break
		}
	}
	if tool == nil {
		return []Transition{dc.fail(f, path+".tool", fmt.Sprintf("no tool named %q among the task's tools", st.Tool))}, nil, nil
	}
	v, err := st.Arguments.Eval(dc.ctx, dc.exprEnv(f, "arguments", nil))
	if err != nil {
		return []Transition{dc.failErr(f, path+".arguments", err)}, nil, nil
	}
	args, ok := v.(map[string]any)
	if !ok {
		return []Transition{dc.fail(f, path+".arguments", fmt.Sprintf("a tool's arguments are an object, got %s", typeName(v)))}, nil, nil
	}
	id := fmt.Sprintf("call_%016x", seed(dc.env.ExecutionID, f.Scope, f.Step, "tool"))
	if tool.Type == "function" {
		// The client runs function tools: the execution waits for the result (Julep's raise_complete_async).
		call := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": tool.Name, "arguments": args}}
		return []Transition{dc.transition(f, TypeWait, call)}, nil, nil
	}
	return nil, &Effect{Key: effectKey(f), Kind: EffectTool, Path: path, Scope: f.Scope, Step: f.Step,
		Tool: &ToolCall{ID: id, Name: tool.Name, Type: tool.Type, Arguments: args, Tool: *tool}}, nil
}

// promptOutput is a prompt step's output from the model's response: the response, or its first choice's
// content when the step unwraps. Each choice also gets its message's content as `content`, the shape seed
// 004's example reads (_["choices"][0].content).
func promptOutput(resp any, unwrap bool) (any, error) {
	m, ok := resp.(map[string]any)
	if !ok {
		if unwrap {
			if s, ok := resp.(string); ok {
				return s, nil
			}
		}
		return resp, nil
	}
	choices, _ := m["choices"].([]any)
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	withContent := make([]any, len(choices))
	for i, c := range choices {
		cm, ok := c.(map[string]any)
		if !ok {
			withContent[i] = c
			continue
		}
		cc := make(map[string]any, len(cm)+1)
		for k, v := range cm {
			cc[k] = v
		}
		if msg, ok := cm["message"].(map[string]any); ok {
			if _, has := cc["content"]; !has {
				cc["content"] = msg["content"]
			}
		}
		withContent[i] = cc
	}
	if choices != nil {
		out["choices"] = withContent
	}
	if !unwrap {
		return out, nil
	}
	if len(choices) == 0 {
		return nil, errors.New("unwrap: the model's response has no choices")
	}
	first, _ := withContent[0].(map[string]any)
	if msg, ok := first["message"].(map[string]any); ok {
		if tc, ok := msg["tool_calls"].([]any); ok && len(tc) > 0 {
			return nil, errors.New("unwrap: the model called tools, which a step that unwraps cannot return")
		}
	}
	content, ok := first["content"].(string)
	if !ok {
		return nil, errors.New("unwrap: the model's first choice has no text content")
	}
	return content, nil
}
