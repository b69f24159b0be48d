package expr

import (
	"strconv"
	"strings"
)

// pythonKeywords cannot be names; the ones an expression may hold are read where they stand.
var pythonKeywords = map[string]bool{
	"False": false, "None": false, "True": false, "and": true, "as": true, "assert": true, "async": true,
	"await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true,
	"else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true,
	"import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true,
	"pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true,
}

func (p *parser) atom() string {
	t := p.next()
	switch t.kind {
	case tName:
		return p.name(t.text)
	case tNumber:
		return t.text
	case tString:
		parts := []string{t.text}
		for p.peek().kind == tString {
			parts = append(parts, p.next().text)
		}
		if len(parts) == 1 {
			return t.text
		}
		return "(" + strings.Join(parts, " + ") + ")"
	case tOp:
		switch t.text {
		case "(":
			return p.parenthesised()
		case "[":
			return p.listDisplay()
		case "{":
			return p.braceDisplay()
		case "...":
			p.refuse("... (Ellipsis) is not supported in expressions")
		}
	}
	p.fail("unexpected %s", t.describe())
	return ""
}

func (p *parser) name(n string) string {
	switch {
	case n == "import":
		p.refuse("import is not available in expressions; the modules they may use are already there (re, json, math, ...)")
	case n == "yield" || n == "await" || n == "async":
		p.refuse("%s is not supported in expressions", n)
	case pythonKeywords[n]:
		p.fail("unexpected keyword %q", n)
	case strings.HasPrefix(n, "__"):
		p.refuse("names starting with __ (%s) are not available in expressions", n)
	case n == "load":
		p.refuse("load is not available in expressions")
	}
	return n
}

// parenthesised is what follows '(': a parenthesised expression, a tuple, or a generator expression (read
// as a list comprehension: the same items, computed at once).
func (p *parser) parenthesised() string {
	if p.accept(")") {
		return "()"
	}
	if p.atKw("yield") {
		p.refuse("yield is not supported in expressions")
	}
	first := p.starTest()
	if !first.star && p.atKw("for") {
		x := "[" + first.src + p.compFor() + "]"
		p.expect(")")
		return x
	}
	if !first.star && p.accept(")") {
		return "(" + first.src + ")"
	}
	items := p.itemsAfter(first, ")")
	return sequence("tuple", items)
}

// itemsAfter reads the rest of a comma-separated display whose first item was read, through its closer.
func (p *parser) itemsAfter(first item, closer string) []item {
	items := []item{first}
	for !p.accept(closer) {
		p.expect(",")
		if p.accept(closer) {
			break
		}
		items = append(items, p.starTest())
	}
	return items
}

func (p *parser) listDisplay() string {
	if p.accept("]") {
		return "[]"
	}
	first := p.starTest()
	if !first.star && p.atKw("for") {
		x := "[" + first.src + p.compFor() + "]"
		p.expect("]")
		return x
	}
	return sequence("list", p.itemsAfter(first, "]"))
}

// braceDisplay is what follows '{': a dict or a set, displayed or comprehended, with ** and * unpacking.
func (p *parser) braceDisplay() string {
	if p.accept("}") {
		return "{}"
	}
	if p.atOp("**") {
		return p.dictDisplay()
	}
	start := p.i
	first := p.starTest()
	if !first.star && p.atOp(":") {
		p.i = start
		return p.dictDisplay()
	}
	if !first.star && p.atKw("for") {
		x := "__unpack__(\"set\", [" + first.src + p.compFor() + "])"
		p.expect("}")
		return x
	}
	return sequence("set", p.itemsAfter(first, "}"))
}

// dictDisplay reads {k: v, **d, ...} or {k: v for ...} after its '{'. Unpacking merges the parts in order,
// later keys replacing earlier ones, as Python does.
func (p *parser) dictDisplay() string {
	var parts, run []string
	flush := func() {
		if len(run) > 0 {
			parts = append(parts, "{"+strings.Join(run, ", ")+"}")
			run = nil
		}
	}
	for !p.accept("}") {
		if len(parts)+len(run) > 0 {
			p.expect(",")
			if p.accept("}") {
				break
			}
		}
		if p.accept("**") {
			flush()
			parts = append(parts, p.bitOr())
			continue
		}
		k := p.test()
		p.expect(":")
		v := p.test()
		if len(parts)+len(run) == 0 && p.atKw("for") {
			x := "{" + k + ": " + v + p.compFor() + "}"
			p.expect("}")
			return x
		}
		run = append(run, k+": "+v)
	}
	if len(parts) == 0 {
		if len(run) == 0 {
			return "{}"
		}
		return "{" + strings.Join(run, ", ") + "}"
	}
	flush()
	return "__unpack__(\"dict\", " + strings.Join(parts, ", ") + ")"
}

