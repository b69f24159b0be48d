package expr

import (
	"errors"
	"fmt"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
)

// pyEqual is Python's ==: a bool equals the int it is (True == 1), and inputs and outputs are lists.
// Starlark would answer False to both.
func pyEqual(x, y starlark.Value, depth int) (bool, error) {
	if depth > 100 {
		return false, errors.New("the values compared are nested too deep")
	}
	x, y = boolsAsInts(x, y)
	xs, xSeq := sequenceOf(x)
	ys, ySeq := sequenceOf(y)
	if xSeq || ySeq {
		if !xSeq || !ySeq || isTuple(x) != isTuple(y) || xs.Len() != ys.Len() {
			return false, nil
		}
		for i := 0; i < xs.Len(); i++ {
			if eq, err := pyEqual(xs.Index(i), ys.Index(i), depth+1); err != nil || !eq {
				return false, err
			}
		}
		return true, nil
	}
	xd, xDict := x.(*starlark.Dict)
	yd, yDict := y.(*starlark.Dict)
	if xDict && yDict {
		if xd.Len() != yd.Len() {
			return false, nil
		}
		for _, it := range xd.Items() {
			v, found, err := yd.Get(it[0])
			if err != nil || !found {
				return false, err
			}
			if eq, err := pyEqual(it[1], v, depth+1); err != nil || !eq {
				return false, err
			}
		}
		return true, nil
	}
	return starlark.Equal(x, y)
}

// sequenceOf reads lists (the lazy ones too) and tuples.
func sequenceOf(v starlark.Value) (starlark.Indexable, bool) {
	switch x := v.(type) {
	case *starlark.List:
		return x, true
	case starlark.Tuple:
		return x, true
	case *lazyList:
		return x, true
	}
	return nil, false
}

func isTuple(v starlark.Value) bool { _, ok := v.(starlark.Tuple); return ok }

// contains is Python's `x in container`, with Python's equality for the items of a list.
func contains(th *starlark.Thread, container, x starlark.Value) (bool, error) {
	if seq, ok := sequenceOf(container); ok {
		for i := 0; i < seq.Len(); i++ {
			if eq, err := pyEqual(x, seq.Index(i), 0); err != nil || eq {
				return eq, err
			}
		}
		return false, nil
	}
	in, err := starlark.Binary(syntax.IN, x, container)
	if err != nil {
		return false, err
	}
	if in == starlark.True {
		return true, nil
	}
	// A dict or set finds True under the key 1, as Python's hashing does.
	var alt starlark.Value
	switch k := x.(type) {
	case starlark.Bool:
		alt = boolInt(k)
	case starlark.Int:
		if n, ok := k.Int64(); ok && (n == 0 || n == 1) {
			alt = starlark.Bool(n == 1)
		}
	}
	if alt == nil || isStringish(container) {
		return false, nil
	}
	in, err = starlark.Binary(syntax.IN, alt, container)
	return in == starlark.True, err
}

// identical is Python's `is`. None, True and False are singletons; lists, dicts, sets, functions and modules
// are objects with an identity. Two equal numbers, strings or tuples may or may not be the same object in
// Python, so that question is refused rather than answered.
func identical(x, y starlark.Value) (bool, error) {
	if singleton(x) || singleton(y) {
		return singleton(x) && singleton(y) && x == y, nil
	}
	if hasIdentity(x) || hasIdentity(y) {
		return hasIdentity(x) && hasIdentity(y) && x == y, nil
	}
	if x.Type() != y.Type() {
		return false, nil
	}
	if eq, err := starlark.Equal(x, y); err != nil || !eq {
		return false, err
	}
	return false, fmt.Errorf("`is` asks whether two values are one object, which Python does not say for two equal %ss; use == to compare them", x.Type())
}

func singleton(v starlark.Value) bool {
	switch v.(type) {
	case starlark.NoneType, starlark.Bool:
		return true
	}
	return false
}

// hasIdentity reports a value held by pointer, for which == on the interface is identity.
func hasIdentity(v starlark.Value) bool {
	switch v.(type) {
	case *starlark.List, *starlark.Dict, *starlark.Set, *starlark.Function, *starlark.Builtin,
		*lazyList, *stepsView, *module, *typeObject, *pyTime, *pyDelta, *pyTZ, *reMatch, *namedTuple, *dictView:
		return true
	}
	return false
}

// unpackBuiltin builds a display with unpacking: __unpack__("list"|"tuple"|"set", parts...) concatenates
// iterables; __unpack__("dict", parts...) merges mappings in order.
func unpackBuiltin(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, _ []starlark.Tuple) (starlark.Value, error) {
	kind := string(args[0].(starlark.String))
	if kind == "dict" {
		return mergeDicts(th, args[1:])
	}
	var elems []starlark.Value
	for _, part := range args[1:] {
		items, err := iterate(th, part, "*")
		if err != nil {
			return nil, err
		}
		elems = append(elems, items...)
	}
	switch kind {
	case "list":
		return starlark.NewList(elems), nil
	case "tuple":
		return starlark.Tuple(elems), nil
	}
	s := starlark.NewSet(len(elems))
	for _, e := range elems {
		if err := s.Insert(e); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func mergeDicts(th *starlark.Thread, parts starlark.Tuple) (starlark.Value, error) {
	out := starlark.NewDict(0)
	for _, part := range parts {
		d, ok := part.(*starlark.Dict)
		if !ok {
			return nil, fmt.Errorf("** takes a dict, not a %s", part.Type())
		}
		if err := charge(th, d.Len()); err != nil {
			return nil, err
		}
		for _, it := range d.Items() {
			if err := out.SetKey(it[0], it[1]); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// iterate lists the items of an iterable (a string's characters too, as Python iterates them), charged.
func iterate(th *starlark.Thread, v starlark.Value, what string) ([]starlark.Value, error) {
	if s, ok := v.(starlark.String); ok {
		var out []starlark.Value
		for _, r := range string(s) {
			out = append(out, starlark.String(string(r)))
		}
		return out, charge(th, len(out))
	}
	it, ok := v.(starlark.Iterable)
	if !ok {
		return nil, fmt.Errorf("%s takes an iterable, not a %s", what, v.Type())
	}
	if n, ok := lengthOf(v); ok {
		if err := charge(th, n); err != nil {
			return nil, err
		}
	}
	iter := it.Iterate()
	defer iter.Done()
	var out []starlark.Value
	var x starlark.Value
	for iter.Next(&x) {
		out = append(out, x)
	}
	return out, nil
}
