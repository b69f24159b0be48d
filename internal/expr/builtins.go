package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"

	smath "go.starlark.net/lib/math"
	"go.starlark.net/starlark"
	"go.starlark.net/starlarkstruct"
	"go.starlark.net/syntax"

	"github.com/contrailhq/contrail/internal/pyjson"
)

const (
	meterKey = "contrail.meter"
	seedKey  = "contrail.seed"
	randKey  = "contrail.rand"
)

// meter is an evaluation's budget of allocations.
type meter struct {
	limits Limits
	used   int64
}

func meterOf(th *starlark.Thread) *meter {
	if m, ok := th.Local(meterKey).(*meter); ok {
		return m
	}
	return &meter{limits: DefaultLimits()}
}

// charge counts n elements or bytes about to be built.
func charge(th *starlark.Thread, n int) error {
	m := meterOf(th)
	m.used += int64(n)
	if m.used > m.limits.MaxAlloc {
		return fmt.Errorf("the expression builds too much (more than %d elements and bytes)", m.limits.MaxAlloc)
	}
	return nil
}

// checkPrint refuses to print a value larger than the limit (before printing builds it).
func checkPrint(th *starlark.Thread, v starlark.Value) error {
	limit := meterOf(th).limits.MaxBytes
	n := sizeOf(v, limit)
	if n > limit {
		return fmt.Errorf("the text would be more than %d bytes", limit)
	}
	return charge(th, n)
}

func rng(th *starlark.Thread) *rand.Rand {
	if r, ok := th.Local(randKey).(*rand.Rand); ok {
		return r
	}
	seed, _ := th.Local(seedKey).(uint64)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	th.SetLocal(randKey, r)
	return r
}

// builtins are the names every expression sees besides the context names; built once, never changed.
var builtins = sync.OnceValue(func() starlark.StringDict {
	b := starlark.StringDict{
		"__attr__": starlark.NewBuiltin("__attr__", attrBuiltin),
		"__op__":   starlark.NewBuiltin("__op__", opBuiltin),
		"__fmt__":  starlark.NewBuiltin("__fmt__", fmtBuiltin),
		"NEWLINE":  starlark.String("\n"),
		"true":     starlark.True,
		"false":    starlark.False,
		"null":     starlark.None,
		"sum":      starlark.NewBuiltin("sum", sumBuiltin),
		"round":    starlark.NewBuiltin("round", roundBuiltin),
		"pow":      starlark.NewBuiltin("pow", powBuiltin),
		"map":      starlark.NewBuiltin("map", mapBuiltin),
		"filter":   starlark.NewBuiltin("filter", filterBuiltin),
		"reduce":   starlark.NewBuiltin("reduce", reduceBuiltin),
		"range":    starlark.NewBuiltin("range", rangeBuiltin),
		"randint":  starlark.NewBuiltin("randint", randintBuiltin),
		"hasattr":  starlark.NewBuiltin("hasattr", hasattrBuiltin),
		"getattr":  starlark.NewBuiltin("getattr", getattrBuiltin),
		"str":      starlark.NewBuiltin("str", printing("str")),
		"repr":     starlark.NewBuiltin("repr", printing("repr")),
		"math":     smath.Module,
		"json": starlarkstruct.FromStringDict(starlark.String("json"), starlark.StringDict{
			"dumps": starlark.NewBuiltin("json.dumps", jsonDumps),
			"loads": starlark.NewBuiltin("json.loads", jsonLoads),
		}),
		"load_json": starlark.NewBuiltin("load_json", jsonLoads),
		"dump_json": starlark.NewBuiltin("dump_json", jsonDumps),
		"random": starlarkstruct.FromStringDict(starlark.String("random"), starlark.StringDict{
			"random":  starlark.NewBuiltin("random.random", randomBuiltin),
			"randint": starlark.NewBuiltin("random.randint", randintBuiltin),
			"uniform": starlark.NewBuiltin("random.uniform", uniformBuiltin),
			"choice":  starlark.NewBuiltin("random.choice", choiceBuiltin),
			"sample":  starlark.NewBuiltin("random.sample", sampleBuiltin),
			"shuffle": starlark.NewBuiltin("random.shuffle", shuffleBuiltin),
		}),
	}
	// The builtins that build a sequence from an iterable are charged for its length.
	for _, name := range []string{"list", "tuple", "sorted", "set", "dict", "enumerate", "zip", "reversed", "min", "max", "any", "all"} {
		inner := starlark.Universe[name].(*starlark.Builtin)
		b[name] = starlark.NewBuiltin(name, charged(inner))
	}
	b["print"] = starlark.NewBuiltin("print", func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
		return nil, errors.New("print() is not available in expressions; use a log step")
	})
	return b
})

