package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"

	"github.com/contrailhq/contrail/internal/pyjson"
)

// spec is a parsed Python format spec: [[fill]align][sign][z][#][0][width][grouping][.precision][type].
type spec struct {
	fill      rune
	align     byte
	sign      byte
	alt       bool
	zero      bool
	width     int
	grouping  byte
	precision int // -1: none
	typ       byte
}

func parseSpec(s string, maxWidth int) (spec, error) {
	sp := spec{fill: ' ', precision: -1}
	bad := func() (spec, error) { return spec{}, fmt.Errorf("invalid format spec %q", s) }
	i := 0
	if r, n := utf8.DecodeRuneInString(s); n > 0 && n < len(s) && strings.IndexByte("<>^=", s[n]) >= 0 {
		sp.fill, sp.align, i = r, s[n], n+1
	} else if len(s) > 0 && strings.IndexByte("<>^=", s[0]) >= 0 {
		sp.align, i = s[0], 1
	}
	if i < len(s) && strings.IndexByte("+- ", s[i]) >= 0 {
		sp.sign = s[i]
		i++
	}
	if i < len(s) && s[i] == 'z' {
		i++
	}
	if i < len(s) && s[i] == '#' {
		sp.alt = true
		i++
	}
	if i < len(s) && s[i] == '0' {
		sp.zero = true
		i++
	}
	i, err := parseWidthPrecision(s, i, &sp, maxWidth)
	if err != nil {
		return spec{}, err
	}
	if i < len(s) {
		sp.typ = s[i]
		i++
	}
	if i != len(s) {
		return bad()
	}
	return sp, nil
}

// parseWidthPrecision reads [width][grouping][.precision] at s[i:].
func parseWidthPrecision(s string, i int, sp *spec, maxWidth int) (int, error) {
	j := i
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j > i {
		w, err := strconv.Atoi(s[i:j])
		if err != nil || w > maxWidth {
			return 0, fmt.Errorf("format width %s is more than the %d allowed", s[i:j], maxWidth)
		}
		sp.width, i = w, j
	}
	if i < len(s) && (s[i] == ',' || s[i] == '_') {
		sp.grouping = s[i]
		i++
	}
	if i < len(s) && s[i] == '.' {
		j = i + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == i+1 {
			return 0, fmt.Errorf("invalid format spec %q", s)
		}
		p, err := strconv.Atoi(s[i+1 : j])
		if err != nil || p > 1000 {
			return 0, fmt.Errorf("format precision %s is more than the 1000 allowed", s[i+1:j])
		}
		sp.precision, i = p, j
	}
	return i, nil
}

// formatValue formats v as Python's format(v, spec) does, for str, int, float and bool; other values are
// formatted as their str().
func formatValue(v starlark.Value, specText string, maxWidth int) (string, error) {
	if specText == "" {
		return str(v), nil
	}
	if t, ok := v.(*pyTime); ok {
		// A datetime's format spec is a strftime format, as Python's __format__ takes it.
		return strftime(t.t, t.aware, specText)
	}
	sp, err := parseSpec(specText, maxWidth)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case starlark.Bool:
		if sp.typ == 0 || sp.typ == 's' {
			return pad(sp, str(v), '<'), nil
		}
		n := 0
		if x {
			n = 1
		}
		return formatInt(sp, big.NewInt(int64(n)))
	case starlark.Int:
		if strings.IndexByte("eEfFgG%", sp.typ) >= 0 && sp.typ != 0 {
			f, _ := starlark.AsFloat(x)
			return formatFloat(sp, f)
		}
		return formatInt(sp, x.BigInt())
	case starlark.Float:
		return formatFloat(sp, float64(x))
	default:
		if sp.typ != 0 && sp.typ != 's' {
			return "", fmt.Errorf("format code %q is not for a %s", sp.typ, v.Type())
		}
		s := str(v)
		if sp.precision >= 0 && utf8.RuneCountInString(s) > sp.precision {
			s = string([]rune(s)[:sp.precision])
		}
		return pad(sp, s, '<'), nil
	}
}

// str is Python's str(): a string as it is, a datetime, timedelta or timezone as its own text, anything
// else as Python's repr writes it.
func str(v starlark.Value) string {
	switch x := v.(type) {
	case starlark.String:
		return string(x)
	case pyReprer:
		return x.String()
	}
	return repr(v)
}

