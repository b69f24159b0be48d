package workflow

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/contrailhq/contrail/internal/expr"
)

// Kind is a step's type, by Julep's kind_ names.
type Kind string

// The step kinds.
const (
	KindEvaluate     Kind = "evaluate"
	KindPrompt       Kind = "prompt"
	KindToolCall     Kind = "tool_call"
	KindIfElse       Kind = "if_else"
	KindSwitch       Kind = "switch"
	KindForeach      Kind = "foreach"
	KindMapReduce    Kind = "map_reduce"
	KindParallel     Kind = "parallel"
	KindSleep        Kind = "sleep"
	KindWaitForInput Kind = "wait_for_input"
	KindReturn       Kind = "return"
	KindYield        Kind = "yield"
	KindLog          Kind = "log"
	KindGet          Kind = "get"
	KindSet          Kind = "set"
	KindError        Kind = "error"
)

// Step is one step of a workflow; its concrete type is one of the *Step structs below.
type Step interface {
	Kind() Kind
	base() *StepBase
}

// StepBase holds what every step has.
type StepBase struct {
	// Label names the step for steps["label"].
	Label string
	// Path locates the step in the task ("main[3]", "main[3].foreach.do").
	Path string
}

func (b *StepBase) base() *StepBase { return b }

// Info returns the step's label and path.
func Info(s Step) StepBase { return *s.base() }

// EvaluateStep computes a map of values.
type EvaluateStep struct {
	StepBase
	Evaluate *expr.Value
}

// PromptStep calls the model.
type PromptStep struct {
	StepBase
	// Prompt is a string (one user message) or a list of messages; strings in it are templates or expressions.
	Prompt   *expr.Value
	Settings *expr.Value // nil when absent
	// Tools is nil for "all" (the task's tools, and the agent's when the task inherits them), else the tools given.
	Tools        []Tool
	ToolChoice   any
	Unwrap       bool
	AutoRunTools bool
	DisableCache bool
}

// ToolCallStep calls a tool.
type ToolCallStep struct {
	StepBase
	Tool      string
	Arguments *expr.Value
}

// IfElseStep runs Then or Else.
type IfElseStep struct {
	StepBase
	If   *expr.Expr
	Then []Step
	Else []Step // nil when absent: the step passes its input on
}

// Case is one case of a switch.
type Case struct {
	Case *expr.Expr // nil for the default case ("_")
	Then []Step
}

// SwitchStep runs the first case whose condition holds.
type SwitchStep struct {
	StepBase
	Cases []Case
}

// ForeachStep runs Do for each item, one after the other.
type ForeachStep struct {
	StepBase
	In *expr.Expr
	Do []Step
}

// MapReduceStep runs Map for each item, Parallelism at a time (1 when not given, as in Julep), and folds the results
// with Reduce.
type MapReduceStep struct {
	StepBase
	Over        *expr.Expr
	Map         []Step
	Reduce      *expr.Expr // nil: collect the results in a list
	Initial     *expr.Value
	Parallelism int
}

// ParallelStep runs its branches at the same time; its output lists their outputs.
type ParallelStep struct {
	StepBase
	Branches [][]Step
}

// SleepStep waits.
type SleepStep struct {
	StepBase
	// Duration is the time to sleep when it is known at parse time.
	Duration time.Duration
	// Seconds computes it otherwise.
	Seconds *expr.Value
}

// WaitForInputStep suspends the execution until a client resumes it with an input.
type WaitForInputStep struct {
	StepBase
	Info *expr.Value
}

// ReturnStep ends the workflow with a value.
type ReturnStep struct {
	StepBase
	Value *expr.Value
}

// YieldStep runs a named workflow with arguments; its output is what that workflow returns.
type YieldStep struct {
	StepBase
	Workflow  string
	Arguments *expr.Value
}

// LogStep records a message; its output is its input.
type LogStep struct {
	StepBase
	Log *expr.Value
}

