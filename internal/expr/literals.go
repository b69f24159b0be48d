package expr

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.starlark.net/syntax"
)

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }

func isStringPrefix(w string) bool {
	switch strings.ToLower(w) {
	case "r", "u", "b", "f", "br", "rb", "fr", "rf":
		return true
	}
	return false
}

// scanString reads the string literal at the start of s (after its prefix) and returns the Starlark source
// for it (an f-string becomes a concatenation of __fmt__ calls) and how many bytes of s it took.
func scanString(s, prefix string) (string, int, error) {
	q := s[0]
	delim := s[:1]
	if len(s) >= 3 && s[1] == q && s[2] == q {
		delim = s[:3]
	}
	i := len(delim)
	for {
		if i >= len(s) {
			return "", 0, fmt.Errorf("syntax error: unterminated string literal")
		}
		if s[i] == '\\' {
			i += 2
			continue
		}
		if len(delim) == 1 && s[i] == '\n' {
			return "", 0, fmt.Errorf("syntax error: unterminated string literal (a newline inside quotes)")
		}
		if strings.HasPrefix(s[i:], delim) {
			break
		}
		i++
	}
	body := s[len(delim):i]
	n := i + len(delim)
	raw := strings.Contains(prefix, "r")
	if !strings.Contains(prefix, "f") {
		// Written again as a Go-quoted literal, which Starlark reads: Python keeps an unknown escape such as
		// \d as written, where Starlark would refuse it.
		if !raw {
			var err error
			if body, err = unescape(body); err != nil {
				return "", 0, err
			}
		}
		return strconv.Quote(body), n, nil
	}
	expr, err := fstring(body, raw)
	if err != nil {
		return "", 0, fmt.Errorf("f-string: %w", err)
	}
	return expr, n, nil
}

// fstring turns the body of an f-string into a Starlark expression.
func fstring(body string, raw bool) (string, error) {
	var parts []string
	var lit strings.Builder
	flush := func() error {
		if lit.Len() == 0 {
			return nil
		}
		text := lit.String()
		lit.Reset()
		if !raw {
			var err error
			if text, err = unescape(text); err != nil {
				return err
			}
		}
		parts = append(parts, strconv.Quote(text))
		return nil
	}
	for i := 0; i < len(body); {
		c := body[i]
		switch {
		case c == '{' && i+1 < len(body) && body[i+1] == '{':
			lit.WriteByte('{')
			i += 2
		case c == '}' && i+1 < len(body) && body[i+1] == '}':
			lit.WriteByte('}')
			i += 2
		case c == '}':
			return "", fmt.Errorf("single '}' is not allowed")
		case c == '{':
			if err := flush(); err != nil {
				return "", err
			}
			field, n, err := fstringField(body[i+1:], raw)
			if err != nil {
				return "", err
			}
			parts = append(parts, field)
			i += 1 + n
		case c == '\\' && !raw && i+1 < len(body):
			lit.WriteString(body[i : i+2])
			i += 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	if err := flush(); err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return `""`, nil
	}
	return "(" + strings.Join(parts, " + ") + ")", nil
}

// fstringField reads a replacement field after its '{' and returns the Starlark expression for it and how
// many bytes it took, up to and including its '}'.
func fstringField(s string, raw bool) (string, int, error) {
	exprEnd, conv, specStart, i, err := scanField(s)
	if err != nil {
		return "", 0, err
	}
	if i >= len(s) || s[i] != '}' {
		return "", 0, fmt.Errorf("expected '}' after a replacement field")
	}
	if exprEnd < 0 {
		exprEnd = i
	}
	src := s[:exprEnd]
	if strings.TrimSpace(src) == "" {
		return "", 0, fmt.Errorf("empty expression in a replacement field")
	}
	selfDoc := ""
	if t := strings.TrimRight(src, " "); strings.HasSuffix(t, "=") && !strings.HasSuffix(t, "==") &&
		!strings.HasSuffix(t, "!=") && !strings.HasSuffix(t, "<=") && !strings.HasSuffix(t, ">=") {
		// {x=} prints "x=" and the repr of x.
		selfDoc = src
		src = strings.TrimSuffix(t, "=")
		if conv == "" && specStart < 0 {
			conv = "r"
		}
	}
	inner, err := translate(src)
	if err != nil {
		return "", 0, err
	}
	spec := `""`
	if specStart >= 0 {
		if spec, err = fstring(s[specStart:i], raw); err != nil {
			return "", 0, err
		}
	}
	field := fmt.Sprintf("__fmt__((%s), %q, %s)", inner, conv, spec)
	if selfDoc != "" {
		field = strconv.Quote(selfDoc) + " + " + field
	}
	return field, i + 1, nil
}

// scanField finds the parts of a replacement field after its '{': where its expression ends, its
// conversion (!r), where its format spec starts (-1: none), and the index of its closing '}'.
func scanField(s string) (exprEnd int, conv string, specStart, i int, err error) {
	depth := 0
	exprEnd, specStart = -1, -1
loop:
	for ; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\'', '"':
			_, n, err := scanString(s[i:], "")
			if err != nil {
				return 0, "", 0, 0, err
			}
			i += n - 1
		case '(', '[', '{':
			depth++
		case ')', ']':
			depth--
		case '}':
			if depth == 0 {
				break loop
			}
			depth--
		case '!':
			if depth == 0 && i+1 < len(s) && s[i+1] != '=' {
				exprEnd = i
				conv = s[i+1 : i+2]
				i += 2
				if i < len(s) && s[i] == ':' {
					specStart = i + 1
					i = skipSpec(s, i+1)
				}
				break loop
			}
		case ':':
			if depth == 0 {
				exprEnd = i
				specStart = i + 1
				i = skipSpec(s, i+1)
				break loop
			}
		}
	}
	return exprEnd, conv, specStart, i, nil
}

