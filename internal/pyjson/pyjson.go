// Package pyjson writes JSON the way Python's json.dumps does (", " and ": " separators, ensure_ascii escapes,
// indent, sort_keys, floats as repr prints them), for the prompts and values that Julep's users wrote against
// Python and compare byte for byte. It holds no state and imports nothing of the platform.
package pyjson

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Options are json.dumps's keyword arguments.
type Options struct {
	// Indent, when not nil, puts each member on its own line, indented by that many spaces per level (or by the
	// string IndentString when set).
	Indent       *int
	IndentString string
	// SortKeys sorts the members of objects; Object members otherwise keep their order. map[string]any has no
	// order, so its keys are always sorted.
	SortKeys bool
	// ASCII escapes every non-ASCII character as \uXXXX (Python's default, ensure_ascii=True).
	ASCII bool
	// ItemSep and KeySep replace the separators (Python's separators=(item, key)).
	ItemSep, KeySep *string
	// HTMLSafe escapes <, >, & and ' as jinja2's tojson filter does.
	HTMLSafe bool
}

// Defaults are json.dumps's defaults.
func Defaults() Options { return Options{ASCII: true} }

// Member is one member of an Object.
type Member struct {
	Key   string
	Value any
}

// Object is a JSON object whose members keep their order, like a Python dict.
type Object []Member

// Dumps encodes v: nil, bool, string, ints, floats, json.Number, *big.Int, []any, map[string]any, Object, and
// anything else through encoding/json first.
func Dumps(v any, o Options) (string, error) {
	var b strings.Builder
	e := encoder{o: o, b: &b}
	e.item, e.key = ", ", ": "
	if o.Indent != nil || o.IndentString != "" {
		e.item = ","
		e.indent = o.IndentString
		if e.indent == "" {
			e.indent = strings.Repeat(" ", *o.Indent)
		}
		e.pretty = true
	}
	if o.ItemSep != nil {
		e.item = *o.ItemSep
	}
	if o.KeySep != nil {
		e.key = *o.KeySep
	}
	if err := e.value(v, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

type encoder struct {
	o         Options
	b         *strings.Builder
	item, key string
	indent    string
	pretty    bool
}

func (e *encoder) newline(level int) {
	if e.pretty {
		e.b.WriteByte('\n')
		for i := 0; i < level; i++ {
			e.b.WriteString(e.indent)
		}
	}
}

func (e *encoder) value(v any, level int) error {
	if level > 1000 {
		return fmt.Errorf("value nested more than 1000 levels deep")
	}
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		if x {
			e.b.WriteString("true")
		} else {
			e.b.WriteString("false")
		}
	case string:
		e.str(x)
	case int:
		e.b.WriteString(strconv.Itoa(x))
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case int32:
		e.b.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		e.b.WriteString(strconv.FormatUint(x, 10))
	case *big.Int:
		e.b.WriteString(x.String())
	case json.Number:
		e.b.WriteString(x.String())
	case float64:
		e.b.WriteString(Float(x))
	case float32:
		e.b.WriteString(Float(float64(x)))
	case []any:
		return e.list(len(x), func(i int) any { return x[i] }, level)
	case Object:
		members := x
		if e.o.SortKeys {
			members = append(Object(nil), x...)
			sort.SliceStable(members, func(i, j int) bool { return members[i].Key < members[j].Key })
		}
		return e.object(members, level)
	case map[string]any:
		members := make(Object, 0, len(x))
		for k, m := range x {
			members = append(members, Member{k, m})
		}
		sort.Slice(members, func(i, j int) bool { return members[i].Key < members[j].Key })
		return e.object(members, level)
	default:
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var generic any
		dec := json.NewDecoder(strings.NewReader(string(data)))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			return err
		}
		return e.value(generic, level)
	}
	return nil
}

func (e *encoder) list(n int, at func(int) any, level int) error {
	if n == 0 {
		e.b.WriteString("[]")
		return nil
	}
	e.b.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			e.b.WriteString(e.item)
		}
		e.newline(level + 1)
		if err := e.value(at(i), level+1); err != nil {
			return err
		}
	}
	e.newline(level)
	e.b.WriteByte(']')
	return nil
}

func (e *encoder) object(members Object, level int) error {
	if len(members) == 0 {
		e.b.WriteString("{}")
		return nil
	}
	e.b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			e.b.WriteString(e.item)
		}
		e.newline(level + 1)
		e.str(m.Key)
		e.b.WriteString(e.key)
		if err := e.value(m.Value, level+1); err != nil {
			return err
		}
	}
	e.newline(level)
	e.b.WriteByte('}')
	return nil
}

func (e *encoder) str(s string) {
	b := e.b
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20, e.o.ASCII && r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		case e.o.HTMLSafe && (r == '<' || r == '>' || r == '&' || r == '\''):
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// Float formats f as Python's repr does: the shortest digits that read back the same, in fixed notation for
// exponents from -4 to 15 (always with a fractional part) and in scientific notation otherwise.
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, expStr, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expStr)
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimPrefix(mant, "-")
	digits := strings.Replace(mant, ".", "", 1)
	sign := ""
	if neg {
		sign = "-"
	}
	if exp < -4 || exp >= 16 {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if exp < 0 {
			es = "-"
			exp = -exp
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, exp)
	}
	if exp < 0 {
		return sign + "0." + strings.Repeat("0", -exp-1) + digits
	}
	if len(digits) <= exp+1 {
		return sign + digits + strings.Repeat("0", exp+1-len(digits)) + ".0"
	}
	return sign + digits[:exp+1] + "." + digits[exp+1:]
}