// GetStep reads the workflow's state.
type GetStep struct {
	StepBase
	Keys []string
	// List is set when the step named a list of keys: its output is then a map.
	List bool
}

// SetStep writes the workflow's state; its output is the map it set.
type SetStep struct {
	StepBase
	Set *expr.Value
}

// ErrorStep fails the execution with a message.
type ErrorStep struct {
	StepBase
	Error *expr.Value
}

func (*EvaluateStep) Kind() Kind     { return KindEvaluate }
func (*PromptStep) Kind() Kind       { return KindPrompt }
func (*ToolCallStep) Kind() Kind     { return KindToolCall }
func (*IfElseStep) Kind() Kind       { return KindIfElse }
func (*SwitchStep) Kind() Kind       { return KindSwitch }
func (*ForeachStep) Kind() Kind      { return KindForeach }
func (*MapReduceStep) Kind() Kind    { return KindMapReduce }
func (*ParallelStep) Kind() Kind     { return KindParallel }
func (*SleepStep) Kind() Kind        { return KindSleep }
func (*WaitForInputStep) Kind() Kind { return KindWaitForInput }
func (*ReturnStep) Kind() Kind       { return KindReturn }
func (*YieldStep) Kind() Kind        { return KindYield }
func (*LogStep) Kind() Kind          { return KindLog }
func (*GetStep) Kind() Kind          { return KindGet }
func (*SetStep) Kind() Kind          { return KindSet }
func (*ErrorStep) Kind() Kind        { return KindError }

// MaxSleep is the longest sleep (Julep's).
const MaxSleep = 31 * 24 * time.Hour

// MaxParallelism bounds a map-reduce's parallelism and a parallel step's branches (Julep's).
const MaxParallelism = 100

// stepKeys are the keys that say which kind a step is, with the other keys each kind accepts.
var stepKeys = []struct {
	key   string
	kind  Kind
	extra []string
}{
	{"evaluate", KindEvaluate, nil},
	{"prompt", KindPrompt, []string{"settings", "tools", "tool_choice", "unwrap", "auto_run_tools", "disable_cache"}},
	{"tool", KindToolCall, []string{"arguments"}},
	{"if", KindIfElse, []string{"then", "else"}},
	{"switch", KindSwitch, nil},
	{"foreach", KindForeach, nil},
	{"over", KindMapReduce, []string{"map", "reduce", "initial", "parallelism"}},
	{"parallel", KindParallel, nil},
	{"sleep", KindSleep, nil},
	{"wait_for_input", KindWaitForInput, nil},
	{"return", KindReturn, nil},
	{"workflow", KindYield, []string{"arguments"}},
	{"yield", KindYield, nil},
	{"log", KindLog, nil},
	{"get", KindGet, nil},
	{"set", KindSet, nil},
	{"error", KindError, nil},
}

func knownStepKeys() string {
	var keys []string
	for _, k := range stepKeys {
		keys = append(keys, k.key)
	}
	return strings.Join(keys, ", ")
}

// parser reads the steps of one task.
type parser struct {
	task  *Task
	lists map[string][]Step
	// calls are the workflows yield steps name, checked once all workflows are known.
	calls []call
	// tools names the task's tools, to check tool steps when the task does not inherit the agent's.
	tools map[string]bool
}

type call struct{ path, workflow string }