// skipSpec returns the index of the '}' closing a format spec that starts at i (specs may nest fields).
func skipSpec(s string, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return i
}

// unescape decodes Python's escapes in the literal text of an f-string.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+1+n > len(s) {
				return "", fmt.Errorf(`truncated \%c escape`, e)
			}
			v, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32)
			if err != nil || !utf8.ValidRune(rune(v)) {
				return "", fmt.Errorf(`invalid \%c escape`, e)
			}
			b.WriteRune(rune(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 32)
			b.WriteRune(rune(v))
			i = j - 1
		default:
			// Python keeps unknown escapes as written.
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return b.String(), nil
}

// freeNames lists the identifiers an expression reads that it does not bind in a comprehension or lambda.
func freeNames(e syntax.Expr) map[string]bool {
	bound := map[string]bool{}
	syntax.Walk(e, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ForClause:
			syntax.Walk(n.Vars, func(v syntax.Node) bool {
				if id, ok := v.(*syntax.Ident); ok {
					bound[id.Name] = true
				}
				return true
			})
		case *syntax.LambdaExpr:
			for _, p := range n.Params {
				if kw, ok := p.(*syntax.BinaryExpr); ok { // x=default
					p = kw.X
				}
				if u, ok := p.(*syntax.UnaryExpr); ok { // *args, **kwargs
					p = u.X
				}
				if id, ok := p.(*syntax.Ident); ok {
					bound[id.Name] = true
				}
			}
		}
		return true
	})
	free := map[string]bool{}
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Ident:
			if !bound[n.Name] {
				free[n.Name] = true
			}
		case *syntax.CallExpr:
			// A keyword argument's name (dict(type="x")) is not a name the expression reads.
			syntax.Walk(n.Fn, visit)
			for _, a := range n.Args {
				if kw, ok := a.(*syntax.BinaryExpr); ok && kw.Op == syntax.EQ {
					a = kw.Y
				}
				syntax.Walk(a, visit)
			}
			return false
		}
		return true
	}
	syntax.Walk(e, visit)
	return free
}