// pyReprer is a value whose repr() differs from its str() (datetime.datetime(2024, 1, 2, 0, 0)).
type pyReprer interface {
	pyRepr() string
	String() string
}

// repr is Python's repr(), so that text built from values reads as it did under Julep: 'single' quotes,
// True/False/None, 1e+16.
func repr(v starlark.Value) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v starlark.Value, depth int) {
	if depth > 100 {
		b.WriteString("...")
		return
	}
	switch x := v.(type) {
	case starlark.NoneType:
		b.WriteString("None")
	case starlark.Bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case starlark.Float:
		b.WriteString(floatRepr(float64(x)))
	case starlark.String:
		quoteRepr(b, string(x))
	case *starlark.Dict:
		b.WriteByte('{')
		for i, it := range x.Items() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, it[0], depth+1)
			b.WriteString(": ")
			writeRepr(b, it[1], depth+1)
		}
		b.WriteByte('}')
	case starlark.Tuple:
		writeItems(b, "(", x, depth)
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case *starlark.Set:
		if x.Len() == 0 {
			b.WriteString("set()")
			return
		}
		writeItems(b, "{", x, depth)
		b.WriteByte('}')
	case pyReprer:
		b.WriteString(x.pyRepr())
	case *namedTuple, *reMatch, *dictView, starlark.Bytes:
		b.WriteString(v.String())
	case starlark.Indexable:
		writeItems(b, "[", x, depth)
		b.WriteByte(']')
	default:
		b.WriteString(v.String())
	}
}

// writeItems writes open and the reprs of the items of x, separated by commas.
func writeItems(b *strings.Builder, open string, x starlark.Value, depth int) {
	b.WriteString(open)
	var items []starlark.Value
	switch x := x.(type) {
	case starlark.Indexable:
		for i := 0; i < x.Len(); i++ {
			items = append(items, x.Index(i))
		}
	case starlark.Iterable:
		iter := x.Iterate()
		defer iter.Done()
		var e starlark.Value
		for iter.Next(&e) {
			items = append(items, e)
		}
	}
	for i, e := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		writeRepr(b, e, depth+1)
	}
}

func floatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return pyjson.Float(f)
}

