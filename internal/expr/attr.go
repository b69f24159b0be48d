package expr

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
)

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