func predeclaredNames(extra []string) map[string]bool {
	known := map[string]bool{}
	for k := range builtins() {
		known[k] = true
	}
	for _, k := range contextNames {
		known[k] = true
	}
	for _, k := range extra {
		known[k] = true
	}
	return known
}

// predeclare binds the names an expression uses (converting only the parts of the environment it reads).
func predeclare(env *Env, used []string) (starlark.StringDict, error) {
	d := make(starlark.StringDict, len(used))
	var inputs, outputs *lazyList
	lists := func() {
		if inputs == nil {
			inputs, outputs = newLazyList(env.Inputs), newLazyList(env.Outputs)
		}
	}
	for _, name := range used {
		if v, ok := env.Vars[name]; ok {
			sv, err := ToStarlark(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			d[name] = sv
			continue
		}
		switch name {
		case "_":
			in, err := ToStarlark(env.Input)
			if err != nil {
				return nil, fmt.Errorf("_: %w", err)
			}
			d[name] = in
		case "state":
			st, err := ToStarlark(orEmptyMap(env.State))
			if err != nil {
				return nil, fmt.Errorf("state: %w", err)
			}
			d[name] = st
		case "inputs":
			lists()
			d[name] = inputs
		case "outputs":
			lists()
			d[name] = outputs
		case "steps":
			lists()
			d[name] = &stepsView{inputs: inputs, outputs: outputs, labels: env.Labels}
		default:
			if b, ok := builtins()[name]; ok {
				d[name] = b
			} else {
				// A name compiled as extra but not given: None, as an unset variable.
				d[name] = starlark.None
			}
		}
	}
	return d, nil
}

func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func lengthOf(v starlark.Value) (int, bool) {
	if s, ok := v.(starlark.Sequence); ok {
		return s.Len(), true
	}
	if d, ok := v.(*starlark.Dict); ok {
		return d.Len(), true
	}
	if d, ok := v.(*starlark.Set); ok {
		return d.Len(), true
	}
	return 0, false
}

func charged(inner *starlark.Builtin) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		for _, a := range args {
			if n, ok := lengthOf(a); ok {
				if err := charge(th, n); err != nil {
					return nil, err
				}
			}
		}
		return starlark.Call(th, inner, args, kwargs)
	}
}

// printing is str() or repr() as Python writes them, after checking the size of what they would print.
func printing(name string) func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var v starlark.Value = starlark.String("")
		if err := starlark.UnpackPositionalArgs(name, args, kwargs, 0, &v); err != nil {
			return nil, err
		}
		if err := checkPrint(th, v); err != nil {
			return nil, err
		}
		if name == "repr" {
			return starlark.String(repr(v)), nil
		}
		return starlark.String(str(v)), nil
	}
}

