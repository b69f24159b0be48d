package expr

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// Limits bound one evaluation.
type Limits struct {
	// MaxSteps bounds the Starlark instructions executed.
	MaxSteps uint64
	// MaxAlloc bounds the elements and bytes built by repetition, concatenation and the builtins that
	// materialise a sequence, summed over the evaluation.
	MaxAlloc int64
	// MaxBytes bounds one string, and what str(), json.dumps() and formatting may print.
	MaxBytes int
	// MaxItems bounds range() and the values an expression returns (counted as nodes).
	MaxItems int
	// MaxTime bounds the wall-clock time of one evaluation, as Julep's one-second timeout does; the step
	// limit usually stops a runaway expression first.
	MaxTime time.Duration
}

// DefaultLimits are Julep's orders of magnitude: Python's safe_range allows a million items and strings of two
// million characters.
func DefaultLimits() Limits {
	return Limits{MaxSteps: 1_000_000, MaxAlloc: 4_000_000, MaxBytes: 4 << 20, MaxItems: 1_000_000, MaxTime: time.Second}
}

// MaxSourceBytes bounds the source of one expression.
const MaxSourceBytes = 64 << 10

// Env is what an expression sees.
type Env struct {
	// Input is `_`: the step's input (the previous step's output, the workflow's input at its first step, the
	// item in a foreach or map).
	Input any
	// Inputs and Outputs are the current workflow's steps so far: inputs[i] is what step i received, outputs[i]
	// what it returned; steps[i] is {input, output}.
	Inputs, Outputs []any
	// Labels maps a step's label to its index, for steps["label"].
	Labels map[string]int
	// State is `state`: what the workflow's set steps stored.
	State map[string]any
	// Vars are more names (`results` in a reduce); they replace the names above.
	Vars map[string]any
	// Seed seeds random and randint; derive it from the execution and the step so that a replay draws the
	// same numbers.
	Seed uint64
	// Now is the time datetime.now(), date.today() and time.time() read: the time the decision is made at.
	// Zero reads the clock.
	Now time.Time
	// Limits bound the evaluation; zero fields take the defaults.
	Limits Limits
}

func (e *Env) limits() Limits {
	l, d := e.Limits, DefaultLimits()
	if l.MaxSteps == 0 {
		l.MaxSteps = d.MaxSteps
	}
	if l.MaxAlloc == 0 {
		l.MaxAlloc = d.MaxAlloc
	}
	if l.MaxBytes == 0 {
		l.MaxBytes = d.MaxBytes
	}
	if l.MaxItems == 0 {
		l.MaxItems = d.MaxItems
	}
	if l.MaxTime == 0 {
		l.MaxTime = d.MaxTime
	}
	return l
}

// Error is an expression that does not compile or fails to evaluate.
type Error struct {
	// Path locates the expression inside a value ("chosen_topic", "[1].content"); empty for a bare expression.
	Path string
	// Source is the expression as written.
	Source string
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	src := strings.TrimSpace(e.Source)
	if len(src) > 200 {
		src = src[:200] + "..."
	}
	if e.Path != "" {
		return fmt.Sprintf("%s: %s (in %q)", e.Path, e.Msg, src)
	}
	return fmt.Sprintf("%s (in %q)", e.Msg, src)
}

// names an expression may use without defining them (besides the builtins).
var contextNames = []string{"_", "inputs", "outputs", "steps", "state"}

// Expr is a compiled expression. It is immutable and may be evaluated concurrently.
type Expr struct {
	source string
	prog   *starlark.Program
	free   map[string]bool // identifiers the expression reads, other than the ones it binds itself
	used   []string        // the predeclared names the compiled expression reads
	extra  []string        // names beyond the standard ones it was compiled to see
	isName bool            // the whole expression is one identifier
	isStr  bool            // the whole expression is one string literal
}

// Source returns the expression as written (without its "$ ").
func (x *Expr) Source() string { return x.source }

const resultVar = "__result__"

var fileOptions = &syntax.FileOptions{Set: true}

