package calc

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrDivisionByZero is returned for a division (or remainder-free ratio) by zero.
var ErrDivisionByZero = errors.New("division by zero")

// Limits that keep a hostile expression from costing much: its length, and how deeply it may nest (each level is a
// level of recursion).
const (
	maxLen   = 1000
	maxDepth = 100
)

// Eval evaluates an arithmetic expression: numbers (12, 3.5, .5, 1e3), + - * / and ^ (also written ×, ÷, **),
// unary minus, parentheses, the constants pi and e, and the functions in the table below. ^ binds tighter than
// unary minus and groups to the right, as in mathematics: -2^2 = -4, 2^3^2 = 512. Nothing is executed: the
// expression is parsed by hand and computed with float64.
func Eval(expr string) (float64, error) {
	if strings.TrimSpace(expr) == "" {
		return 0, errors.New("the expression is empty")
	}
	if len(expr) > maxLen {
		return 0, fmt.Errorf("the expression is longer than %d characters", maxLen)
	}
	p := &parser{src: expr}
	p.next()
	v, err := p.expr(0)
	if err != nil {
		return 0, err
	}
	if p.tok.kind != tokEOF {
		return 0, p.unexpected("an operator or the end")
	}
	if math.IsInf(v, 0) {
		return 0, errors.New("the result is too large")
	}
	if math.IsNaN(v) {
		return 0, errors.New("the result is not a number")
	}
	return v, nil
}

// Format writes a result the way a person would: integers without a decimal point, other numbers rounded to 12
// significant digits so that 0.1+0.2 reads 0.3.
func Format(v float64) string {
	if v == 0 {
		v = 0 // no "-0"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	s := strconv.FormatFloat(v, 'g', 12, 64)
	if !strings.ContainsAny(s, "e") {
		return s
	}
	// Very large or small numbers: keep the exponent, but in the plain form people type (1e+21 -> 1e21).
	return strings.Replace(s, "e+", "e", 1)
}

type function struct {
	args int // -1: one or more
	f    func(args []float64) (float64, error)
}

// functions are the functions Eval knows; each checks its own domain so that an error names the function.
var functions = map[string]function{
	"sqrt": {1, func(a []float64) (float64, error) {
		if a[0] < 0 {
			return 0, fmt.Errorf("sqrt of a negative number (%s)", Format(a[0]))
		}
		return math.Sqrt(a[0]), nil
	}},
	"abs":   {1, func(a []float64) (float64, error) { return math.Abs(a[0]), nil }},
	"round": {1, func(a []float64) (float64, error) { return math.Round(a[0]), nil }},
	"floor": {1, func(a []float64) (float64, error) { return math.Floor(a[0]), nil }},
	"ceil":  {1, func(a []float64) (float64, error) { return math.Ceil(a[0]), nil }},
	"exp":   {1, func(a []float64) (float64, error) { return math.Exp(a[0]), nil }},
	"sin":   {1, func(a []float64) (float64, error) { return math.Sin(a[0]), nil }},
	"cos":   {1, func(a []float64) (float64, error) { return math.Cos(a[0]), nil }},
	"tan":   {1, func(a []float64) (float64, error) { return math.Tan(a[0]), nil }},
	"ln":    {1, logOf("ln", math.Log)},
	"log":   {1, logOf("log", math.Log10)},
	"log2":  {1, logOf("log2", math.Log2)},
	"min": {-1, func(a []float64) (float64, error) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Min(m, x)
		}
		return m, nil
	}},
	"max": {-1, func(a []float64) (float64, error) {
		m := a[0]
		for _, x := range a[1:] {
			m = math.Max(m, x)
		}
		return m, nil
	}},
}

func logOf(name string, f func(float64) float64) func([]float64) (float64, error) {
	return func(a []float64) (float64, error) {
		if a[0] <= 0 {
			return 0, fmt.Errorf("%s of a number that is not positive (%s)", name, Format(a[0]))
		}
		return f(a[0]), nil
	}
}