// sequence writes a tuple, list or set display; with *x items, it concatenates the parts in order.
func sequence(kind string, items []item) string {
	starred := false
	var srcs []string
	for _, it := range items {
		starred = starred || it.star
		srcs = append(srcs, it.src)
	}
	if !starred {
		switch kind {
		case "list":
			return "[" + strings.Join(srcs, ", ") + "]"
		case "tuple":
			return "(" + strings.Join(srcs, ", ") + ",)"
		}
		return "__unpack__(\"set\", (" + strings.Join(srcs, ", ") + ",))"
	}
	var parts, run []string
	for _, it := range items {
		if !it.star {
			run = append(run, it.src)
			continue
		}
		if len(run) > 0 {
			parts = append(parts, "("+strings.Join(run, ", ")+",)")
			run = nil
		}
		parts = append(parts, it.src)
	}
	if len(run) > 0 {
		parts = append(parts, "("+strings.Join(run, ", ")+",)")
	}
	return "__unpack__(" + strconv.Quote(kind) + ", " + strings.Join(parts, ", ") + ")"
}

// compFor reads the clauses of a comprehension: for ... in ... [if ...] [for ...].
func (p *parser) compFor() string {
	var b strings.Builder
	for {
		switch {
		case p.atKw("for"):
			p.next()
			b.WriteString(" for " + p.targets() + " in ")
			p.expectKw("in")
			b.WriteString("__iter__(" + p.orTest() + ")")
		case p.atKw("if"):
			p.next()
			b.WriteString(" if " + p.orTest())
		case p.atKw("async"):
			p.refuse("async comprehensions are not supported")
		default:
			return b.String()
		}
	}
}

// targets reads the names a for clause binds: `x`, `k, v`, `(i, (a, b))`.
func (p *parser) targets() string {
	var names []string
	for {
		if p.atOp("*") {
			p.refuse("starred targets in a for clause are not supported")
		}
		names = append(names, p.bitOr())
		if !p.accept(",") || p.atKw("in") {
			break
		}
	}
	return strings.Join(names, ", ")
}

// arguments reads a call's arguments after its '(' through its ')'. A lone generator argument, as in
// sum(x for x in xs), is a list comprehension.
func (p *parser) arguments() string {
	var args []string
	for !p.accept(")") {
		if len(args) > 0 {
			p.expect(",")
			if p.accept(")") {
				break
			}
		}
		switch {
		case p.accept("**"):
			args = append(args, "**"+p.test())
		case p.accept("*"):
			args = append(args, "*"+p.test())
		case p.peek().kind == tName && p.peekAt(1).kind == tOp && p.peekAt(1).text == "=":
			kw := p.name(p.next().text)
			p.next()
			args = append(args, kw+"="+p.test())
		default:
			x := p.test()
			if p.atKw("for") {
				x = "[" + x + p.compFor() + "]"
			}
			args = append(args, x)
		}
	}
	return strings.Join(args, ", ")
}

// subscript reads x[i], x[lo:hi:step] or x[a, b] after its '[' through its ']'.
func (p *parser) subscript() string {
	var parts []string
	sliced := false
	for {
		s, isSlice := p.slice()
		sliced = sliced || isSlice
		parts = append(parts, s)
		if !p.accept(",") || p.atOp("]") {
			break
		}
	}
	p.expect("]")
	if len(parts) == 1 {
		return parts[0]
	}
	if sliced {
		p.refuse("slicing with several dimensions is not supported")
	}
	return "(" + strings.Join(parts, ", ") + ",)"
}

func (p *parser) slice() (string, bool) {
	var lo, hi, step string
	if !p.atOp(":") {
		lo = p.test()
		if !p.atOp(":") {
			return lo, false
		}
	}
	p.expect(":")
	if !p.atOp(":", "]", ",") {
		hi = p.test()
	}
	if p.accept(":") && !p.atOp("]", ",") {
		step = p.test()
	}
	return lo + ":" + hi + ":" + step, true
}

// lambda reads lambda [params]: body.
func (p *parser) lambda() string {
	p.expectKw("lambda")
	var params []string
	for !p.accept(":") {
		if len(params) > 0 {
			p.expect(",")
		}
		switch {
		case p.accept("**"):
			params = append(params, "**"+p.paramName())
		case p.accept("*"):
			if p.atOp(",", ":") {
				params = append(params, "*")
			} else {
				params = append(params, "*"+p.paramName())
			}
		case p.atOp("/"):
			p.refuse("positional-only parameters (/) are not supported")
		default:
			n := p.paramName()
			if p.accept("=") {
				n += "=" + p.test()
			}
			params = append(params, n)
		}
	}
	body := p.test()
	if len(params) == 0 {
		return "(lambda: " + body + ")"
	}
	return "(lambda " + strings.Join(params, ", ") + ": " + body + ")"
}

func (p *parser) paramName() string {
	t := p.next()
	if t.kind != tName {
		p.fail("expected a parameter name, found %s", t.describe())
	}
	return p.name(t.text)
}
