package expr

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/jinja"
)

// Mode says where a value stands, which decides how its strings are read (see the package doc).
type Mode int

const (
	// ValueMode: evaluate, tool arguments, return, set, wait_for_input's info, a workflow's arguments.
	ValueMode Mode = iota
	// ExprMode: where only an expression makes sense (if, case, in, over, reduce, a sleep's duration).
	ExprMode
	// TextMode: prompts, messages, log and error messages: an expression with "$ ", a template, or text.
	TextMode
)

// Value is a compiled value: a literal, an expression, a template, or a list or map of values.
type Value struct {
	kind   valueKind
	lit    any
	expr   *Expr
	tpl    *jinja.Template
	list   []*Value
	keys   []string // sorted, so that evaluation (and random draws) happen in the same order every time
	fields map[string]*Value
}

type valueKind int

const (
	litValue valueKind = iota
	exprValue
	tplValue
	listValue
	mapValue
)

// Literal returns a value that is v as it is.
func Literal(v any) *Value { return &Value{kind: litValue, lit: v} }

// FromExpr returns a value computed by x.
func FromExpr(x *Expr) *Value { return &Value{kind: exprValue, expr: x} }

// CompileValue compiles a JSON value (as YAML or JSON decoded it) standing in mode. extra names variables the
// expressions may use besides the standard ones.
func CompileValue(v any, mode Mode, extra ...string) (*Value, error) {
	return compileValue(v, mode, "", extra)
}

func compileValue(v any, mode Mode, path string, extra []string) (*Value, error) {
	switch x := v.(type) {
	case string:
		val, err := compileString(x, mode, path, extra)
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Path = path
			}
			return nil, err
		}
		return val, nil
	case []any:
		out := &Value{kind: listValue, list: make([]*Value, len(x))}
		allLit := true
		for i, e := range x {
			c, err := compileValue(e, mode, join(path, fmt.Sprintf("[%d]", i)), extra)
			if err != nil {
				return nil, err
			}
			out.list[i] = c
			allLit = allLit && c.kind == litValue
		}
		if allLit {
			return Literal(v), nil
		}
		return out, nil
	case map[string]any:
		out := &Value{kind: mapValue, fields: make(map[string]*Value, len(x))}
		allLit := true
		for k, e := range x {
			c, err := compileValue(e, mode, join(path, k), extra)
			if err != nil {
				return nil, err
			}
			out.fields[k] = c
			out.keys = append(out.keys, k)
			allLit = allLit && c.kind == litValue
		}
		sort.Strings(out.keys)
		if allLit {
			return Literal(v), nil
		}
		return out, nil
	}
	return Literal(v), nil
}

func join(path, elem string) string {
	switch {
	case path == "":
		return elem
	case strings.HasPrefix(elem, "["):
		return path + elem
	}
	return path + "." + elem
}

// ExprSource returns the expression in s when s is marked as one ("$ x" gives "x").
func ExprSource(s string) (string, bool) {
	t := strings.TrimSpace(s)
	if len(t) >= 2 && t[0] == '$' && (t[1] == ' ' || t[1] == '\n' || t[1] == '\t' || t[1] == '\r') {
		return strings.TrimSpace(t[1:]), true
	}
	return "", false
}

func compileString(s string, mode Mode, path string, extra []string) (*Value, error) {
	if src, ok := ExprSource(s); ok {
		x, err := Compile(src, extra...)
		if err != nil {
			return nil, err
		}
		return FromExpr(x), nil
	}
	if mode == ExprMode {
		x, err := Compile(s, extra...)
		if err != nil {
			return nil, err
		}
		return FromExpr(x), nil
	}
	if jinja.IsTemplate(s) {
		tpl, err := jinja.Compile("", s)
		if err != nil {
			return nil, &Error{Source: s, Msg: errs.MessageOf(err)}
		}
		return &Value{kind: tplValue, tpl: tpl, lit: s}, nil
	}
	if mode == ValueMode {
		if x := legacyExpr(s, extra); x != nil {
			return FromExpr(x), nil
		}
	}
	return Literal(s), nil
}

// legacyExpr recognises the expressions written without "$ " that Julep still evaluates (its
// backwards_compatibility), and the ones of seed 004's examples.
func legacyExpr(s string, extra []string) *Expr {
	t := strings.TrimSpace(s)
	julep := t == "_" ||
		strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") ||
		strings.HasPrefix(t, "_[") && strings.HasSuffix(t, "]") ||
		strings.HasPrefix(t, "_.") ||
		strings.Contains(t, "outputs[") || strings.Contains(t, "inputs[")
	x, err := Compile(t, extra...)
	if err != nil {
		return nil // Julep would have failed on it; as text it is at least what the user wrote
	}
	if julep || x.isStr {
		return x
	}
	if !x.isName && x.Uses(contextNames...) {
		return x
	}
	return nil
}

// IsLiteral reports whether the value needs no evaluation, and Literal returns it then.
func (v *Value) IsLiteral() bool { return v.kind == litValue }

// LiteralValue returns the value of a literal.
func (v *Value) LiteralValue() any { return v.lit }

// Expr returns the expression of a value that is one expression, or nil.
func (v *Value) Expr() *Expr {
	if v.kind == exprValue {
		return v.expr
	}
	return nil
}

// Eval computes the value. Templates see the same names as expressions.
func (v *Value) Eval(ctx context.Context, env *Env) (any, error) {
	return v.eval(ctx, env, "")
}

func (v *Value) eval(ctx context.Context, env *Env, path string) (any, error) {
	switch v.kind {
	case litValue:
		return v.lit, nil
	case exprValue:
		out, err := v.expr.Eval(env)
		if e, ok := err.(*Error); ok && path != "" {
			e.Path = path
		}
		return out, err
	case tplValue:
		out, err := v.tpl.Render(ctx, templateVars(env))
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return nil, &Error{Path: path, Source: v.lit.(string), Msg: errs.MessageOf(err)}
		}
		return out, nil
	case listValue:
		out := make([]any, len(v.list))
		for i, e := range v.list {
			x, err := e.eval(ctx, env, join(path, fmt.Sprintf("[%d]", i)))
			if err != nil {
				return nil, err
			}
			out[i] = x
		}
		return out, nil
	case mapValue:
		out := make(map[string]any, len(v.keys))
		for _, k := range v.keys {
			x, err := v.fields[k].eval(ctx, env, join(path, k))
			if err != nil {
				return nil, err
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("internal: value kind %d", v.kind)
}

// templateVars are the names a template sees: the same as an expression's.
func templateVars(env *Env) map[string]any {
	if env == nil {
		env = &Env{}
	}
	steps := make([]any, len(env.Inputs))
	for i := range steps {
		s := map[string]any{"input": env.Inputs[i]}
		if i < len(env.Outputs) {
			s["output"] = env.Outputs[i]
		}
		steps[i] = s
	}
	vars := map[string]any{
		"_":       env.Input,
		"inputs":  orEmptyList(env.Inputs),
		"outputs": orEmptyList(env.Outputs),
		"steps":   steps,
		"state":   orEmptyMap(env.State),
	}
	for k, x := range env.Vars {
		vars[k] = x
	}
	return vars
}

func orEmptyList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}
