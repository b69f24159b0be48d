package jinja

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nikolalohinski/gonja/v2/builtins"
	"github.com/nikolalohinski/gonja/v2/exec"
	"github.com/nikolalohinski/gonja/v2/nodes"
	"github.com/nikolalohinski/gonja/v2/parser"
	"github.com/nikolalohinski/gonja/v2/tokens"

	"github.com/contrailhq/contrail/internal/pyjson"
)

// guardVar is the context variable through which the functions of the environment find the rendering's guard.
const guardVar = "__contrail_guard"

// guard counts and times one rendering.
type guard struct {
	ctx      context.Context
	limits   Limits
	deadline time.Time
	ops      int
	written  int
	ctxErr   error
}

func newGuard(ctx context.Context, l Limits) *guard {
	return &guard{ctx: ctx, limits: l, deadline: time.Now().Add(l.Timeout)}
}

// gonja turns the errors of functions into strings; these markers let renderError find them again.
const (
	limitMarker = "limit reached: "
	zeroMarker  = "division by zero in "
)

// limitError is a bound reached.
type limitError struct{ msg string }

func (e *limitError) Error() string { return limitMarker + e.msg }

type zeroDivisionError struct{ expr string }

func (e *zeroDivisionError) Error() string { return zeroMarker + e.expr }

func (g *guard) tick() error {
	g.ops++
	if g.ops > g.limits.MaxOps {
		return &limitError{fmt.Sprintf("the template did more than %d operations", g.limits.MaxOps)}
	}
	// Every tick reads the clock: between two ticks a loop over a long list may run with an empty body.
	if err := g.ctx.Err(); err != nil {
		g.ctxErr = err
		return err
	}
	if time.Now().After(g.deadline) {
		return &limitError{fmt.Sprintf("the template took more than %s to render", g.limits.Timeout)}
	}
	return nil
}

func (g *guard) checkSize(what string, v any) error {
	if n := sizeOf(v, g.limits.MaxBytes); n > g.limits.MaxBytes {
		return &limitError{fmt.Sprintf("%s would be more than %d bytes", what, g.limits.MaxBytes)}
	}
	return nil
}

func guardOf(e *exec.Evaluator) *guard {
	if v, ok := e.Environment.Context.Get(guardVar); ok {
		if g, ok := v.(*guard); ok {
			return g
		}
	}
	// Not rendered by Template.Render: bound it anyway.
	return newGuard(context.Background(), DefaultLimits())
}

type limitedWriter struct {
	w io.Writer
	g *guard
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if err := w.g.tick(); err != nil {
		return 0, err
	}
	if w.g.written+len(p) > w.g.limits.MaxBytes {
		return 0, &limitError{fmt.Sprintf("the rendered text would be more than %d bytes", w.g.limits.MaxBytes)}
	}
	w.g.written += len(p)
	return w.w.Write(p)
}

// sizeOf approximates the bytes a value prints as, stopping once past limit (values may share structure, so
// the printed size can be exponential in the memory they hold).
func sizeOf(v any, limit int) int {
	n := 0
	var walk func(r reflect.Value)
	walk = func(r reflect.Value) {
		if n > limit || !r.IsValid() {
			return
		}
		switch r.Kind() {
		case reflect.Interface, reflect.Pointer:
			if r.IsNil() {
				n += 4
				return
			}
			if ev, ok := r.Interface().(*exec.Value); ok {
				walk(ev.Val)
				return
			}
			walk(r.Elem())
		case reflect.String:
			n += r.Len() + 2
		case reflect.Slice, reflect.Array:
			if r.Kind() == reflect.Slice && r.Type().Elem().Kind() == reflect.Uint8 {
				n += r.Len()
				return
			}
			n += 2
			for i := 0; i < r.Len() && n <= limit; i++ {
				n += 2
				walk(r.Index(i))
			}
		case reflect.Map:
			n += 2
			it := r.MapRange()
			for it.Next() && n <= limit {
				n += 4
				walk(it.Key())
				walk(it.Value())
			}
		case reflect.Struct:
			n += 8
			for i := 0; i < r.NumField() && n <= limit; i++ {
				if r.Type().Field(i).IsExported() {
					walk(r.Field(i))
				}
			}
		default:
			n += 8
		}
	}
	walk(reflect.ValueOf(v))
	return n
}

