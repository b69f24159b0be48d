package expr

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tName
	tNumber
	tString
	tOp
)

// token is one Python token. For a literal, text is already the Starlark source for it.
type token struct {
	kind tokKind
	text string
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tString:
		return "string"
	}
	return fmt.Sprintf("%q", t.text)
}

// operators longest first, so that "**" is read before "*".
var operators = []string{"...", "**", "//", "==", "!=", "<=", ">=", "<<", ">>", ":=", "->",
	"+", "-", "*", "/", "%", "@", "&", "|", "^", "~", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "="}

// lex splits a Python expression into tokens. Newlines are spaces: an expression may span lines.
func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '\\' && i+1 < len(src) && (src[i+1] == '\n' || src[i+1] == '\r'):
			i += 2
		case c == '#':
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(src)
			}
		case c == '"' || c == '\'':
			lit, n, err := scanString(src[i:], "")
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tString, lit})
			i += n
		case isIdentStart(c) || c >= 0x80:
			t, n, err := lexWord(src[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		case isDigit(c) || c == '.' && i+1 < len(src) && isDigit(src[i+1]):
			t, n, err := lexNumber(src[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			i += n
		default:
			op := ""
			for _, o := range operators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil, fmt.Errorf("syntax error: unexpected character %q", c)
			}
			toks = append(toks, token{tOp, op})
			i += len(op)
		}
	}
	return append(toks, token{kind: tEOF}), nil
}

// lexWord reads a name, or a string literal with its prefix (f"...", r'...').
func lexWord(s string) (token, int, error) {
	j := 0
	for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j])) {
		j++
	}
	if j == 0 {
		return token{}, 0, fmt.Errorf("syntax error: unexpected character %q: names are ASCII letters, digits and _", s[0])
	}
	word := s[:j]
	if j < len(s) && (s[j] == '"' || s[j] == '\'') && isStringPrefix(word) {
		prefix := strings.ToLower(word)
		if strings.Contains(prefix, "b") {
			return token{}, 0, fmt.Errorf("bytes literals (%s'...') are not supported; use a str", word)
		}
		lit, n, err := scanString(s[j:], prefix)
		if err != nil {
			return token{}, 0, err
		}
		return token{tString, lit}, j + n, nil
	}
	return token{tName, word}, j, nil
}

// lexNumber reads a Python number and writes it as Starlark reads it.
func lexNumber(s string) (token, int, error) {
	j := 0
	isFloat := false
	hex := len(s) > 1 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1]))
	if hex {
		j = 2
	}
loop:
	for j < len(s) {
		c := s[j]
		switch {
		case isDigit(c) || c == '_' || hex && strings.ContainsRune("abcdefABCDEF", rune(c)):
		case !hex && c == '.':
			isFloat = true
		case !hex && (c == 'e' || c == 'E'):
			isFloat = true
			if j+1 < len(s) && (s[j+1] == '+' || s[j+1] == '-') {
				j++
			}
		default:
			break loop
		}
		j++
	}
	text := strings.ReplaceAll(s[:j], "_", "")
	if j < len(s) && (s[j] == 'j' || s[j] == 'J') {
		return token{}, 0, fmt.Errorf("complex numbers (%sj) are not supported", s[:j])
	}
	if j < len(s) && (isIdentStart(s[j])) {
		return token{}, 0, fmt.Errorf("syntax error: invalid number %q", s[:j+1])
	}
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil && !math.IsInf(f, 0) {
			return token{}, 0, fmt.Errorf("syntax error: invalid number %q", s[:j])
		}
		if math.IsInf(f, 0) {
			return token{tNumber, `float("inf")`}, j, nil
		}
		return token{tNumber, strconv.FormatFloat(f, 'e', -1, 64)}, j, nil
	}
	base := 10
	if hex {
		base = 0
	} else if len(text) > 1 && text[0] == '0' && strings.Trim(text, "0") != "" {
		return token{}, 0, fmt.Errorf("syntax error: invalid number %q: leading zeros are not allowed (use 0o for octal)", s[:j])
	}
	n, ok := new(big.Int).SetString(text, base)
	if !ok {
		return token{}, 0, fmt.Errorf("syntax error: invalid number %q", s[:j])
	}
	return token{tNumber, n.String()}, j, nil
}
