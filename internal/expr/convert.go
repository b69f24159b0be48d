package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"sort"

	"go.starlark.net/starlark"
)

// ToStarlark converts a JSON value to Starlark. Whole floats become ints (JSON does not tell 1 from 1.0, and
// Julep's inputs come from JSON); map keys are sorted, so that iteration is the same on every replay.
func ToStarlark(v any) (starlark.Value, error) {
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case starlark.Value:
		return x, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case int64:
		return starlark.MakeInt64(x), nil
	case int32:
		return starlark.MakeInt64(int64(x)), nil
	case uint64:
		return starlark.MakeUint64(x), nil
	case *big.Int:
		return starlark.MakeBigInt(x), nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return starlark.MakeInt64(int64(x)), nil
		}
		return starlark.Float(x), nil
	case float32:
		return ToStarlark(float64(x))
	case json.Number:
		return numberToStarlark(x)
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := ToStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		return mapToStarlark(x)
	}
	return typedToStarlark(v)
}

func numberToStarlark(x json.Number) (starlark.Value, error) {
	if i, err := x.Int64(); err == nil {
		return starlark.MakeInt64(i), nil
	}
	if b, ok := new(big.Int).SetString(string(x), 10); ok {
		return starlark.MakeBigInt(b), nil
	}
	f, err := x.Float64()
	if err != nil {
		return nil, fmt.Errorf("number %q: %w", x, err)
	}
	return starlark.Float(f), nil
}

func mapToStarlark(x map[string]any) (starlark.Value, error) {
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	d := starlark.NewDict(len(x))
	for _, k := range keys {
		sv, err := ToStarlark(x[k])
		if err != nil {
			return nil, err
		}
		if err := d.SetKey(starlark.String(k), sv); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// typedToStarlark converts typed values (structs, typed maps and slices): what their JSON is.
func typedToStarlark(v any) (starlark.Value, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("a %T cannot be a value: %w", v, err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		return nil, err
	}
	if reflect.TypeOf(generic) == reflect.TypeOf(v) {
		return nil, fmt.Errorf("a %T cannot be a value", v)
	}
	return ToStarlark(generic)
}

var errTooLarge = errors.New("the value is too large")

// toGo converts a Starlark value to JSON values, visiting at most *budget nodes (shared structure can make a
// value exponentially larger than the memory it holds).
func toGo(v starlark.Value, budget *int) (any, error) {
	*budget--
	if *budget < 0 {
		return nil, errTooLarge
	}
	switch x := v.(type) {
	case *reMatch:
		return nil, errors.New("a re.Match is not a JSON value; take its .group() or .groups()")
	case *pyTime:
		// As Julep's JSON encoder writes a datetime.
		return x.isoformat("T", "auto"), nil
	case *pyDelta:
		return nil, errors.New("a timedelta is not a JSON value; use .total_seconds() or str()")
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Bytes:
		return string(x), nil
	case starlark.Int:
		if i, ok := x.Int64(); ok {
			return i, nil
		}
		return json.Number(x.String()), nil
	case starlark.Float:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s is not a JSON number", pyFloatName(f))
		}
		return f, nil
	case *starlark.Dict:
		return dictToGo(x, budget)
	case starlark.Indexable: // list, tuple, range, the lazy lists, a namedTuple
		return listToGo(x, budget)
	case *starlark.Set:
		return nil, errors.New("a set is not a JSON value; make it a list with sorted() or list()")
	case *stepsView:
		return toGo(x.list(), budget)
	case *dictView:
		return toGo(starlark.NewList(x.items()), budget)
	}
	return nil, fmt.Errorf("a %s is not a JSON value", v.Type())
}

func dictToGo(x *starlark.Dict, budget *int) (any, error) {
	out := make(map[string]any, x.Len())
	for _, item := range x.Items() {
		k, err := keyString(item[0])
		if err != nil {
			return nil, err
		}
		val, err := toGo(item[1], budget)
		if err != nil {
			return nil, err
		}
		out[k] = val
	}
	return out, nil
}

func listToGo(x starlark.Indexable, budget *int) (any, error) {
	n := x.Len()
	if n > *budget {
		return nil, errTooLarge
	}
	out := make([]any, n)
	for i := 0; i < n; i++ {
		val, err := toGo(x.Index(i), budget)
		if err != nil {
			return nil, err
		}
		out[i] = val
	}
	return out, nil
}

func pyFloatName(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case f > 0:
		return "inf"
	}
	return "-inf"
}

// keyString is how Python's json.dumps writes a dict key.
func keyString(k starlark.Value) (string, error) {
	switch k := k.(type) {
	case starlark.String:
		return string(k), nil
	case starlark.Int:
		return k.String(), nil
	case starlark.Bool:
		if k {
			return "true", nil
		}
		return "false", nil
	case starlark.NoneType:
		return "null", nil
	case starlark.Float:
		return str(k), nil
	}
	return "", fmt.Errorf("a dict key must be a string, not a %s", k.Type())
}

// lazyList is inputs or outputs: a list whose elements are converted when read, since an expression usually
// reads one or two of a workflow's steps.
type lazyList struct {
	items []any
	cache []starlark.Value
}

var (
	_ starlark.Indexable = (*lazyList)(nil)
	_ starlark.Sequence  = (*lazyList)(nil)
)

func newLazyList(items []any) *lazyList {
	return &lazyList{items: items, cache: make([]starlark.Value, len(items))}
}