var environment = sync.OnceValue(newEnvironment)

// newEnvironment builds gonja's environment with every expanding function bounded and every loading tag
// refused. It is built once and never changed afterwards; the state of a rendering lives in its guard.
func newEnvironment() *exec.Environment {
	ctx := exec.EmptyContext()
	for _, name := range []string{"cycler", "dict", "joiner", "namespace"} {
		if v, ok := builtins.GlobalFunctions.Get(name); ok {
			ctx.Set(name, v)
		}
	}
	ctx.Set("range", rangeFunc)
	ctx.Set(opFuncName, opFunc)
	ctx.Set(outFuncName, outFunc)
	// Julep's constants.
	ctx.Set("NEWLINE", "\n")
	ctx.Set("true", true)
	ctx.Set("false", false)
	ctx.Set("null", nil)

	return &exec.Environment{
		Context:           ctx,
		Filters:           guardedFilters(),
		Tests:             builtins.Tests,
		ControlStructures: guardedControlStructures(),
		Methods:           guardedMethods(),
	}
}

func rangeFunc(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardOf(e)
	if err := g.tick(); err != nil {
		return exec.AsValue(err)
	}
	var start, stop, step int
	step = 1
	for _, a := range va.Args {
		if !a.IsInteger() {
			return exec.AsValue(exec.ErrInvalidCall(errors.New("range takes integers")))
		}
	}
	switch len(va.Args) {
	case 1:
		stop = va.Args[0].Integer()
	case 2:
		start, stop = va.Args[0].Integer(), va.Args[1].Integer()
	case 3:
		start, stop, step = va.Args[0].Integer(), va.Args[1].Integer(), va.Args[2].Integer()
	default:
		return exec.AsValue(exec.ErrInvalidCall(errors.New("range takes [start, ]stop[, step]")))
	}
	if step == 0 {
		return exec.AsValue(exec.ErrInvalidCall(errors.New("range step cannot be 0")))
	}
	n := 0
	if step > 0 && stop > start {
		n = (stop - start + step - 1) / step
	} else if step < 0 && stop < start {
		n = (start - stop - step - 1) / -step
	}
	if n > g.limits.MaxItems {
		return exec.AsValue(&limitError{fmt.Sprintf("range(...) would have %d items, more than the %d allowed", n, g.limits.MaxItems)})
	}
	out := make([]any, n)
	for i := range out {
		out[i] = start + i*step
	}
	return exec.AsValue(out)
}

const (
	opFuncName  = "__contrail_op"
	outFuncName = "__contrail_out"
)

// opFunc evaluates one binary operator that can divide by zero or build a large value, after checking it.
// Its arguments are the operator's token type and text, then the two operands.
func opFunc(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardOf(e)
	if err := g.tick(); err != nil {
		return exec.AsValue(err)
	}
	if len(va.Args) != 5 {
		return exec.AsValue(errors.New("internal: bad operator call"))
	}
	typ, val, src, l, r := tokens.Type(va.Args[0].Integer()), va.Args[1].String(), va.Args[2].String(), va.Args[3], va.Args[4]
	switch typ {
	case tokens.Division, tokens.FloorDivision, tokens.Modulo:
		if r.IsNumber() && r.Float() == 0 || r.IsNil() {
			return exec.AsValue(&zeroDivisionError{expr: src})
		}
	case tokens.Multiply:
		if l.IsString() && r.IsNumber() && l.Len()*max(r.Integer(), 0) > g.limits.MaxBytes {
			return exec.AsValue(&limitError{fmt.Sprintf("a string repeated %d times would be more than %d bytes", r.Integer(), g.limits.MaxBytes)})
		}
	case tokens.Addition, tokens.Tilde:
		if l.IsList() && r.IsList() && l.Len()+r.Len() > g.limits.MaxItems {
			return exec.AsValue(&limitError{fmt.Sprintf("a list would have more than %d items", g.limits.MaxItems)})
		}
		if sizeOf(l.Interface(), g.limits.MaxBytes)+sizeOf(r.Interface(), g.limits.MaxBytes) > g.limits.MaxBytes {
			return exec.AsValue(&limitError{fmt.Sprintf("a value would be more than %d bytes", g.limits.MaxBytes)})
		}
	}
	// gonja computes the operator itself, on the two values bound to names.
	sub := *e
	env := *e.Environment
	env.Context = e.Environment.Context.Inherit()
	env.Context.Set("__l", l.Interface())
	env.Context.Set("__r", r.Interface())
	sub.Environment = &env
	return sub.Eval(&nodes.BinaryExpression{
		Left:     &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: "__l"}},
		Right:    &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: "__r"}},
		Operator: &nodes.BinOperator{Token: &tokens.Token{Type: typ, Val: val}},
	})
}