var constants = map[string]float64{"pi": math.Pi, "π": math.Pi, "e": math.E}

type tokKind int

const (
	tokEOF tokKind = iota
	tokNum
	tokIdent
	tokOp // + - * / ^ ( ) ,
)

type token struct {
	kind tokKind
	text string // the operator (normalised: × is *, ÷ is /, ** is ^), the identifier, or the number as written
	num  float64
	pos  int // 1-based position of the token's first character
}

type parser struct {
	src string
	off int // byte offset of the next character
	tok token
	err error // a lexical error, reported when the parser reaches it
}

// next reads the next token into p.tok.
func (p *parser) next() {
	for p.off < len(p.src) {
		r, size := utf8.DecodeRuneInString(p.src[p.off:])
		if !unicode.IsSpace(r) {
			break
		}
		p.off += size
	}
	pos := utf8.RuneCountInString(p.src[:p.off]) + 1
	if p.off >= len(p.src) {
		p.tok = token{kind: tokEOF, pos: pos}
		return
	}
	rest := p.src[p.off:]
	r, size := utf8.DecodeRuneInString(rest)
	switch {
	case strings.HasPrefix(rest, "**"):
		p.tok, p.off = token{kind: tokOp, text: "^", pos: pos}, p.off+2
	case strings.ContainsRune("+-*/^(),", r):
		p.tok, p.off = token{kind: tokOp, text: string(r), pos: pos}, p.off+size
	case r == '×':
		p.tok, p.off = token{kind: tokOp, text: "*", pos: pos}, p.off+size
	case r == '÷':
		p.tok, p.off = token{kind: tokOp, text: "/", pos: pos}, p.off+size
	case r == '.' || ('0' <= r && r <= '9'):
		n := numberLen(rest)
		v, err := strconv.ParseFloat(rest[:n], 64)
		if err != nil {
			p.err = fmt.Errorf("%q at position %d is not a number", rest[:n], pos)
			v = 0
		}
		p.tok, p.off = token{kind: tokNum, text: rest[:n], num: v, pos: pos}, p.off+n
	case unicode.IsLetter(r):
		n := 0
		for n < len(rest) {
			r, size := utf8.DecodeRuneInString(rest[n:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' {
				break
			}
			n += size
		}
		p.tok, p.off = token{kind: tokIdent, text: strings.ToLower(rest[:n]), pos: pos}, p.off+n
	default:
		p.err = fmt.Errorf("unexpected %q at position %d", r, pos)
		p.tok, p.off = token{kind: tokOp, text: string(r), pos: pos}, p.off+size
	}
}

// numberLen is the length of the number at the start of s: digits with at most one point, then an optional
// exponent (e, an optional sign, digits). An "e" not followed by digits is left alone.
func numberLen(s string) int {
	n := 0
	for n < len(s) && ('0' <= s[n] && s[n] <= '9' || s[n] == '.') {
		n++
	}
	if n < len(s) && (s[n] == 'e' || s[n] == 'E') {
		m := n + 1
		if m < len(s) && (s[m] == '+' || s[m] == '-') {
			m++
		}
		if m < len(s) && '0' <= s[m] && s[m] <= '9' {
			for m < len(s) && '0' <= s[m] && s[m] <= '9' {
				m++
			}
			n = m
		}
	}
	return n
}

func (p *parser) is(op string) bool { return p.tok.kind == tokOp && p.tok.text == op }

// unexpected describes the current token when something else was wanted.
func (p *parser) unexpected(want string) error {
	if p.err != nil {
		return p.err
	}
	if p.tok.kind == tokEOF {
		return fmt.Errorf("the expression ends too early: expected %s", want)
	}
	return fmt.Errorf("unexpected %q at position %d: expected %s", p.tok.text, p.tok.pos, want)
}

// expr = term { ("+" | "-") term }
func (p *parser) expr(depth int) (float64, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("the expression nests deeper than %d levels", maxDepth)
	}
	v, err := p.term(depth)
	if err != nil {
		return 0, err
	}
	for p.is("+") || p.is("-") {
		op := p.tok.text
		p.next()
		w, err := p.term(depth)
		if err != nil {
			return 0, err
		}
		if op == "+" {
			v += w
		} else {
			v -= w
		}
	}
	return v, nil
}

