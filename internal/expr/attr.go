package expr

import (
	"errors"
	"fmt"

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
	if d, ok := x.(*starlark.Dict); ok {
		if f := dictMethod(d, name); f != nil {
			return f, nil
		}
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
	case "sort":
		return listSort(l)
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

// listSort is sort(key=None, reverse=False) in place: sorted(), written back.
func listSort(l *starlark.List) starlark.Value {
	return starlark.NewBuiltin("sort", func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if len(args) > 0 {
			return nil, errors.New("sort() takes keyword arguments only (key=, reverse=)")
		}
		sorted, err := starlark.Call(th, starlark.Universe["sorted"], starlark.Tuple{l}, kwargs)
		if err != nil {
			return nil, err
		}
		for i := 0; i < l.Len(); i++ {
			if err := l.SetIndex(i, sorted.(*starlark.List).Index(i)); err != nil {
				return nil, err
			}
		}
		return starlark.None, nil
	})
}
