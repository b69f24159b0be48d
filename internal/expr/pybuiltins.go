package expr

import (
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// pythonBuiltins are Python's builtin functions as expressions see them. Those that build a sequence from an
// iterable are charged for its length; range() is bounded as Julep's safe_range.
func pythonBuiltins() starlark.StringDict {
	b := starlark.StringDict{
		"len":        starlark.NewBuiltin("len", lenBuiltin),
		"hex":        starlark.NewBuiltin("hex", radixBuiltin("#x")),
		"oct":        starlark.NewBuiltin("oct", radixBuiltin("#o")),
		"bin":        starlark.NewBuiltin("bin", radixBuiltin("#b")),
		"sum":        starlark.NewBuiltin("sum", sumBuiltin),
		"round":      starlark.NewBuiltin("round", roundBuiltin),
		"pow":        starlark.NewBuiltin("pow", powBuiltin),
		"divmod":     starlark.NewBuiltin("divmod", divmodBuiltin),
		"isinstance": starlark.NewBuiltin("isinstance", isinstanceBuiltin),
		"map":        starlark.NewBuiltin("map", mapBuiltin),
		"filter":     starlark.NewBuiltin("filter", filterBuiltin),
		"reduce":     starlark.NewBuiltin("reduce", reduceBuiltin),
		"range":      starlark.NewBuiltin("range", rangeBuiltin),
		"hasattr":    starlark.NewBuiltin("hasattr", hasattrBuiltin),
		"getattr":    starlark.NewBuiltin("getattr", getattrBuiltin),
		"str":        starlark.NewBuiltin("str", printing("str")),
		"repr":       starlark.NewBuiltin("repr", printing("repr")),
	}
	for _, name := range []string{"list", "tuple", "sorted", "set", "dict", "enumerate", "zip", "reversed", "min", "max", "any", "all"} {
		inner := starlark.Universe[name].(*starlark.Builtin)
		b[name] = starlark.NewBuiltin(name, charged(name, inner))
	}
	return b
}

// isinstanceBuiltin is isinstance(x, T) for the types expressions know: dict, list, str, int (bool is one,
// as in Python), float, bool, tuple, set, and the datetime module's classes; T may be a tuple of them.
func isinstanceBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, t starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &t); err != nil {
		return nil, err
	}
	types := starlark.Tuple{t}
	if tup, ok := t.(starlark.Tuple); ok {
		types = tup
	}
	for _, ty := range types {
		ok, err := isInstance(x, ty)
		if err != nil || ok {
			return starlark.Bool(ok), err
		}
	}
	return starlark.False, nil
}

func isInstance(x, ty starlark.Value) (bool, error) {
	if t, ok := ty.(*typeObject); ok {
		return t.match(x), nil
	}
	if bt, ok := ty.(*starlark.Builtin); ok {
		switch bt.Name() {
		case "dict":
			_, ok := x.(*starlark.Dict)
			return ok, nil
		case "list":
			switch x.(type) {
			case *starlark.List, *lazyList:
				return true, nil
			}
			return false, nil
		case "str", "int", "float", "bool", "tuple", "set":
			t := x.Type()
			return t == bt.Name() || bt.Name() == "int" && t == "bool", nil
		}
	}
	return false, fmt.Errorf("isinstance() arg 2 must be a type or a tuple of types, not %s", ty.Type())
}

// divmodBuiltin is divmod(a, b): (a // b, a % b), floored as Python floors them.
func divmodBuiltin(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var x, y starlark.Value
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 2, &x, &y); err != nil {
		return nil, err
	}
	x, y = boolsAsInts(x, y)
	if !isNumber(x) || !isNumber(y) {
		return nil, fmt.Errorf("divmod() takes numbers, not %s and %s", x.Type(), y.Type())
	}
	q, err := starlark.Binary(syntax.SLASHSLASH, x, y)
	if err != nil {
		return nil, err
	}
	r, err := starlark.Binary(syntax.PERCENT, x, y)
	if err != nil {
		return nil, err
	}
	return starlark.Tuple{q, r}, nil
}

// charged calls a Starlark builtin that iterates its arguments, charging their lengths, with a string
// argument read as its characters, as Python iterates it.
func charged(name string, inner *starlark.Builtin) builtinFunc {
	return func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		args, err := stringsAsLists(th, name, args)
		if err != nil {
			return nil, err
		}
		if start, rest := takeKeyword(kwargs, "start"); name == "enumerate" && start != nil && len(args) == 1 {
			args, kwargs = starlark.Tuple{args[0], start}, rest
		}
		if name == "min" || name == "max" {
			var dflt starlark.Value
			if dflt, kwargs = takeKeyword(kwargs, "default"); dflt != nil && len(args) == 1 {
				if n, ok := lengthOf(args[0]); ok && n == 0 {
					return dflt, nil // min([], default=0), as Python
				}
			}
		}
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

// radixBuiltin is hex(), oct() or bin(): an int written with its prefix ('0xff', '-0b101').
func radixBuiltin(spec string) builtinFunc {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var n starlark.Int
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &n); err != nil {
			return nil, err
		}
		s, err := formatValue(n, spec, 0)
		return starlark.String(s), err
	}
}

// takeKeyword removes the keyword argument name from kwargs and returns its value (nil when absent).
func takeKeyword(kwargs []starlark.Tuple, name string) (starlark.Value, []starlark.Tuple) {
	for i, kv := range kwargs {
		if string(kv[0].(starlark.String)) == name {
			return kv[1], append(kwargs[:i:i], kwargs[i+1:]...)
		}
	}
	return nil, kwargs
}