// attrBuiltin is x.name: a dict's key first (Julep reads dicts as Box objects), then the value's own field or
// method, then the Python methods Starlark lacks.
func attrBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	x, name := args[0], string(args[1].(starlark.String))
	if m, ok := x.(starlark.Mapping); ok {
		if v, found, err := m.Get(starlark.String(name)); err == nil && found {
			return v, nil
		}
	}
	if s, ok := x.(starlark.String); ok {
		if f := stringMethod(th, s, name); f != nil {
			return f, nil
		}
	}
	if l, ok := x.(*starlark.List); ok {
		if f := listMethod(l, name); f != nil {
			return f, nil
		}
	}
	if d, ok := x.(*starlark.Dict); ok && name == "copy" {
		return starlark.NewBuiltin("copy", func(th *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if err := charge(th, d.Len()); err != nil {
				return nil, err
			}
			out := starlark.NewDict(d.Len())
			for _, it := range d.Items() {
				_ = out.SetKey(it[0], it[1])
			}
			return out, nil
		}), nil
	}
	if h, ok := x.(starlark.HasAttrs); ok {
		v, err := h.Attr(name)
		if err != nil {
			return nil, err
		}
		if v != nil {
			return v, nil
		}
	}
	if _, ok := x.(*starlark.Dict); ok {
		return nil, fmt.Errorf("dict has no key or method %q", name)
	}
	return nil, fmt.Errorf("%s has no attribute %q", x.Type(), name)
}

func hasattrBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var name string
	if err := starlark.UnpackPositionalArgs("hasattr", args, kwargs, 2, &x, &name); err != nil {
		return nil, err
	}
	_, err := attrBuiltin(th, b, starlark.Tuple{x, starlark.String(name)}, nil)
	return starlark.Bool(err == nil), nil
}

func getattrBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, dflt starlark.Value
	var name string
	if err := starlark.UnpackPositionalArgs("getattr", args, kwargs, 2, &x, &name, &dflt); err != nil {
		return nil, err
	}
	v, err := attrBuiltin(th, b, starlark.Tuple{x, starlark.String(name)}, nil)
	if err != nil && dflt != nil {
		return dflt, nil
	}
	return v, err
}

// stringMethod returns the Python string methods Starlark lacks, and bounded versions of those that build.
func stringMethod(th *starlark.Thread, s starlark.String, name string) starlark.Value {
	limit := meterOf(th).limits.MaxBytes
	width := func(args starlark.Tuple, kwargs []starlark.Tuple, fill bool) (int, string, error) {
		var w int
		f := " "
		var err error
		if fill {
			err = starlark.UnpackPositionalArgs(name, args, kwargs, 1, &w, &f)
		} else {
			err = starlark.UnpackPositionalArgs(name, args, kwargs, 1, &w)
		}
		if err != nil {
			return 0, "", err
		}
		if w > limit {
			return 0, "", fmt.Errorf("%s(%d) would be more than %d bytes", name, w, limit)
		}
		if len([]rune(f)) != 1 {
			return 0, "", fmt.Errorf("%s: the fill character must be exactly one character", name)
		}
		return w - len([]rune(string(s))), f, charge(th, w)
	}
	method := func(fn func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			return fn(args, kwargs)
		})
	}
	switch name {
	case "ljust", "rjust", "center":
		return method(func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			n, f, err := width(args, kwargs, true)
			if err != nil || n <= 0 {
				return s, err
			}
			switch name {
			case "ljust":
				return s + starlark.String(strings.Repeat(f, n)), nil
			case "rjust":
				return starlark.String(strings.Repeat(f, n)) + s, nil
			}
			w := n + len([]rune(string(s)))
			left := n/2 + (n & w & 1) // CPython's rule for where the odd fill goes
			return starlark.String(strings.Repeat(f, left)) + s + starlark.String(strings.Repeat(f, n-left)), nil
		})
	case "zfill":
		return method(func(args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			n, _, err := width(args, kwargs, false)
			if err != nil || n <= 0 {
				return s, err
			}
			str := string(s)
			sign := ""
			if strings.HasPrefix(str, "-") || strings.HasPrefix(str, "+") {
				sign, str = str[:1], str[1:]
			}
			return starlark.String(sign + strings.Repeat("0", n) + str), nil
		})
	case "casefold":
		return method(func(starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return starlark.String(strings.ToLower(string(s))), nil
		})
	case "swapcase":
		return method(func(starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			r := []rune(string(s))
			for i, c := range r {
				if u := strings.ToUpper(string(c)); u != string(c) {
					r[i] = []rune(u)[0]
				} else {
					r[i] = []rune(strings.ToLower(string(c)))[0]
				}
			}
			return starlark.String(string(r)), nil
		})
	case "isnumeric", "isdecimal":
		return method(func(starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			if s == "" {
				return starlark.False, nil
			}
			for _, c := range string(s) {
				if c < '0' || c > '9' {
					return starlark.False, nil
				}
			}
			return starlark.True, nil
		})
	case "join", "replace", "format":
		inner, err := s.Attr(name)
		if err != nil || inner == nil {
			return nil
		}
		return starlark.NewBuiltin(name, func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			size := len(s)
			switch name {
			case "join":
				if len(args) == 1 {
					n, _ := lengthOf(args[0])
					size = sizeOf(args[0], limit) + n*len(s)
				}
			case "replace":
				if len(args) >= 2 {
					old, _ := starlark.AsString(args[0])
					repl, _ := starlark.AsString(args[1])
					size = len(s) + strings.Count(string(s), old)*(len(repl)-len(old))
				}
			case "format":
				for _, a := range args {
					size += sizeOf(a, limit)
				}
				for _, kv := range kwargs {
					size += sizeOf(kv[1], limit)
				}
			}
			if size > limit {
				return nil, fmt.Errorf("%s would build more than %d bytes", name, limit)
			}
			if err := charge(th, size); err != nil {
				return nil, err
			}
			return starlark.Call(th, inner, args, kwargs)
		})
	}
	return nil
}