// term = unary { ("*" | "/") unary }
func (p *parser) term(depth int) (float64, error) {
	v, err := p.unary(depth)
	if err != nil {
		return 0, err
	}
	for p.is("*") || p.is("/") {
		op := p.tok.text
		p.next()
		w, err := p.unary(depth)
		if err != nil {
			return 0, err
		}
		if op == "*" {
			v *= w
			continue
		}
		if w == 0 {
			return 0, ErrDivisionByZero
		}
		v /= w
	}
	return v, nil
}

// unary = ("-" | "+") unary | power
func (p *parser) unary(depth int) (float64, error) {
	if depth > maxDepth {
		return 0, fmt.Errorf("the expression nests deeper than %d levels", maxDepth)
	}
	if p.is("-") || p.is("+") {
		neg := p.is("-")
		p.next()
		v, err := p.unary(depth + 1)
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power(depth)
}

// power = primary [ "^" unary ]: the exponent is parsed by unary, which comes back here, so ^ groups to the right
// and may take a sign (2^-1).
func (p *parser) power(depth int) (float64, error) {
	base, err := p.primary(depth)
	if err != nil {
		return 0, err
	}
	if !p.is("^") {
		return base, nil
	}
	p.next()
	exp, err := p.unary(depth + 1)
	if err != nil {
		return 0, err
	}
	if base == 0 && exp < 0 {
		return 0, ErrDivisionByZero
	}
	v := math.Pow(base, exp)
	if math.IsNaN(v) {
		return 0, fmt.Errorf("%s to the power %s is not a real number", Format(base), Format(exp))
	}
	return v, nil
}

// primary = number | constant | function "(" expr { "," expr } ")" | "(" expr ")"
func (p *parser) primary(depth int) (float64, error) {
	if p.err != nil {
		return 0, p.err
	}
	switch t := p.tok; {
	case t.kind == tokNum:
		p.next()
		return t.num, nil
	case t.kind == tokIdent:
		p.next()
		if f, ok := functions[t.text]; ok {
			return p.call(depth, t, f)
		}
		if c, ok := constants[t.text]; ok {
			return c, nil
		}
		return 0, fmt.Errorf("unknown function or constant %q at position %d", t.text, t.pos)
	case p.is("("):
		p.next()
		v, err := p.expr(depth + 1)
		if err != nil {
			return 0, err
		}
		if !p.is(")") {
			return 0, p.closeParen(t.pos)
		}
		p.next()
		return v, nil
	}
	return 0, p.unexpected(`a number, a function or "("`)
}

func (p *parser) call(depth int, name token, f function) (float64, error) {
	if !p.is("(") {
		return 0, fmt.Errorf("%s at position %d needs its argument in parentheses, as in %s(2)", name.text, name.pos, name.text)
	}
	open := p.tok.pos
	p.next()
	var args []float64
	for {
		v, err := p.expr(depth + 1)
		if err != nil {
			return 0, err
		}
		args = append(args, v)
		if !p.is(",") {
			break
		}
		p.next()
	}
	if !p.is(")") {
		return 0, p.closeParen(open)
	}
	p.next()
	if f.args >= 0 && len(args) != f.args {
		return 0, fmt.Errorf("%s takes %d argument, not %d", name.text, f.args, len(args))
	}
	return f.f(args)
}

func (p *parser) closeParen(open int) error {
	if p.err != nil {
		return p.err
	}
	if p.tok.kind == tokEOF {
		return fmt.Errorf(`the "(" at position %d is never closed`, open)
	}
	return p.unexpected(fmt.Sprintf(`")" to close the "(" at position %d`, open))
}
