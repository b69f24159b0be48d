package expr

import (
	"errors"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// Starlark indexes a string by bytes; Python by characters. These helpers make s[i], s[i:j], len(s),
// s.find() and `for c in s` count characters, so that a non-ASCII string gives Python's answers.

// runes is a string seen as its characters, for indexing and slicing (__s__(x)[i]).
type runes []rune

var _ starlark.Sliceable = runes(nil)

func (r runes) String() string        { return string(r) }
func (r runes) Type() string          { return "string" }
func (r runes) Freeze()               {}
func (r runes) Truth() starlark.Bool  { return len(r) > 0 }
func (r runes) Hash() (uint32, error) { return 0, errors.New("unhashable") }
func (r runes) Len() int              { return len(r) }
func (r runes) Index(i int) starlark.Value {
	return starlark.String(string(r[i]))
}

func (r runes) Slice(start, end, step int) starlark.Value {
	if step == 1 {
		return starlark.String(string(r[start:end]))
	}
	var b strings.Builder
	for i := start; step > 0 && i < end || step < 0 && i > end; i += step {
		b.WriteRune(r[i])
	}
	return starlark.String(b.String())
}

// subscriptable is __s__(x): a non-ASCII string as its characters, anything else as it is.
func subscriptable(_ *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if s, ok := args[0].(starlark.String); ok && !isASCII(string(s)) {
		return runes(string(s)), nil
	}
	return args[0], nil
}

// iterable is __iter__(x), the iterable of a for clause: a string as the list of its characters.
func iterable(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	if s, ok := args[0].(starlark.String); ok {
		items, err := iterate(th, s, "for")
		return starlark.NewList(items), err
	}
	return args[0], nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// lenBuiltin is len(), counting a string's characters.
func lenBuiltin(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	if len(args) == 1 && len(kwargs) == 0 {
		if s, ok := args[0].(starlark.String); ok {
			return starlark.MakeInt(utf8.RuneCountInString(string(s))), nil
		}
	}
	return starlark.Call(th, starlark.Universe["len"], args, kwargs)
}

// stringsAsLists makes a string argument the list of its characters, for the builtins that iterate their
// argument (list("ab") is ['a', 'b']). min and max do so only for a lone argument: min("b", "a") compares
// the strings.
func stringsAsLists(th *starlark.Thread, name string, args starlark.Tuple) (starlark.Tuple, error) {
	n := 1
	switch name {
	case "zip":
		n = len(args)
	case "min", "max":
		if len(args) != 1 {
			n = 0
		}
	case "dict":
		n = 0
	}
	out := args
	for i := 0; i < n && i < len(args); i++ {
		if s, ok := args[i].(starlark.String); ok {
			items, err := iterate(th, s, name)
			if err != nil {
				return nil, err
			}
			if &out[0] == &args[0] {
				out = append(starlark.Tuple(nil), args...)
			}
			out[i] = starlark.NewList(items)
		}
	}
	return out, nil
}

// findMethod is find, rfind, index and rindex of a non-ASCII string, in characters.
func findMethod(s starlark.String, name string) builtinFunc {
	return func(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		var sub string
		var start, end starlark.Value = starlark.None, starlark.None
		if err := starlark.UnpackPositionalArgs(name, args, kwargs, 1, &sub, &start, &end); err != nil {
			return nil, err
		}
		r := []rune(string(s))
		lo, hi, err := sliceBounds(len(r), start, end)
		if err != nil {
			return nil, err
		}
		hay := string(r[lo:hi])
		at := strings.Index(hay, sub)
		if name == "rfind" || name == "rindex" {
			at = strings.LastIndex(hay, sub)
		}
		if at < 0 {
			if name == "index" || name == "rindex" {
				return nil, errors.New("substring not found")
			}
			return starlark.MakeInt(-1), nil
		}
		return starlark.MakeInt(lo + utf8.RuneCountInString(hay[:at])), nil
	}
}

// sliceBounds reads optional start and end as Python's slices do (negative from the end, clamped).
func sliceBounds(n int, start, end starlark.Value) (int, int, error) {
	lo, hi := 0, n
	for _, p := range []struct {
		v   starlark.Value
		dst *int
	}{{start, &lo}, {end, &hi}} {
		if p.v == starlark.None {
			continue
		}
		i, err := starlark.AsInt32(p.v)
		if err != nil {
			return 0, 0, err
		}
		if i < 0 {
			i += n
		}
		*p.dst = max(0, min(i, n))
	}
	return lo, max(lo, hi), nil
}