// quoteRepr quotes s as Python's repr does: single quotes unless s holds one and no double quote.
func quoteRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\x%02x`, r)
		case r == utf8.RuneError:
			b.WriteString(`\ufffd`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
}

func formatInt(sp spec, n *big.Int) (string, error) {
	neg := n.Sign() < 0
	abs := new(big.Int).Abs(n)
	var digits, prefix string
	switch sp.typ {
	case 0, 'd', 'n':
		digits = abs.String()
	case 'b':
		digits, prefix = abs.Text(2), "0b"
	case 'o':
		digits, prefix = abs.Text(8), "0o"
	case 'x':
		digits, prefix = abs.Text(16), "0x"
	case 'X':
		digits, prefix = strings.ToUpper(abs.Text(16)), "0X"
	case 'c':
		if !abs.IsInt64() || abs.Int64() > utf8.MaxRune {
			return "", fmt.Errorf("%%c arg not in range")
		}
		return pad(sp, string(rune(abs.Int64())), '<'), nil
	default:
		return "", fmt.Errorf("unknown format code %q for an int", sp.typ)
	}
	if sp.grouping != 0 {
		every := 3
		if sp.typ == 'b' || sp.typ == 'o' || sp.typ == 'x' || sp.typ == 'X' {
			every = 4
		}
		digits = group(digits, sp.grouping, every)
	}
	if !sp.alt {
		prefix = ""
	}
	return number(sp, neg, prefix+digits), nil
}

func formatFloat(sp spec, f float64) (string, error) {
	neg := math.Signbit(f) && !math.IsNaN(f)
	a := math.Abs(f)
	prec := sp.precision
	var body string
	switch {
	case math.IsInf(a, 1):
		body = "inf"
	case math.IsNaN(a):
		body = "nan"
	default:
		switch sp.typ {
		case 'f', 'F', '%':
			if prec < 0 {
				prec = 6
			}
			if sp.typ == '%' {
				a *= 100
			}
			body = strconv.FormatFloat(a, 'f', prec, 64)
		case 'e', 'E':
			if prec < 0 {
				prec = 6
			}
			body = pyExp(strconv.FormatFloat(a, 'e', prec, 64))
		case 'g', 'G', 0:
			if sp.typ == 0 && prec < 0 {
				body = pyjson.Float(a)
				break
			}
			if prec < 0 {
				prec = 6
			}
			if prec == 0 {
				prec = 1
			}
			body = pyG(a, prec, sp.alt, sp.typ == 0)
		default:
			return "", fmt.Errorf("unknown format code %q for a float", sp.typ)
		}
	}
	if sp.typ == 'F' || sp.typ == 'E' || sp.typ == 'G' {
		body = strings.ToUpper(body)
	}
	if sp.grouping != 0 {
		intPart, frac, _ := strings.Cut(body, ".")
		if isDigit(intPart[0]) && !strings.ContainsAny(intPart, "e") {
			body = group(intPart, sp.grouping, 3)
			if frac != "" || strings.Contains(body, ".") {
				body += "." + frac
			}
		}
	}
	if sp.typ == '%' {
		body += "%"
	}
	return number(sp, neg, body), nil
}

// pyExp makes Go's exponent (e+06) look like Python's (e+06 too, but at least two digits and no more).
func pyExp(s string) string {
	m, e, ok := strings.Cut(s, "e")
	if !ok {
		return s
	}
	sign, digits := e[:1], strings.TrimLeft(e[1:], "0")
	for len(digits) < 2 {
		digits = "0" + digits
	}
	return m + "e" + sign + digits
}

// pyG is Python's general format: scientific when the exponent is < -4 or >= precision, trailing zeros removed.
func pyG(a float64, prec int, alt, noType bool) string {
	if a == 0 {
		if noType {
			return "0.0"
		}
		return "0"
	}
	exp := int(math.Floor(math.Log10(a)))
	// Rounding may carry into the next power of ten.
	if r, _ := strconv.ParseFloat(strconv.FormatFloat(a, 'e', prec-1, 64), 64); r >= math.Pow10(exp+1) {
		exp++
	}
	var s string
	if exp < -4 || exp >= prec {
		s = pyExp(strconv.FormatFloat(a, 'e', prec-1, 64))
		if !alt {
			m, e, _ := strings.Cut(s, "e")
			if strings.Contains(m, ".") {
				m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
			}
			s = m + "e" + e
		}
		return s
	}
	s = strconv.FormatFloat(a, 'f', max(prec-1-exp, 0), 64)
	if !alt && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if noType && !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

func group(digits string, sep byte, every int) string {
	if len(digits) <= every {
		return digits
	}
	var b strings.Builder
	first := len(digits) % every
	if first > 0 {
		b.WriteString(digits[:first])
	}
	for i := first; i < len(digits); i += every {
		if b.Len() > 0 {
			b.WriteByte(sep)
		}
		b.WriteString(digits[i : i+every])
	}
	return b.String()
}

// number adds the sign and pads a formatted number.
func number(sp spec, neg bool, body string) string {
	sign := ""
	switch {
	case neg:
		sign = "-"
	case sp.sign == '+':
		sign = "+"
	case sp.sign == ' ':
		sign = " "
	}
	if sp.zero && sp.align == 0 {
		sp.fill, sp.align = '0', '='
	}
	if sp.align == '=' {
		n := sp.width - utf8.RuneCountInString(sign+body)
		if n > 0 {
			return sign + strings.Repeat(string(sp.fill), n) + body
		}
		return sign + body
	}
	return pad(sp, sign+body, '>')
}

func pad(sp spec, s string, defaultAlign byte) string {
	n := sp.width - utf8.RuneCountInString(s)
	if n <= 0 {
		return s
	}
	align := sp.align
	if align == 0 || align == '=' {
		align = defaultAlign
	}
	fill := string(sp.fill)
	switch align {
	case '<':
		return s + strings.Repeat(fill, n)
	case '^':
		return strings.Repeat(fill, n/2) + s + strings.Repeat(fill, n-n/2)
	default:
		return strings.Repeat(fill, n) + s
	}
}
