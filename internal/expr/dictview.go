package expr

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// dictMethod returns the dict methods Starlark lacks (copy) or answers differently: keys, values and items
// give views, as Python's do, which print as dict_keys([...]), are not lists (d.keys() == ['a'] is False),
// and cannot be indexed.
func dictMethod(d *starlark.Dict, name string) starlark.Value {
	switch name {
	case "copy":
		return starlark.NewBuiltin("copy", func(th *starlark.Thread, _ *starlark.Builtin, _ starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
			if err := charge(th, d.Len()); err != nil {
				return nil, err
			}
			out := starlark.NewDict(d.Len())
			for _, it := range d.Items() {
				_ = out.SetKey(it[0], it[1])
			}
			return out, nil
		})
	case "keys", "values", "items":
		return starlark.NewBuiltin(name, func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
			if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
				return nil, err
			}
			return &dictView{kind: name, d: d}, nil
		})
	}
	return nil
}

// dictView is d.keys(), d.values() or d.items().
type dictView struct {
	kind string
	d    *starlark.Dict
}

var (
	_ starlark.Iterable  = (*dictView)(nil)
	_ starlark.Sequence  = (*dictView)(nil)
	_ starlark.HasBinary = (*dictView)(nil)
)

func (v *dictView) items() []starlark.Value {
	out := make([]starlark.Value, 0, v.d.Len())
	for _, it := range v.d.Items() {
		switch v.kind {
		case "keys":
			out = append(out, it[0])
		case "values":
			out = append(out, it[1])
		default:
			out = append(out, starlark.Tuple{it[0], it[1]})
		}
	}
	return out
}

func (v *dictView) String() string {
	var b strings.Builder
	writeItems(&b, "dict_"+v.kind+"([", starlark.NewList(v.items()), 0)
	return b.String() + "])"
}
func (v *dictView) Type() string               { return "dict_" + v.kind }
func (v *dictView) Freeze()                    {}
func (v *dictView) Truth() starlark.Bool       { return v.d.Len() > 0 }
func (v *dictView) Hash() (uint32, error)      { return 0, fmt.Errorf("unhashable type: %s", v.Type()) }
func (v *dictView) Len() int                   { return v.d.Len() }
func (v *dictView) Iterate() starlark.Iterator { return starlark.NewList(v.items()).Iterate() }

// Binary answers `x in view`, with Python's equality.
func (v *dictView) Binary(op syntax.Token, x starlark.Value, side starlark.Side) (starlark.Value, error) {
	if op != syntax.IN || side != starlark.Right {
		return nil, nil
	}
	if v.kind == "keys" {
		_, found, err := v.d.Get(x)
		return starlark.Bool(found), err
	}
	for _, it := range v.items() {
		if eq, err := pyEqual(x, it, 0); err != nil || eq {
			return starlark.Bool(eq), err
		}
	}
	return starlark.False, nil
}
