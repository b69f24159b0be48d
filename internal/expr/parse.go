package expr

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// translate parses a Python expression and writes it as the Starlark expression that computes the same
// value. What Starlark lacks is written as calls to the helpers in ops.go: ** (__pow__), chained comparisons
// (__chain__), `is` (__is__), set displays and unpacking in displays (__unpack__), and attribute access
// (__attr__, so that dict keys read as attributes). Equality, membership and the operators that can build
// large values (+, *, %) go through __cmp__ and __op__, which keep Python's answers and charge the budget.
// A construct that has no translation is refused by name, never approximated.
func translate(src string) (out string, err error) {
	toks, err := lex(src)
	if err != nil {
		return "", err
	}
	p := &parser{toks: toks}
	defer func() {
		if r := recover(); r != nil {
			se, ok := r.(syntaxErr)
			if !ok {
				panic(r)
			}
			out, err = "", errors.New(string(se))
		}
	}()
	out = p.testList()
	if t := p.peek(); t.kind != tEOF {
		p.fail("unexpected %s", t.describe())
	}
	return out, nil
}

type syntaxErr string

type parser struct {
	toks []token
	i    int
}

// fail stops at a syntax error; refuse stops at Python that expressions do not support, naming it.
func (p *parser) fail(format string, args ...any) {
	panic(syntaxErr("syntax error: " + fmt.Sprintf(format, args...)))
}

func (p *parser) refuse(format string, args ...any) {
	panic(syntaxErr(fmt.Sprintf(format, args...)))
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return token{kind: tEOF}
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) atOp(ops ...string) bool {
	t := p.peek()
	if t.kind != tOp {
		return false
	}
	for _, o := range ops {
		if t.text == o {
			return true
		}
	}
	return false
}

func (p *parser) atKw(kw string) bool { t := p.peek(); return t.kind == tName && t.text == kw }

func (p *parser) accept(op string) bool {
	if p.atOp(op) {
		p.i++
		return true
	}
	return false
}

func (p *parser) expect(op string) {
	if !p.accept(op) {
		p.fail("expected %q, found %s", op, p.peek().describe())
	}
}

func (p *parser) expectKw(kw string) {
	if !p.atKw(kw) {
		p.fail("expected %q, found %s", kw, p.peek().describe())
	}
	p.i++
}

// item is one element of a display or tuple; star marks *x.
type item struct {
	src  string
	star bool
}

// testList is `a` or `a, *b, c` (a tuple) at the top of an expression.
func (p *parser) testList() string {
	first := p.starTest()
	if !p.atOp(",") {
		if first.star {
			p.fail("can't use starred expression here")
		}
		return first.src
	}
	items := []item{first}
	for p.accept(",") {
		if p.atOp(")", "]", "}") || p.peek().kind == tEOF {
			break
		}
		items = append(items, p.starTest())
	}
	return sequence("tuple", items)
}

func (p *parser) starTest() item {
	if p.accept("*") {
		return item{src: p.bitOr(), star: true}
	}
	return item{src: p.test()}
}

func (p *parser) test() string {
	if p.atKw("lambda") {
		return p.lambda()
	}
	x := p.orTest()
	if p.atOp(":=") {
		p.refuse("the walrus operator := is not supported in expressions")
	}
	if !p.atKw("if") {
		return x
	}
	p.next()
	cond := p.orTest()
	p.expectKw("else")
	return "(" + x + " if " + cond + " else " + p.test() + ")"
}

func (p *parser) orTest() string {
	x := p.andTest()
	for p.atKw("or") {
		p.next()
		x = "(" + x + " or " + p.andTest() + ")"
	}
	return x
}

func (p *parser) andTest() string {
	x := p.notTest()
	for p.atKw("and") {
		p.next()
		x = "(" + x + " and " + p.notTest() + ")"
	}
	return x
}

func (p *parser) notTest() string {
	if p.atKw("not") {
		p.next()
		return "(not " + p.notTest() + ")"
	}
	return p.comparison()
}

// compOp reads a comparison operator, if one is next.
func (p *parser) compOp() (string, bool) {
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "<" || t.text == ">" || t.text == "==" || t.text == ">=" || t.text == "<=" || t.text == "!="):
		p.next()
		return t.text, true
	case t.kind == tName && t.text == "in":
		p.next()
		return "in", true
	case t.kind == tName && t.text == "not" && p.peekAt(1).kind == tName && p.peekAt(1).text == "in":
		p.i += 2
		return "not in", true
	case t.kind == tName && t.text == "is":
		p.next()
		if p.atKw("not") {
			p.next()
			return "is not", true
		}
		return "is", true
	}
	return "", false
}

// comparison is a comparison or a chain of them: `a < b < c` evaluates b once and c only when a < b, as
// Python does, by passing the later operands as functions.
func (p *parser) comparison() string {
	first := p.bitOr()
	var ops, rest []string
	for {
		op, ok := p.compOp()
		if !ok {
			break
		}
		ops = append(ops, op)
		rest = append(rest, p.bitOr())
	}
	switch len(ops) {
	case 0:
		return first
	case 1:
		return compare(ops[0], first, rest[0])
	}
	parts := []string{first}
	for i := range ops {
		parts = append(parts, strconv.Quote(ops[i]), "lambda: "+rest[i])
	}
	return "__chain__(" + strings.Join(parts, ", ") + ")"
}

func compare(op, x, y string) string {
	switch op {
	case "<", ">", "<=", ">=":
		return "(" + x + " " + op + " " + y + ")"
	}
	return "__cmp__(" + strconv.Quote(op) + ", " + x + ", " + y + ")"
}

// binaryLevels are Python's binary operators from the loosest to the tightest (** is apart: it binds to
// the right and tighter than a unary minus on its left).
var binaryLevels = [][]string{{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "/", "//", "%", "@"}}

func (p *parser) bitOr() string { return p.binary(0) }

func (p *parser) binary(level int) string {
	if level == len(binaryLevels) {
		return p.factor()
	}
	x := p.binary(level + 1)
	for p.atOp(binaryLevels[level]...) {
		op := p.next().text
		y := p.binary(level + 1)
		switch op {
		case "+", "*", "%":
			x = "__op__(" + strconv.Quote(op) + ", " + x + ", " + y + ")"
		case "@":
			p.refuse("the @ (matrix multiplication) operator is not supported")
		default:
			x = "(" + x + " " + op + " " + y + ")"
		}
	}
	return x
}

func (p *parser) factor() string {
	if p.atOp("-", "+", "~") {
		op := p.next().text
		return "(" + op + p.factor() + ")"
	}
	x := p.primary()
	if p.accept("**") {
		return "__pow__(" + x + ", " + p.factor() + ")"
	}
	return x
}

func (p *parser) primary() string {
	if p.atKw("await") {
		p.refuse("await is not supported in expressions")
	}
	x := p.atom()
	for {
		switch {
		case p.accept("("):
			x += "(" + p.arguments() + ")"
		case p.accept("["):
			x = "__s__(" + x + ")[" + p.subscript() + "]"
		case p.accept("."):
			t := p.next()
			if t.kind != tName {
				p.fail("expected an attribute name after '.', found %s", t.describe())
			}
			if strings.HasPrefix(t.text, "__") {
				p.refuse("attribute access to %s is not allowed in expressions", t.text)
			}
			x = "__attr__(" + x + ", " + strconv.Quote(t.text) + ")"
		default:
			return x
		}
	}
}
