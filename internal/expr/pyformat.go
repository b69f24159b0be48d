package expr

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"go.starlark.net/starlark"
)

// percentFormat is Python's format % args: %[(name)][flags][width][.precision]type, written through the
// same format-spec machinery as f-strings (Starlark's % knows no flags, widths or precisions, and quotes
// reprs differently).
func percentFormat(format string, args starlark.Value, maxWidth int) (string, error) {
	var positional starlark.Tuple
	mapping, _ := args.(*starlark.Dict)
	if t, ok := args.(starlark.Tuple); ok {
		positional = t
	} else {
		positional = starlark.Tuple{args}
	}
	var b strings.Builder
	next := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		conv, n, err := parsePercent(format[i+1:])
		if err != nil {
			return "", err
		}
		i += n
		if conv.typ == '%' {
			b.WriteByte('%')
			continue
		}
		var v starlark.Value
		if conv.key != "" {
			if mapping == nil {
				return "", errors.New("format requires a mapping")
			}
			found := false
			if v, found, _ = mapping.Get(starlark.String(conv.key)); !found {
				return "", fmt.Errorf("key %q not in the format's mapping", conv.key)
			}
		} else {
			if next >= len(positional) {
				return "", errors.New("not enough arguments for format string")
			}
			v, next = positional[next], next+1
		}
		s, err := conv.format(v, maxWidth)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	if mapping == nil && next < len(positional) {
		return "", errors.New("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// percentConv is one %-conversion: its mapping key, and the format spec it amounts to.
type percentConv struct {
	key   string
	flags string
	width string
	prec  string
	typ   byte
}

// parsePercent reads a conversion after its '%' and returns it and how many bytes it took.
func parsePercent(s string) (percentConv, int, error) {
	var c percentConv
	i := 0
	if strings.HasPrefix(s, "(") {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return c, 0, errors.New("incomplete format key")
		}
		c.key, i = s[1:end], end+1
	}
	for i < len(s) && strings.IndexByte("-+ #0", s[i]) >= 0 {
		c.flags += s[i : i+1]
		i++
	}
	for i < len(s) && isDigit(s[i]) {
		c.width += s[i : i+1]
		i++
	}
	if i < len(s) && s[i] == '.' {
		c.prec = "."
		for i++; i < len(s) && isDigit(s[i]); i++ {
			c.prec += s[i : i+1]
		}
		if c.prec == "." {
			c.prec = ".0"
		}
	}
	if i < len(s) && s[i] == '*' {
		return c, 0, errors.New("* widths in % formatting are not supported")
	}
	if i >= len(s) || strings.IndexByte("diouxXeEfFgGcrsa%", s[i]) < 0 {
		return c, 0, errors.New("incomplete or unsupported % format")
	}
	c.typ = s[i]
	return c, i + 1, nil
}

func (c percentConv) format(v starlark.Value, maxWidth int) (string, error) {
	align := ">"
	if strings.Contains(c.flags, "-") {
		align = "<"
	}
	sign := ""
	if strings.Contains(c.flags, "+") {
		sign = "+"
	} else if strings.Contains(c.flags, " ") {
		sign = " "
	}
	alt, zero := "", ""
	if strings.Contains(c.flags, "#") {
		alt = "#"
	}
	if strings.Contains(c.flags, "0") && align == ">" && strings.IndexByte("diouxXeEfFgG", c.typ) >= 0 {
		zero, align = "0", ""
	}
	typ := string(c.typ)
	switch c.typ {
	case 's', 'r', 'a':
		text := str(v)
		if c.typ != 's' {
			text = repr(v)
		}
		return formatValue(starlark.String(text), align+c.width+c.prec, maxWidth)
	case 'd', 'i', 'u':
		typ = "d"
		if f, ok := v.(starlark.Float); ok {
			n, err := starlark.NumberToInt(f)
			if err != nil {
				return "", err
			}
			v = n
		}
	case 'c':
		if s, ok := v.(starlark.String); ok && utf8.RuneCountInString(string(s)) == 1 {
			return formatValue(s, align+c.width, maxWidth)
		}
	}
	if b, ok := v.(starlark.Bool); ok {
		v = boolInt(b)
	}
	if !isNumber(v) {
		return "", fmt.Errorf("%%%c format: a number is required, not %s", c.typ, v.Type())
	}
	return formatValue(v, align+sign+alt+zero+c.width+c.prec+typ, maxWidth)
}

// strFormat is Python's str.format: {}, {0}, {name}, with !r/!s/!a and a format spec. Fields that index or
// read attributes ({0[k]}, {0.x}) are refused.
func strFormat(s string, args starlark.Tuple, kwargs []starlark.Tuple, maxWidth int) (string, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case (c == '{' || c == '}') && i+1 < len(s) && s[i+1] == c:
			b.WriteByte(c)
			i++
			continue
		case c == '}':
			return "", errors.New("single '}' encountered in format string")
		case c != '{':
			b.WriteByte(c)
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", errors.New("single '{' encountered in format string")
		}
		text, err := formatField(s[i+1:i+end], args, kwargs, &auto, maxWidth)
		if err != nil {
			return "", err
		}
		b.WriteString(text)
		i += end
	}
	return b.String(), nil
}

func formatField(field string, args starlark.Tuple, kwargs []starlark.Tuple, auto *int, maxWidth int) (string, error) {
	name, spec, _ := strings.Cut(field, ":")
	name, conv, _ := strings.Cut(name, "!")
	if strings.ContainsAny(name, ".[{") || strings.Contains(spec, "{") {
		return "", fmt.Errorf("the format field {%s} is not supported; compute the value in the expression", field)
	}
	var v starlark.Value
	switch {
	case name == "":
		if *auto >= len(args) {
			return "", fmt.Errorf("replacement index %d out of range for positional args tuple", *auto)
		}
		v, *auto = args[*auto], *auto+1
	case isDigit(name[0]):
		var n int
		if _, err := fmt.Sscan(name, &n); err != nil || n >= len(args) {
			return "", fmt.Errorf("replacement index %s out of range for positional args tuple", name)
		}
		v = args[n]
	default:
		for _, kv := range kwargs {
			if string(kv[0].(starlark.String)) == name {
				v = kv[1]
			}
		}
		if v == nil {
			return "", fmt.Errorf("no value for the format field {%s}", name)
		}
	}
	switch conv {
	case "r", "a":
		v = starlark.String(repr(v))
	case "s":
		v = starlark.String(str(v))
	case "":
	default:
		return "", fmt.Errorf("unknown conversion specifier %s", conv)
	}
	return formatValue(v, spec, maxWidth)
}
