package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/internal/pyjson"
	"go.starlark.net/starlark"
)

// jsonBuiltins are json and Julep's helpers load_json, dump_json and extract_json.
func jsonBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"json": newModule("json", starlark.StringDict{
			"dumps": fn("json.dumps", jsonDumps),
			"loads": fn("json.loads", jsonLoads),
		}),
		"load_json":    fn("load_json", jsonLoads),
		"dump_json":    fn("dump_json", jsonDumps),
		"extract_json": fn("extract_json", extractJSON),
	}
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
	switch v.(type) {
	case *pyTime, *pyDelta, *pyTZ:
		return nil, fmt.Errorf("object of type %s is not JSON serializable; use .isoformat() or str()", v.Type())
	}
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
		if _, isMatch := v.(*reMatch); !isMatch && !isStringish(v) {
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

// extractJSON is Julep's extract_json: the JSON in a model's answer, inside a ```json (or ```) block when
// there is one, else the whole text.
func extractJSON(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	text := s
	if strings.Contains(s, "```") {
		start := strings.Index(s, "```") + 3
		if i := strings.Index(s, "```json"); i >= 0 {
			start = i + 7
		}
		end := strings.Index(s[start:], "```")
		if end < 0 {
			return nil, errors.New("extract_json: the code block has no closing ```")
		}
		text = strings.TrimSpace(s[start : start+end])
	}
	v, err := jsonLoads(th, b, starlark.Tuple{starlark.String(text)}, nil)
	if err != nil {
		short := text
		if len(short) > 100 {
			short = short[:100] + "..."
		}
		return nil, fmt.Errorf("%w (the text was %q)", err, short)
	}
	return v, nil
}