// outFunc checks a value about to be printed: printing is where shared structure becomes text.
func outFunc(e *exec.Evaluator, va *exec.VarArgs) *exec.Value {
	g := guardOf(e)
	if err := g.tick(); err != nil {
		return exec.AsValue(err)
	}
	if len(va.Args) != 1 {
		return exec.AsValue(errors.New("internal: bad output call"))
	}
	if err := g.checkSize("a printed value", va.Args[0].Interface()); err != nil {
		return exec.AsValue(err)
	}
	return va.Args[0]
}

func guardedFilters() *exec.FilterSet {
	// The random filter is left out on purpose: a task's step must render the same text when replayed.
	names := []string{"abs", "attr", "batch", "capitalize", "center", "default", "d", "dictsort", "e", "escape",
		"filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "join", "items",
		"last", "length", "count", "list", "lower", "map", "max", "min", "pprint", "rejectattr", "reject",
		"replace", "reverse", "round", "safe", "selectattr", "select", "slice", "sort", "string", "striptags",
		"sum", "title", "tojson", "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount",
		"wordwrap", "xmlattr"}
	m := make(map[string]exec.FilterFunction, len(names))
	for _, name := range names {
		f, ok := builtins.Filters.Get(name)
		if !ok {
			continue
		}
		m[name] = guardFilter(name, f)
	}
	m["tojson"] = guardFilter("tojson", toJSON)
	return exec.NewFilterSet(m)
}

// toJSON is jinja2's tojson: json.dumps with sorted keys, then <, >, & and ' escaped.
func toJSON(_ *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
	o := pyjson.Options{ASCII: true, SortKeys: true, HTMLSafe: true}
	if n, ok := intArg(params, 0, "indent"); ok {
		o.Indent = &n
	}
	s, err := pyjson.Dumps(Normalize(in.ToGoSimpleType(false)), o)
	if err != nil {
		return exec.AsValue(err)
	}
	return exec.AsSafeValue(s)
}

func guardFilter(name string, f exec.FilterFunction) exec.FilterFunction {
	return func(e *exec.Evaluator, in *exec.Value, params *exec.VarArgs) *exec.Value {
		g := guardOf(e)
		if err := g.tick(); err != nil {
			return exec.AsValue(err)
		}
		if err := checkFilterArgs(g, name, in, params); err != nil {
			return exec.AsValue(err)
		}
		out := f(e, in, params)
		if out != nil && !out.IsError() {
			if err := g.checkSize(fmt.Sprintf("the result of the %s filter", name), out.Interface()); err != nil {
				return exec.AsValue(err)
			}
		}
		return out
	}
}

func intArg(params *exec.VarArgs, i int, kw string) (int, bool) {
	if params == nil {
		return 0, false
	}
	if v, ok := params.KwArgs[kw]; ok && v.IsInteger() {
		return v.Integer(), true
	}
	if i < len(params.Args) && params.Args[i].IsInteger() {
		return params.Args[i].Integer(), true
	}
	return 0, false
}

func stringArg(params *exec.VarArgs, i int, kw string) (string, bool) {
	if params == nil {
		return "", false
	}
	if v, ok := params.KwArgs[kw]; ok {
		return v.String(), true
	}
	if i < len(params.Args) {
		return params.Args[i].String(), true
	}
	return "", false
}

var formatWidthRE = regexp.MustCompile(`%[-+# 0]*(\d+|\*)?(?:\.(\d+|\*))?`)