// listMethod returns the Python list methods Starlark lacks.
func listMethod(l *starlark.List, name string) starlark.Value {
	switch name {
	case "count":
		return starlark.NewBuiltin("count", func(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			var x starlark.Value
			if err := starlark.UnpackPositionalArgs("count", args, kwargs, 1, &x); err != nil {
				return nil, err
			}
			n := 0
			for i := 0; i < l.Len(); i++ {
				if eq, err := starlark.Equal(l.Index(i), x); err == nil && eq {
					n++
				}
			}
			return starlark.MakeInt(n), nil
		})
	case "copy":
		return starlark.NewBuiltin("copy", func(th *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if err := charge(th, l.Len()); err != nil {
				return nil, err
			}
			elems := make([]starlark.Value, l.Len())
			for i := range elems {
				elems[i] = l.Index(i)
			}
			return starlark.NewList(elems), nil
		})
	case "reverse":
		return starlark.NewBuiltin("reverse", func(_ *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			n := l.Len()
			for i := 0; i < n/2; i++ {
				a, b := l.Index(i), l.Index(n-1-i)
				if err := l.SetIndex(i, b); err != nil {
					return nil, err
				}
				if err := l.SetIndex(n-1-i, a); err != nil {
					return nil, err
				}
			}
			return starlark.None, nil
		})
	}
	return nil
}

// opBuiltin is x*y, x+y and x%y, charged for the strings and sequences they build.
func opBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	op, x, y := string(args[0].(starlark.String)), args[1], args[2]
	lim := meterOf(th).limits
	var tok syntax.Token
	switch op {
	case "*":
		tok = syntax.STAR
		seq, n := x, y
		if _, ok := y.(starlark.Int); !ok {
			seq, n = y, x
		}
		if k, ok := n.(starlark.Int); ok {
			if l, ok := lengthOf(seq); ok || isStringish(seq) {
				if isStringish(seq) {
					l = len(stringOf(seq))
				}
				times, _ := k.Int64()
				if times > 0 {
					if int64(l)*times > int64(lim.MaxBytes) {
						return nil, fmt.Errorf("repeating a %s %d times would build more than %d elements or bytes", seq.Type(), times, lim.MaxBytes)
					}
					if err := charge(th, int(int64(l)*times)); err != nil {
						return nil, err
					}
				}
			}
		}
	case "+":
		tok = syntax.PLUS
		if isStringish(x) && isStringish(y) {
			n := len(stringOf(x)) + len(stringOf(y))
			if n > lim.MaxBytes {
				return nil, fmt.Errorf("the string would be more than %d bytes", lim.MaxBytes)
			}
			if err := charge(th, n); err != nil {
				return nil, err
			}
		} else if a, ok := lengthOf(x); ok {
			if b, ok := lengthOf(y); ok {
				if err := charge(th, a+b); err != nil {
					return nil, err
				}
			}
		}
	case "%":
		tok = syntax.PERCENT
		if isStringish(x) {
			if err := checkPrint(th, y); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("internal: operator %s", op)
	}
	return starlark.Binary(tok, x, y)
}