// Compile compiles a Python expression (without the "$ " prefix). extra names more variables it may use
// (given in Env.Vars), such as `results` in a reduce.
func Compile(src string, extra ...string) (*Expr, error) {
	fail := func(msg string) (*Expr, error) { return nil, &Error{Source: src, Msg: msg} }
	if len(src) > MaxSourceBytes {
		return fail(fmt.Sprintf("the expression is %d bytes, more than the %d allowed", len(src), MaxSourceBytes))
	}
	if strings.TrimSpace(src) == "" {
		return fail("empty expression")
	}
	rewritten, err := translate(src)
	if err != nil {
		return fail(err.Error())
	}
	// Parenthesised so that an expression may span lines, as it does in YAML block scalars.
	e, err := fileOptions.ParseExpr("expr", "(\n"+rewritten+"\n)", 0)
	if err != nil {
		return fail(syntaxMessage(err))
	}
	x := &Expr{source: src, extra: extra}
	if _, ok := unparen(e).(*syntax.Ident); ok {
		x.isName = true
	}
	if lit, ok := unparen(e).(*syntax.Literal); ok && lit.Token == syntax.STRING {
		x.isStr = true
	}
	x.free = freeNames(e)
	for name := range x.free {
		if why, ok := refusedNames[name]; ok && !slices.Contains(extra, name) {
			return fail(why)
		}
	}
	f := &syntax.File{Path: "expr", Options: fileOptions, Stmts: []syntax.Stmt{
		&syntax.AssignStmt{Op: syntax.EQ, LHS: &syntax.Ident{Name: resultVar}, RHS: e},
	}}
	known := predeclaredNames(extra)
	seen := map[string]bool{}
	syntax.Walk(e, func(n syntax.Node) bool {
		if id, ok := n.(*syntax.Ident); ok && known[id.Name] && !seen[id.Name] {
			seen[id.Name] = true
			x.used = append(x.used, id.Name)
		}
		return true
	})
	prog, err := starlark.FileProgram(f, func(name string) bool { return known[name] })
	if err != nil {
		return fail(resolveMessage(err))
	}
	x.prog = prog
	return x, nil
}

// MustCompile is Compile for expressions written in Go code.
func MustCompile(src string, extra ...string) *Expr {
	x, err := Compile(src, extra...)
	if err != nil {
		panic(err)
	}
	return x
}

func unparen(e syntax.Expr) syntax.Expr {
	for {
		p, ok := e.(*syntax.ParenExpr)
		if !ok {
			return e
		}
		e = p.X
	}
}

// Uses reports whether the expression reads one of names.
func (x *Expr) Uses(names ...string) bool {
	for _, n := range names {
		if x.free[n] {
			return true
		}
	}
	return false
}

// Eval evaluates the expression. The result is a JSON value: nil, bool, int64, float64, string, []any,
// map[string]any (json.Number for an int too large for int64).
func (x *Expr) Eval(env *Env) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &Error{Source: x.source, Msg: fmt.Sprintf("internal error evaluating the expression: %v", r)}
		}
	}()
	if env == nil {
		env = &Env{}
	}
	lim := env.limits()
	thread := newThread(env, lim)
	predeclared, err := predeclare(env, x.used)
	if err != nil {
		return nil, &Error{Source: x.source, Msg: err.Error()}
	}
	timer := time.AfterFunc(lim.MaxTime, func() { thread.Cancel(fmt.Sprintf("it ran longer than %s", lim.MaxTime)) })
	defer timer.Stop()
	globals, err := x.prog.Init(thread, predeclared)
	if err != nil {
		return nil, &Error{Source: x.source, Msg: evalMessage(err)}
	}
	v := globals[resultVar]
	if v == nil {
		return nil, &Error{Source: x.source, Msg: "the expression has no value"}
	}
	budget := lim.MaxItems
	out, err = toGo(v, &budget)
	if err != nil {
		return nil, &Error{Source: x.source, Msg: err.Error()}
	}
	return out, nil
}

func newThread(env *Env, lim Limits) *starlark.Thread {
	th := &starlark.Thread{
		Name:  "expr",
		Print: func(*starlark.Thread, string) {},
		Load: func(*starlark.Thread, string) (starlark.StringDict, error) {
			return nil, errors.New("load() is not available in expressions")
		},
	}
	th.SetMaxExecutionSteps(lim.MaxSteps)
	th.SetLocal(meterKey, &meter{limits: lim})
	th.SetLocal(seedKey, env.Seed)
	th.SetLocal(nowKey, env.Now)
	return th
}

func syntaxMessage(err error) string {
	var se syntax.Error
	if errors.As(err, &se) {
		return "syntax error: " + se.Msg
	}
	return "syntax error: " + err.Error()
}

func resolveMessage(err error) string {
	var list resolve.ErrorList
	if errors.As(err, &list) {
		var msgs []string
		for _, e := range list {
			msgs = append(msgs, e.Msg)
		}
		return strings.Join(msgs, "; ")
	}
	return err.Error()
}

func evalMessage(err error) string {
	var ee *starlark.EvalError
	if errors.As(err, &ee) {
		msg := ee.Msg
		if strings.Contains(msg, "too many steps") {
			return "the expression ran too long (too many steps)"
		}
		if _, reason, ok := strings.Cut(msg, "cancelled: "); ok {
			return "the expression ran too long: " + reason
		}
		return msg
	}
	return err.Error()
}