// ParseError is a task that cannot run, with the path of what is wrong.
type ParseError struct {
	Path string
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func perr(path, format string, args ...any) *ParseError {
	return &ParseError{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// wrapExpr places an expression's error at path.
func wrapExpr(path string, err error) *ParseError {
	if e, ok := err.(*expr.Error); ok && e.Path != "" {
		return &ParseError{Path: path + "." + strings.TrimPrefix(e.Path, "."), Msg: strings.TrimPrefix(e.Error(), e.Path+": ")}
	}
	return &ParseError{Path: path, Msg: err.Error()}
}

// stepList reads a list of steps, or a single step standing for a list of one, at path.
func (p *parser) stepList(v any, path string) ([]Step, error) {
	var steps []Step
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return nil, perr(path, "a list of steps must not be empty")
		}
		for i, e := range x {
			s, err := p.step(e, fmt.Sprintf("%s[%d]", path, i))
			if err != nil {
				return nil, err
			}
			steps = append(steps, s)
		}
	case map[string]any:
		s, err := p.step(x, path)
		if err != nil {
			return nil, err
		}
		steps = []Step{s}
	case nil:
		return nil, perr(path, "missing steps")
	default:
		return nil, perr(path, "want a step or a list of steps, got %s", typeName(v))
	}
	p.lists[path] = steps
	return steps, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return "a number"
}

func (p *parser) step(v any, path string) (Step, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, perr(path, "a step is an object with one of the keys %s; got %s", knownStepKeys(), typeName(v))
	}
	var kind Kind
	var key string
	var extra []string
	for _, k := range stepKeys {
		if _, ok := m[k.key]; ok {
			if key != "" {
				return nil, perr(path, "a step has one type, this one has %q and %q", key, k.key)
			}
			kind, key, extra = k.kind, k.key, k.extra
		}
	}
	if key == "" {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return nil, perr(path, "unknown step type (keys %s); a step has one of %s", strings.Join(keys, ", "), knownStepKeys())
	}
	allowed := map[string]bool{key: true, "label": true, "kind_": true}
	for _, e := range extra {
		allowed[e] = true
	}
	for k := range m {
		if !allowed[k] {
			return nil, perr(path+"."+k, "unknown field of a %s step", key)
		}
	}
	label := ""
	if l, ok := m["label"]; ok && l != nil {
		s, ok := l.(string)
		if !ok || s == "" || len(s) > 120 {
			return nil, perr(path+".label", "a label is a non-empty string of at most 120 characters")
		}
		label = s
	}
	b := StepBase{Label: label, Path: path}
	s, err := p.parseKind(kind, key, m, b)
	if err != nil {
		return nil, err
	}
	return s, nil
}

func (p *parser) value(v any, mode expr.Mode, path string, extra ...string) (*expr.Value, error) {
	val, err := expr.CompileValue(v, mode, extra...)
	if err != nil {
		return nil, wrapExpr(path, err)
	}
	return val, nil
}

func (p *parser) expression(v any, path string, extra ...string) (*expr.Expr, error) {
	s, ok := v.(string)
	if !ok {
		// A literal condition (if: true) is an expression too.
		switch x := v.(type) {
		case bool:
			s = map[bool]string{true: "True", false: "False"}[x]
		case nil:
			return nil, perr(path, "missing expression")
		default:
			return nil, perr(path, "want an expression, got %s", typeName(v))
		}
	}
	if src, ok := expr.ExprSource(s); ok {
		s = src
	}
	x, err := expr.Compile(s, extra...)
	if err != nil {
		return nil, wrapExpr(path, err)
	}
	return x, nil
}