// checkFilterArgs refuses the calls that would build more than the limits before they build it.
func checkFilterArgs(g *guard, name string, in *exec.Value, params *exec.VarArgs) error {
	limit := g.limits.MaxBytes
	tooBig := func() error {
		return &limitError{fmt.Sprintf("the result of the %s filter would be more than %d bytes", name, limit)}
	}
	switch name {
	case "center":
		if w, ok := intArg(params, 0, "width"); ok && w > limit {
			return tooBig()
		}
	case "indent":
		if w, ok := intArg(params, 0, "width"); ok && w > 0 && (strings.Count(in.String(), "\n")+1)*w > limit {
			return tooBig()
		}
	case "batch":
		if n, ok := intArg(params, 0, "linecount"); ok && n > g.limits.MaxItems {
			return &limitError{fmt.Sprintf("batch(%d) would make lists of more than %d items", n, g.limits.MaxItems)}
		}
	case "format":
		total := 0
		for _, m := range formatWidthRE.FindAllStringSubmatch(in.String(), -1) {
			for _, d := range m[1:] {
				if d == "*" {
					return &limitError{"the format filter does not take * widths here"}
				}
				n, _ := strconv.Atoi(d)
				total += n
			}
		}
		if total > limit {
			return tooBig()
		}
	case "replace":
		old, _ := stringArg(params, 0, "old")
		repl, _ := stringArg(params, 1, "new")
		if replacedSize(in.String(), old, repl) > limit {
			return tooBig()
		}
	case "join":
		sep, _ := stringArg(params, 0, "d")
		if in.IsList() && sizeOf(in.Interface(), limit)+in.Len()*len(sep) > limit {
			return tooBig()
		}
	}
	return nil
}

func replacedSize(s, old, repl string) int {
	n := strings.Count(s, old)
	return len(s) + n*(len(repl)-len(old))
}

// guardedMethods bounds the string methods that take a width or build a new string from pieces.
func guardedMethods() exec.Methods {
	m := builtins.Methods
	limit := DefaultLimits().MaxBytes
	str := map[string]exec.Method[string]{}
	for _, name := range []string{"capitalize", "capwords", "casefold", "center", "count", "encode", "endswith",
		"expandtabs", "find", "format", "format_map", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit",
		"islower", "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip",
		"partition", "removeprefix", "removesuffix", "replace", "rfind", "rjust", "rpartition", "rsplit", "rstrip",
		"split", "splitlines", "startswith", "strip", "swapcase", "title", "upper", "zfill"} {
		f, ok := m.Str.Get(name)
		if !ok {
			continue
		}
		name := name
		str[name] = func(self string, selfValue *exec.Value, args *exec.VarArgs) (any, error) {
			var err error
			switch name {
			case "center", "ljust", "rjust", "zfill":
				if w, ok := intArg(args, 0, "width"); ok && w > limit {
					err = &limitError{fmt.Sprintf("%s(%d) would be more than %d bytes", name, w, limit)}
				}
			case "expandtabs":
				if w, ok := intArg(args, 0, "tabsize"); ok && w*strings.Count(self, "\t") > limit {
					err = &limitError{fmt.Sprintf("expandtabs(%d) would be more than %d bytes", w, limit)}
				}
			case "replace":
				old, _ := stringArg(args, 0, "old")
				repl, _ := stringArg(args, 1, "new")
				if replacedSize(self, old, repl) > limit {
					err = &limitError{fmt.Sprintf("replace would be more than %d bytes", limit)}
				}
			case "join":
				if args != nil && len(args.Args) > 0 && sizeOf(args.Args[0].Interface(), limit)+args.Args[0].Len()*len(self) > limit {
					err = &limitError{fmt.Sprintf("join would be more than %d bytes", limit)}
				}
			}
			if err != nil {
				return nil, err
			}
			return f(self, selfValue, args)
		}
	}
	m.Str = exec.NewMethodSet(str)
	return m
}

// refusedTags read other templates or define callables that can recurse without bound.
var refusedTags = []string{"block", "call", "extends", "from", "import", "include", "macro"}