func (l *lazyList) String() string {
	v, err := ToStarlark(l.items)
	if err != nil {
		return "[...]"
	}
	return v.String()
}
func (l *lazyList) Type() string          { return "list" }
func (l *lazyList) Freeze()               {}
func (l *lazyList) Truth() starlark.Bool  { return len(l.items) > 0 }
func (l *lazyList) Hash() (uint32, error) { return 0, errors.New("unhashable type: list") }
func (l *lazyList) Len() int              { return len(l.items) }

func (l *lazyList) Index(i int) starlark.Value {
	if l.cache[i] == nil {
		v, err := ToStarlark(l.items[i])
		if err != nil {
			v = starlark.None
		}
		l.cache[i] = v
	}
	return l.cache[i]
}

func (l *lazyList) Iterate() starlark.Iterator { return &indexIter{x: l} }

type indexIter struct {
	x starlark.Indexable
	i int
}

func (it *indexIter) Next(p *starlark.Value) bool {
	if it.i >= it.x.Len() {
		return false
	}
	*p = it.x.Index(it.i)
	it.i++
	return true
}
func (it *indexIter) Done() {}

// stepsView is `steps`: steps[i] and steps["label"] are {input, output} (no output for the running step).
type stepsView struct {
	inputs, outputs *lazyList
	labels          map[string]int
	cache           map[int]*starlark.Dict // so that steps[0] is steps[0], as in Python
}

var _ starlark.Mapping = (*stepsView)(nil)

func (s *stepsView) String() string        { return fmt.Sprintf("<%d steps>", s.inputs.Len()) }
func (s *stepsView) Type() string          { return "steps" }
func (s *stepsView) Freeze()               {}
func (s *stepsView) Truth() starlark.Bool  { return s.inputs.Len() > 0 }
func (s *stepsView) Hash() (uint32, error) { return 0, errors.New("unhashable type: steps") }
func (s *stepsView) Len() int              { return s.inputs.Len() }

func (s *stepsView) Get(k starlark.Value) (starlark.Value, bool, error) {
	var i int
	switch k := k.(type) {
	case starlark.Int:
		n, ok := k.Int64()
		if !ok {
			return nil, false, fmt.Errorf("steps index %s out of range", k)
		}
		i = int(n)
		if i < 0 {
			i += s.inputs.Len()
		}
	case starlark.String:
		idx, ok := s.labels[string(k)]
		if !ok {
			return nil, false, fmt.Errorf("no step is labelled %s", k)
		}
		i = idx
	default:
		return nil, false, fmt.Errorf("steps are indexed by number or label, not by %s", k.Type())
	}
	if i < 0 || i >= s.inputs.Len() {
		return nil, false, fmt.Errorf("steps index %s out of range: the workflow has run %d steps", k, s.inputs.Len())
	}
	return s.step(i), true, nil
}

func (s *stepsView) step(i int) *starlark.Dict {
	if d, ok := s.cache[i]; ok {
		return d
	}
	if s.cache == nil {
		s.cache = map[int]*starlark.Dict{}
	}
	d := starlark.NewDict(2)
	s.cache[i] = d
	_ = d.SetKey(starlark.String("input"), s.inputs.Index(i))
	if i < s.outputs.Len() {
		_ = d.SetKey(starlark.String("output"), s.outputs.Index(i))
	}
	return d
}

func (s *stepsView) list() *starlark.List {
	elems := make([]starlark.Value, s.inputs.Len())
	for i := range elems {
		elems[i] = s.step(i)
	}
	return starlark.NewList(elems)
}

// Iterate makes `for s in steps` visit the steps in order.
func (s *stepsView) Iterate() starlark.Iterator { return s.list().Iterate() }

// sizeOf approximates the bytes v prints as, stopping once past limit.
func sizeOf(v starlark.Value, limit int) int {
	n := 0
	var walk func(v starlark.Value)
	walk = func(v starlark.Value) {
		if n > limit {
			return
		}
		switch x := v.(type) {
		case starlark.String:
			n += len(x) + 2
		case starlark.Bytes:
			n += len(x) + 3
		case *starlark.Dict:
			n += 2
			for _, it := range x.Items() {
				if n > limit {
					return
				}
				n += 4
				walk(it[0])
				walk(it[1])
			}
		case *lazyList:
			n += 2
			for i := 0; i < x.Len() && n <= limit; i++ {
				n += 2
				walk(x.Index(i))
			}
		case starlark.Indexable:
			n += 2
			for i := 0; i < x.Len() && n <= limit; i++ {
				n += 2
				walk(x.Index(i))
			}
		case *starlark.Set:
			n += 2 + 8*x.Len()
		case *dictView:
			n += 12
			walk(starlark.NewList(x.items()))
		case starlark.Int:
			n += len(x.String())
		default:
			n += 8
		}
	}
	walk(v)
	return n
}

// String renders a Go value as str() would show it inside an expression.
func String(v any) string {
	sv, err := ToStarlark(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return str(sv)
}

// Truthy reports Python's truth of a JSON value.
func Truthy(v any) bool {
	sv, err := ToStarlark(v)
	if err != nil {
		return v != nil
	}
	return bool(sv.Truth())
}

// AsInt reads a JSON number as an int (whole floats included).
func AsInt(v any) (int64, bool) {
	sv, err := ToStarlark(v)
	if err != nil {
		return 0, false
	}
	if i, ok := sv.(starlark.Int); ok {
		return i.Int64()
	}
	return 0, false
}

// AsFloat reads a JSON number as a float.
func AsFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		return 0, false
	}
	sv, err := ToStarlark(v)
	if err != nil {
		return 0, false
	}
	f, ok := starlark.AsFloat(sv)
	return f, ok
}
