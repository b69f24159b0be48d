package expr

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"go.starlark.net/starlark"
)

// module is one of the Python modules expressions may use (json, re, datetime, ...): the functions and
// constants Julep offers from it, and nothing else.
type module struct {
	name    string
	members starlark.StringDict
}

var _ starlark.HasAttrs = (*module)(nil)

func newModule(name string, members starlark.StringDict) *module {
	return &module{name: name, members: members}
}

func (m *module) String() string        { return "<module '" + m.name + "'>" }
func (m *module) Type() string          { return "module" }
func (m *module) Freeze()               {}
func (m *module) Truth() starlark.Bool  { return true }
func (m *module) Hash() (uint32, error) { return 0, errors.New("unhashable type: module") }
func (m *module) AttrNames() []string   { return sortedKeys(m.members) }

func (m *module) Attr(name string) (starlark.Value, error) {
	if v, ok := m.members[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("%s.%s is not available in expressions; %s offers %s", m.name, name, m.name,
		strings.Join(m.AttrNames(), ", "))
}

func sortedKeys(d starlark.StringDict) []string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// typeObject is a class of a module (datetime.datetime, datetime.timedelta): callable to make one,
// usable in isinstance, with class methods and constants as attributes.
type typeObject struct {
	name    string
	new     func(th *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error)
	match   func(v starlark.Value) bool
	members starlark.StringDict
}

var (
	_ starlark.HasAttrs = (*typeObject)(nil)
	_ starlark.Callable = (*typeObject)(nil)
)

func (t *typeObject) String() string        { return "<class '" + t.name + "'>" }
func (t *typeObject) Type() string          { return "type" }
func (t *typeObject) Name() string          { return t.name }
func (t *typeObject) Freeze()               {}
func (t *typeObject) Truth() starlark.Bool  { return true }
func (t *typeObject) Hash() (uint32, error) { return starlark.String(t.name).Hash() }
func (t *typeObject) AttrNames() []string   { return sortedKeys(t.members) }

func (t *typeObject) Attr(name string) (starlark.Value, error) {
	if v, ok := t.members[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("%s.%s is not available in expressions", t.name, name)
}

func (t *typeObject) CallInternal(th *starlark.Thread, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	return t.new(th, args, kwargs)
}

// fn makes a module function.
func fn(name string, f func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, f)
}

// namedTuple is a tuple whose items have names (urlparse's ParseResult, time's struct_time), with more
// read-only attributes in extra.
type namedTuple struct {
	typ    string
	names  []string
	values starlark.Tuple
	extra  starlark.StringDict
}

var (
	_ starlark.HasAttrs  = (*namedTuple)(nil)
	_ starlark.Indexable = (*namedTuple)(nil)
)

func (t *namedTuple) String() string {
	var b strings.Builder
	b.WriteString(t.typ + "(")
	for i, n := range t.names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + "=" + repr(t.values[i]))
	}
	return b.String() + ")"
}
func (t *namedTuple) Type() string               { return t.typ }
func (t *namedTuple) Freeze()                    {}
func (t *namedTuple) Truth() starlark.Bool       { return len(t.values) > 0 }
func (t *namedTuple) Hash() (uint32, error)      { return t.values.Hash() }
func (t *namedTuple) Len() int                   { return len(t.values) }
func (t *namedTuple) Index(i int) starlark.Value { return t.values[i] }
func (t *namedTuple) Iterate() starlark.Iterator { return t.values.Iterate() }
func (t *namedTuple) AttrNames() []string {
	return append(slices.Clone(t.names), sortedKeys(t.extra)...)
}

func (t *namedTuple) Attr(name string) (starlark.Value, error) {
	if i := slices.Index(t.names, name); i >= 0 {
		return t.values[i], nil
	}
	if v, ok := t.extra[name]; ok {
		return v, nil
	}
	return nil, fmt.Errorf("%s has no attribute %q", t.typ, name)
}