func guardedControlStructures() *exec.ControlStructureSet {
	all := map[string]parser.ControlStructureParser{}
	for _, name := range []string{"autoescape", "break", "continue", "do", "for", "if", "raw"} {
		p, ok := builtins.ControlStructures.Get(name)
		if !ok {
			continue
		}
		all[name] = guardedParser(p)
	}
	all["set"] = guardedParser(setParser)
	for _, name := range refusedTags {
		name := name
		all[name] = func(p *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
			return nil, p.Error(fmt.Sprintf("the %q tag is not supported: Contrail templates cannot include, import or extend other templates, nor define macros", name), p.Current())
		}
	}
	return exec.NewControlStructureSet(all)
}

func guardedParser(p parser.ControlStructureParser) parser.ControlStructureParser {
	return func(pp *parser.Parser, args *parser.Parser) (nodes.ControlStructure, error) {
		cs, err := p(pp, args)
		if err != nil {
			return nil, err
		}
		inner, ok := cs.(exec.ControlStructure)
		if !ok {
			return cs, nil
		}
		return &Guarded{Inner: inner}, nil
	}
}

// Guarded counts each execution of a tag against the rendering's bounds.
type Guarded struct {
	Inner exec.ControlStructure
}

// Position implements nodes.Node.
func (c *Guarded) Position() *tokens.Token { return c.Inner.Position() }

func (c *Guarded) String() string { return c.Inner.String() }

// Execute implements exec.ControlStructure.
func (c *Guarded) Execute(r *exec.Renderer, tag *nodes.ControlStructureBlock) error {
	if err := guardOf(r.Evaluator()).tick(); err != nil {
		return err
	}
	return c.Inner.Execute(r, tag)
}

// guardTemplate rewrites the parsed template so that the operators that can divide by zero or build large
// values call opFunc, and every printed expression passes through outFunc. gonja has no hook for either; the
// AST's exported fields are its public surface.
func guardTemplate(root *nodes.Template) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the template could not be prepared: %v", r)
		}
	}()
	seen := map[uintptr]bool{}
	rewrite(reflect.ValueOf(root), seen)
	return nil
}

var (
	expressionType = reflect.TypeFor[nodes.Expression]()
	tokenPtrType   = reflect.TypeFor[*tokens.Token]()
)

func guardedOperator(t tokens.Type) bool {
	switch t {
	case tokens.Division, tokens.FloorDivision, tokens.Modulo, tokens.Multiply, tokens.Addition, tokens.Tilde:
		return true
	}
	return false
}

func rewrite(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || v.Type() == tokenPtrType {
			return
		}
		if seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		rewrite(v.Elem(), seen)
		if out, ok := v.Interface().(*nodes.Output); ok {
			if out.Expression != nil {
				out.Expression = call(outFuncName, out.Start, out.Expression)
			}
			if out.Alternative != nil {
				out.Alternative = call(outFuncName, out.Start, out.Alternative)
			}
		}
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		be, ok := v.Interface().(*nodes.BinaryExpression)
		guarded := ok && v.CanSet() && v.Type() == expressionType && be.Operator != nil && be.Operator.Token != nil &&
			guardedOperator(be.Operator.Token.Type)
		var src string
		if guarded {
			src = be.String() // before its operands are rewritten, for error messages
		}
		rewrite(v.Elem(), seen)
		if guarded {
			tok := be.Operator.Token
			v.Set(reflect.ValueOf(call(opFuncName, tok,
				&nodes.Integer{Location: tok, Val: int(tok.Type)},
				&nodes.String{Location: tok, Val: tok.Val},
				&nodes.String{Location: tok, Val: src},
				be.Left, be.Right)))
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				rewrite(v.Field(i), seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			rewrite(v.Index(i), seen)
		}
	case reflect.Map:
		if !v.CanSet() {
			return
		}
		it := v.MapRange()
		for it.Next() {
			tmp := reflect.New(v.Type().Elem()).Elem()
			tmp.Set(it.Value())
			rewrite(tmp, seen)
			v.SetMapIndex(it.Key(), tmp)
		}
	}
}

func call(name string, at *tokens.Token, args ...nodes.Expression) *nodes.Call {
	return &nodes.Call{
		Location: at,
		Func:     &nodes.Name{Name: &tokens.Token{Type: tokens.Name, Val: name, Line: at.Line, Col: at.Col}},
		Args:     args,
		Kwargs:   map[string]nodes.Expression{},
	}
}