func isStringish(v starlark.Value) bool {
	switch v.(type) {
	case starlark.String, starlark.Bytes:
		return true
	}
	return false
}

func stringOf(v starlark.Value) string {
	switch x := v.(type) {
	case starlark.String:
		return string(x)
	case starlark.Bytes:
		return string(x)
	}
	return ""
}

// fmtBuiltin formats one replacement field of an f-string: __fmt__(value, conversion, spec).
func fmtBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	v, conv, spec := args[0], string(args[1].(starlark.String)), string(args[2].(starlark.String))
	if err := checkPrint(th, v); err != nil {
		return nil, err
	}
	switch conv {
	case "r", "a":
		v = starlark.String(repr(v))
	case "s":
		v = starlark.String(str(v))
	case "":
	default:
		return nil, fmt.Errorf("unknown conversion !%s", conv)
	}
	s, err := formatValue(v, spec, meterOf(th).limits.MaxBytes)
	if err != nil {
		return nil, err
	}
	return starlark.String(s), nil
}

func sumBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var it starlark.Iterable
	var start starlark.Value = starlark.MakeInt(0)
	if err := starlark.UnpackArgs("sum", args, kwargs, "iterable", &it, "start?", &start); err != nil {
		return nil, err
	}
	acc := start
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		var err error
		if acc, err = opBuiltin(th, nil, starlark.Tuple{starlark.String("+"), acc, x}, nil); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

// roundBuiltin is Python's round: half to even; an int without ndigits, a float with them.
func roundBuiltin(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x starlark.Value
	var nd starlark.Value = starlark.None
	if err := starlark.UnpackArgs("round", args, kwargs, "number", &x, "ndigits?", &nd); err != nil {
		return nil, err
	}
	if i, ok := x.(starlark.Int); ok {
		if nd == starlark.None {
			return i, nil
		}
		n, err := starlark.AsInt32(nd)
		if err != nil {
			return nil, err
		}
		if n >= 0 {
			return i, nil
		}
		p := math.Pow10(int(-n))
		f, _ := starlark.AsFloat(i)
		return starlark.NumberToInt(starlark.Float(math.RoundToEven(f/p) * p))
	}
	f, ok := starlark.AsFloat(x)
	if !ok {
		return nil, fmt.Errorf("round: got %s, want a number", x.Type())
	}
	if nd == starlark.None {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("round: cannot convert %s to an integer", pyFloatName(f))
		}
		return starlark.NumberToInt(starlark.Float(math.RoundToEven(f)))
	}
	n, err := starlark.AsInt32(nd)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		p := math.Pow10(-n)
		return starlark.Float(math.RoundToEven(f/p) * p), nil
	}
	// FormatFloat rounds the exact binary value, as Python's round does.
	r, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', min(n, 300), 64), 64)
	if err != nil {
		return nil, err
	}
	return starlark.Float(r), nil
}

func powBuiltin(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs("pow", args, kwargs, 2, &x, &y); err != nil {
		return nil, err
	}
	xi, xInt := x.(starlark.Int)
	yi, yInt := y.(starlark.Int)
	if xInt && yInt && yi.Sign() >= 0 {
		e, ok := yi.Int64()
		if !ok || e > 10_000 {
			return nil, errors.New("pow: exponent too large")
		}
		return starlark.MakeBigInt(new(big.Int).Exp(xi.BigInt(), big.NewInt(e), nil)), nil
	}
	xf, ok1 := starlark.AsFloat(x)
	yf, ok2 := starlark.AsFloat(y)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("pow: want numbers, got %s and %s", x.Type(), y.Type())
	}
	return starlark.Float(math.Pow(xf, yf)), nil
}

func mapBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var it starlark.Iterable
	if err := starlark.UnpackPositionalArgs("map", args, kwargs, 2, &fn, &it); err != nil {
		return nil, err
	}
	var out []starlark.Value
	err := applyEach(th, fn, it, func(_, y starlark.Value) { out = append(out, y) })
	return starlark.NewList(out), err
}

func filterBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Value
	var it starlark.Iterable
	if err := starlark.UnpackPositionalArgs("filter", args, kwargs, 2, &fn, &it); err != nil {
		return nil, err
	}
	var out []starlark.Value
	err := applyEach(th, fn, it, func(x, y starlark.Value) {
		if y.Truth() {
			out = append(out, x)
		}
	})
	return starlark.NewList(out), err
}

// applyEach calls fn on each item of it (None: the item itself), charging one element per item.
func applyEach(th *starlark.Thread, fn starlark.Value, it starlark.Iterable, visit func(x, y starlark.Value)) error {
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		if err := charge(th, 1); err != nil {
			return err
		}
		y := x
		if fn != starlark.None {
			var err error
			if y, err = starlark.Call(th, fn, starlark.Tuple{x}, nil); err != nil {
				return err
			}
		}
		visit(x, y)
	}
	return nil
}

func reduceBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var fn starlark.Callable
	var it starlark.Iterable
	var acc starlark.Value
	if err := starlark.UnpackPositionalArgs("reduce", args, kwargs, 2, &fn, &it, &acc); err != nil {
		return nil, err
	}
	iter := it.Iterate()
	defer iter.Done()
	var x starlark.Value
	for iter.Next(&x) {
		if acc == nil {
			acc = x
			continue
		}
		var err error
		if acc, err = starlark.Call(th, fn, starlark.Tuple{acc, x}, nil); err != nil {
			return nil, err
		}
	}
	if acc == nil {
		return nil, errors.New("reduce() of an empty iterable with no initial value")
	}
	return acc, nil
}

// rangeBuiltin is range() with at most MaxItems items, as Julep's safe_range.
func rangeBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	r, err := starlark.Call(th, starlark.Universe["range"], args, kwargs)
	if err != nil {
		return nil, err
	}
	if n, ok := lengthOf(r); ok && n > meterOf(th).limits.MaxItems {
		return nil, fmt.Errorf("range() of %d items is more than the %d allowed", n, meterOf(th).limits.MaxItems)
	}
	return r, nil
}

// randintBuiltin is randint(n) in [0, n) (seed 004's `randint(len(...))` indexes a list) and randint(a, b) in
// [a, b] as Python's random.randint.
func randintBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var lo, hi int64
	var hiV starlark.Value
	var loV starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &loV, &hiV); err != nil {
		return nil, err
	}
	l, ok := loV.(starlark.Int)
	if !ok {
		return nil, fmt.Errorf("%s: want an int, got %s", b.Name(), loV.Type())
	}
	lo, _ = l.Int64()
	if hiV == nil {
		if b.Name() == "random.randint" {
			return nil, errors.New("random.randint takes two arguments: a and b")
		}
		lo, hi = 0, lo-1
	} else {
		h, ok := hiV.(starlark.Int)
		if !ok {
			return nil, fmt.Errorf("%s: want an int, got %s", b.Name(), hiV.Type())
		}
		hi, _ = h.Int64()
	}
	if hi < lo {
		return nil, fmt.Errorf("%s: empty range [%d, %d]", b.Name(), lo, hi)
	}
	return starlark.MakeInt64(lo + rng(th).Int64N(hi-lo+1)), nil
}

func randomBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
		return nil, err
	}
	return starlark.Float(rng(th).Float64()), nil
}

func uniformBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var a, c starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &a, &c); err != nil {
		return nil, err
	}
	af, ok1 := starlark.AsFloat(a)
	cf, ok2 := starlark.AsFloat(c)
	if !ok1 || !ok2 {
		return nil, errors.New("random.uniform takes two numbers")
	}
	return starlark.Float(af + (cf-af)*rng(th).Float64()), nil
}

func choiceBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Indexable
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &seq); err != nil {
		return nil, err
	}
	if seq.Len() == 0 {
		return nil, errors.New("random.choice from an empty sequence")
	}
	return seq.Index(rng(th).IntN(seq.Len())), nil
}

func sampleBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var seq starlark.Indexable
	var k int
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &seq, &k); err != nil {
		return nil, err
	}
	if k < 0 || k > seq.Len() {
		return nil, errors.New("random.sample: sample larger than population or negative")
	}
	if err := charge(th, seq.Len()); err != nil {
		return nil, err
	}
	perm := rng(th).Perm(seq.Len())[:k]
	out := make([]starlark.Value, k)
	for i, p := range perm {
		out[i] = seq.Index(p)
	}
	return starlark.NewList(out), nil
}

func shuffleBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var l *starlark.List
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &l); err != nil {
		return nil, err
	}
	r := rng(th)
	for i := l.Len() - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		a, c := l.Index(i), l.Index(j)
		if err := l.SetIndex(i, c); err != nil {
			return nil, err
		}
		if err := l.SetIndex(j, a); err != nil {
			return nil, err
		}
	}
	return starlark.None, nil
}

// jsonDumps is Python's json.dumps(obj, indent=None, sort_keys=False, ensure_ascii=True, separators=None).
func jsonDumps(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var v starlark.Value
	var indent, sortKeys, ascii, separators starlark.Value = starlark.None, starlark.False, starlark.True, starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "obj", &v, "indent?", &indent, "sort_keys?", &sortKeys,
		"ensure_ascii?", &ascii, "separators?", &separators, "default?", new(starlark.Value)); err != nil {
		return nil, err
	}
	if err := checkPrint(th, v); err != nil {
		return nil, err
	}
	o := pyjson.Options{SortKeys: bool(sortKeys.Truth()), ASCII: bool(ascii.Truth())}
	switch x := indent.(type) {
	case starlark.Int:
		n, _ := x.Int64()
		if n > 64 {
			return nil, errors.New("json.dumps: indent is more than 64")
		}
		i := int(n)
		o.Indent = &i
	case starlark.String:
		if len(x) > 64 {
			return nil, errors.New("json.dumps: indent is more than 64 characters")
		}
		o.IndentString = string(x)
		if x == "" {
			zero := 0
			o.Indent = &zero
		}
	}
	if t, ok := separators.(starlark.Tuple); ok && len(t) == 2 {
		item, _ := starlark.AsString(t[0])
		key, _ := starlark.AsString(t[1])
		o.ItemSep, o.KeySep = &item, &key
	}
	budget := meterOf(th).limits.MaxItems
	g, err := toOrdered(v, &budget)
	if err != nil {
		return nil, err
	}
	s, err := pyjson.Dumps(g, o)
	if err != nil {
		return nil, err
	}
	return starlark.String(s), nil
}

// toOrdered is toGo keeping the order of dicts, for json.dumps.
func toOrdered(v starlark.Value, budget *int) (any, error) {
	if d, ok := v.(*starlark.Dict); ok {
		*budget--
		if *budget < 0 {
			return nil, errTooLarge
		}
		out := make(pyjson.Object, 0, d.Len())
		for _, it := range d.Items() {
			k, err := keyString(it[0])
			if err != nil {
				return nil, err
			}
			val, err := toOrdered(it[1], budget)
			if err != nil {
				return nil, err
			}
			out = append(out, pyjson.Member{Key: k, Value: val})
		}
		return out, nil
	}
	if l, ok := v.(starlark.Indexable); ok {
		if _, isStr := v.(starlark.String); !isStr {
			*budget--
			out := make([]any, l.Len())
			for i := range out {
				val, err := toOrdered(l.Index(i), budget)
				if err != nil {
					return nil, err
				}
				out[i] = val
			}
			return out, nil
		}
	}
	return toGo(v, budget)
}

func jsonLoads(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	if err := charge(th, len(s)); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", b.Name(), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: extra data after the JSON value", b.Name())
	}
	return ToStarlark(v)
}