func (p *parser) parseKind(kind Kind, key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	switch kind {
	case KindEvaluate:
		if _, ok := m[key].(map[string]any); !ok {
			return nil, perr(at, "evaluate takes an object of names and expressions")
		}
		v, err := p.value(m[key], expr.ValueMode, at)
		if err != nil {
			return nil, err
		}
		return &EvaluateStep{StepBase: b, Evaluate: v}, nil

	case KindPrompt:
		return p.prompt(m, b)

	case KindToolCall:
		return p.toolCall(key, m, b)

	case KindIfElse:
		return p.ifElse(key, m, b)

	case KindSwitch:
		return p.switchStep(key, m, b)

	case KindForeach:
		return p.foreach(key, m, b)

	case KindMapReduce:
		return p.mapReduce(key, m, b)

	case KindParallel:
		return p.parallel(key, m, b)

	case KindSleep:
		return p.sleep(m[key], at, b)

	case KindWaitForInput:
		return p.waitForInput(key, m, b)

	case KindReturn:
		v, err := p.value(m[key], expr.ValueMode, at)
		if err != nil {
			return nil, err
		}
		return &ReturnStep{StepBase: b, Value: v}, nil

	case KindYield:
		return p.yield(key, m, b)

	case KindLog:
		v, err := p.text(m[key], at)
		if err != nil {
			return nil, err
		}
		return &LogStep{StepBase: b, Log: v}, nil

	case KindGet:
		return p.get(key, m, b)

	case KindSet:
		if _, ok := m[key].(map[string]any); !ok {
			return nil, perr(at, "set takes an object of names and values")
		}
		v, err := p.value(m[key], expr.ValueMode, at)
		if err != nil {
			return nil, err
		}
		return &SetStep{StepBase: b, Set: v}, nil

	case KindError:
		v, err := p.text(m[key], at)
		if err != nil {
			return nil, err
		}
		return &ErrorStep{StepBase: b, Error: v}, nil
	}
	return nil, perr(b.Path, "internal: unhandled step kind %s", kind)
}

// toolCall parses a tool step: `tool: name` with `arguments`, or seed 004's `tool: {name, arguments}`.
func (p *parser) toolCall(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	s := &ToolCallStep{StepBase: b}
	args, hasArgs := m["arguments"]
	switch t := m[key].(type) {
	case string:
		s.Tool = t
	case map[string]any:
		// Seed 004's form: tool: {name, arguments}.
		if err := onlyFields(t, at, "a tool call", "name", "arguments"); err != nil {
			return nil, err
		}
		s.Tool, _ = t["name"].(string)
		if a, ok := t["arguments"]; ok {
			if hasArgs {
				return nil, perr(at+".arguments", "arguments are given twice")
			}
			args, hasArgs = a, true
		}
	}
	if !validName(s.Tool) {
		return nil, perr(at, "a tool step names a tool (letters, digits and _)")
	}
	if !p.task.InheritTools && !p.tools[s.Tool] {
		return nil, perr(at, "no tool named %q in the task's tools (and the task does not inherit the agent's)", s.Tool)
	}
	if !hasArgs {
		args = "_"
	}
	v, err := p.value(args, expr.ValueMode, b.Path+".arguments")
	if err != nil {
		return nil, err
	}
	s.Arguments = v
	return s, nil
}

// ifElse parses `if` with `then` and an optional `else`.
func (p *parser) ifElse(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	cond, err := p.expression(m[key], at)
	if err != nil {
		return nil, err
	}
	s := &IfElseStep{StepBase: b, If: cond}
	if _, ok := m["then"]; !ok {
		return nil, perr(b.Path, "an if step needs then")
	}
	if s.Then, err = p.stepList(m["then"], b.Path+".then"); err != nil {
		return nil, err
	}
	if e, ok := m["else"]; ok && e != nil {
		if s.Else, err = p.stepList(e, b.Path+".else"); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// switchStep parses `switch`: a list of {case, then}, `_` as the default case.
func (p *parser) switchStep(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	list, ok := m[key].([]any)
	if !ok || len(list) == 0 {
		return nil, perr(at, "switch takes a non-empty list of {case, then}")
	}
	s := &SwitchStep{StepBase: b}
	for i, e := range list {
		cp := fmt.Sprintf("%s[%d]", at, i)
		cm, ok := e.(map[string]any)
		if !ok {
			return nil, perr(cp, "a case is {case, then}")
		}
		if err := onlyFields(cm, cp, "a case", "case", "then"); err != nil {
			return nil, err
		}
		var c Case
		if cs, _ := cm["case"].(string); isDefaultCase(cs) {
			c.Case = nil
		} else {
			x, err := p.expression(cm["case"], cp+".case")
			if err != nil {
				return nil, err
			}
			c.Case = x
		}
		steps, err := p.stepList(cm["then"], cp+".then")
		if err != nil {
			return nil, err
		}
		c.Then = steps
		s.Cases = append(s.Cases, c)
	}
	return s, nil
}

// foreach parses `foreach: {in, do}`.
func (p *parser) foreach(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	fm, ok := m[key].(map[string]any)
	if !ok {
		return nil, perr(at, "foreach takes {in, do}")
	}
	if err := onlyFields(fm, at, "a foreach", "in", "do"); err != nil {
		return nil, err
	}
	in, err := p.expression(fm["in"], at+".in")
	if err != nil {
		return nil, err
	}
	do, err := p.stepList(fm["do"], at+".do")
	if err != nil {
		return nil, err
	}
	return &ForeachStep{StepBase: b, In: in, Do: do}, nil
}

// mapReduce parses `over` with `map`, and optional `reduce`, `initial` and `parallelism`.
func (p *parser) mapReduce(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	over, err := p.expression(m[key], at)
	if err != nil {
		return nil, err
	}
	// Julep maps one item at a time unless parallelism says more.
	s := &MapReduceStep{StepBase: b, Over: over, Parallelism: 1}
	if s.Map, err = p.stepList(m["map"], b.Path+".map"); err != nil {
		return nil, err
	}
	if r, ok := m["reduce"]; ok && r != nil {
		if s.Reduce, err = p.expression(r, b.Path+".reduce", "results"); err != nil {
			return nil, err
		}
	}
	init, ok := m["initial"]
	if !ok || init == nil {
		init = []any{}
	}
	if s.Initial, err = p.value(init, expr.ValueMode, b.Path+".initial"); err != nil {
		return nil, err
	}
	if pv, ok := m["parallelism"]; ok && pv != nil {
		n, ok := expr.AsInt(pv)
		if !ok || n < 1 || n > MaxParallelism {
			return nil, perr(b.Path+".parallelism", "parallelism is a whole number from 1 to %d", MaxParallelism)
		}
		s.Parallelism = int(n)
	}
	return s, nil
}

// parallel parses `parallel`: a list of branches, each a list of steps.
func (p *parser) parallel(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	list, ok := m[key].([]any)
	if !ok || len(list) == 0 || len(list) > MaxParallelism {
		return nil, perr(at, "parallel takes a list of 1 to %d steps", MaxParallelism)
	}
	s := &ParallelStep{StepBase: b}
	for i, e := range list {
		steps, err := p.stepList(e, fmt.Sprintf("%s[%d]", at, i))
		if err != nil {
			return nil, err
		}
		s.Branches = append(s.Branches, steps)
	}
	return s, nil
}

// waitForInput parses `wait_for_input: {info}`.
func (p *parser) waitForInput(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	var info any = map[string]any{}
	switch w := m[key].(type) {
	case nil:
	case map[string]any:
		if err := onlyFields(w, at, "wait_for_input", "info"); err != nil {
			return nil, err
		}
		if i, ok := w["info"]; ok {
			info = i
		}
	default:
		return nil, perr(at, "wait_for_input takes {info}")
	}
	v, err := p.value(info, expr.ValueMode, at+".info")
	if err != nil {
		return nil, err
	}
	return &WaitForInputStep{StepBase: b, Info: v}, nil
}

// yield parses `workflow: name` with `arguments`, or `yield: {workflow, arguments}`.
func (p *parser) yield(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	s := &YieldStep{StepBase: b}
	args, hasArgs := m["arguments"]
	argsAt := b.Path + ".arguments"
	if key == "yield" {
		y, ok := m[key].(map[string]any)
		if !ok {
			return nil, perr(at, "yield takes {workflow, arguments}")
		}
		if err := onlyFields(y, at, "yield", "workflow", "arguments"); err != nil {
			return nil, err
		}
		s.Workflow, _ = y["workflow"].(string)
		args, hasArgs = y["arguments"]
		argsAt = at + ".arguments"
		at += ".workflow"
	} else {
		s.Workflow, _ = m[key].(string)
	}
	if !validName(s.Workflow) {
		return nil, perr(at, "name the workflow to run")
	}
	p.calls = append(p.calls, call{path: at, workflow: s.Workflow})
	if !hasArgs {
		args = "_"
	}
	v, err := p.value(args, expr.ValueMode, argsAt)
	if err != nil {
		return nil, err
	}
	s.Arguments = v
	return s, nil
}

// get parses `get`: a key or a list of keys.
func (p *parser) get(key string, m map[string]any, b StepBase) (Step, error) {
	at := b.Path + "." + key
	s := &GetStep{StepBase: b}
	switch g := m[key].(type) {
	case string:
		s.Keys = []string{g}
	case []any:
		s.List = true
		for i, k := range g {
			ks, ok := k.(string)
			if !ok || ks == "" {
				return nil, perr(fmt.Sprintf("%s[%d]", at, i), "a key is a non-empty string")
			}
			s.Keys = append(s.Keys, ks)
		}
	}
	if len(s.Keys) == 0 || s.Keys[0] == "" {
		return nil, perr(at, "get takes a key or a list of keys")
	}
	return s, nil
}

// onlyFields refuses the first field of m (in sorted order) that is not one of allowed, naming what m is.
func onlyFields(m map[string]any, at, what string, allowed ...string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(allowed, k) {
			return perr(at+"."+k, "unknown field of %s (%s)", what, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func isDefaultCase(s string) bool {
	t := strings.TrimSpace(s)
	return t == "_" || t == "$ _"
}

func (p *parser) text(v any, path string) (*expr.Value, error) {
	if _, ok := v.(string); !ok {
		return nil, perr(path, "want a string, got %s", typeName(v))
	}
	return p.value(v, expr.TextMode, path)
}

func (p *parser) prompt(m map[string]any, b StepBase) (Step, error) {
	s := &PromptStep{StepBase: b}
	at := b.Path + ".prompt"
	switch pr := m["prompt"].(type) {
	case string:
	case []any:
		if len(pr) == 0 {
			return nil, perr(at, "a prompt's list of messages must not be empty")
		}
		for i, msg := range pr {
			mm, ok := msg.(map[string]any)
			if !ok {
				return nil, perr(fmt.Sprintf("%s[%d]", at, i), "a message is {role, content}")
			}
			if _, ok := mm["role"].(string); !ok {
				return nil, perr(fmt.Sprintf("%s[%d].role", at, i), "a message needs a role")
			}
		}
	default:
		return nil, perr(at, "a prompt is a string or a list of messages, got %s", typeName(m["prompt"]))
	}
	v, err := p.value(m["prompt"], expr.TextMode, at)
	if err != nil {
		return nil, err
	}
	s.Prompt = v
	if st, ok := m["settings"]; ok && st != nil {
		if _, ok := st.(map[string]any); !ok {
			return nil, perr(b.Path+".settings", "settings is an object")
		}
		if s.Settings, err = p.value(st, expr.ValueMode, b.Path+".settings"); err != nil {
			return nil, err
		}
	}
	for _, f := range []struct {
		key string
		dst *bool
	}{{"unwrap", &s.Unwrap}, {"auto_run_tools", &s.AutoRunTools}, {"disable_cache", &s.DisableCache}} {
		if x, ok := m[f.key]; ok && x != nil {
			bv, ok := x.(bool)
			if !ok {
				return nil, perr(b.Path+"."+f.key, "want true or false")
			}
			*f.dst = bv
		}
	}
	s.ToolChoice = m["tool_choice"]
	switch t := m["tools"].(type) {
	case nil:
	case string:
		if t != "all" {
			return nil, perr(b.Path+".tools", `tools is "all" or a list of tools`)
		}
	case []any:
		s.Tools = []Tool{}
		for i, e := range t {
			tl, err := parseTool(e, fmt.Sprintf("%s.tools[%d]", b.Path, i))
			if err != nil {
				return nil, err
			}
			s.Tools = append(s.Tools, tl)
		}
	default:
		return nil, perr(b.Path+".tools", `tools is "all" or a list of tools`)
	}
	return s, nil
}

// sleep reads {seconds, minutes, hours, days} or, as in seed 004 (sleep: 24*3600), a number of seconds.
func (p *parser) sleep(v any, at string, b StepBase) (Step, error) {
	s := &SleepStep{StepBase: b}
	switch x := v.(type) {
	case map[string]any:
		return p.sleepUnits(s, x, at)
	case string:
		return p.sleepExpr(s, x, at)
	default:
		f, ok := expr.AsFloat(v)
		if !ok {
			return nil, perr(at, "a sleep takes {seconds, minutes, hours, days} or a number of seconds")
		}
		return s.lasting(f, at)
	}
}

// lasting sets a sleep of a constant number of seconds, checked now.
func (s *SleepStep) lasting(secs float64, at string) (Step, error) {
	if math.IsNaN(secs) || secs <= 0 {
		return nil, perr(at, "a sleep must last more than 0 seconds")
	}
	if secs > MaxSleep.Seconds() {
		return nil, perr(at, "a sleep lasts at most 31 days, this one %s", time.Duration(secs*float64(time.Second)))
	}
	s.Duration = time.Duration(secs * float64(time.Second))
	return s, nil
}

// sleepUnits reads {seconds, minutes, hours, days}: numbers, or expressions summed into one when any is not a
// number.
func (p *parser) sleepUnits(s *SleepStep, x map[string]any, at string) (Step, error) {
	units := map[string]float64{"seconds": 1, "minutes": 60, "hours": 3600, "days": 86400}
	total := 0.0
	var parts []string
	constant := true
	for k, u := range x {
		mul, ok := units[k]
		if !ok {
			return nil, perr(at+"."+k, "unknown unit of a sleep (seconds, minutes, hours, days)")
		}
		if f, ok := expr.AsFloat(u); ok {
			if f < 0 {
				return nil, perr(at+"."+k, "must not be negative")
			}
			total += f * mul
			parts = append(parts, fmt.Sprintf("(%v) * %v", f, mul))
			continue
		}
		str, ok := u.(string)
		if !ok {
			return nil, perr(at+"."+k, "want a number or an expression")
		}
		src := str
		if e, ok := expr.ExprSource(str); ok {
			src = e
		}
		if _, err := expr.Compile(src); err != nil {
			return nil, wrapExpr(at+"."+k, err)
		}
		constant = false
		parts = append(parts, fmt.Sprintf("(%s) * %v", src, mul))
	}
	if len(x) == 0 {
		return nil, perr(at, "a sleep needs seconds, minutes, hours or days")
	}
	if constant {
		return s.lasting(total, at)
	}
	sort.Strings(parts)
	secs, err := p.value("$ "+strings.Join(parts, " + "), expr.ExprMode, at)
	if err != nil {
		return nil, err
	}
	s.Seconds = secs
	return s, nil
}

// sleepExpr reads a number of seconds as an expression; one that reads nothing of the execution (24*3600) is
// evaluated and checked now.
func (p *parser) sleepExpr(s *SleepStep, x, at string) (Step, error) {
	secs, err := p.value(x, expr.ExprMode, at)
	if err != nil {
		return nil, err
	}
	if x := secs.Expr(); x != nil && !x.Uses("_", "inputs", "outputs", "steps", "state") {
		out, err := x.Eval(&expr.Env{})
		if err != nil {
			return nil, wrapExpr(at, err)
		}
		f, ok := expr.AsFloat(out)
		if !ok {
			return nil, perr(at, "a sleep's duration is a number of seconds, got %v", out)
		}
		return s.lasting(f, at)
	}
	s.Seconds = secs
	return s, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 120 {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
