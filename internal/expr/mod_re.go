package expr

import (
	"fmt"
	"regexp"
	"strings"

	"go.starlark.net/starlark"
)

// regexBuiltins are re and Julep's match_regex and search_regex. Julep evaluates them with RE2, as Go's
// regexp does, so a pattern runs in linear time and lookarounds and backreferences are refused by both.
func regexBuiltins() starlark.StringDict {
	return starlark.StringDict{
		"re": newModule("re", starlark.StringDict{
			"search":     fn("re.search", reFind),
			"match":      fn("re.match", reFind),
			"fullmatch":  fn("re.fullmatch", reFind),
			"findall":    fn("re.findall", reFindall),
			"finditer":   fn("re.finditer", reFindall),
			"split":      fn("re.split", reSplit),
			"sub":        fn("re.sub", reSub),
			"subn":       fn("re.subn", reSub),
			"escape":     fn("re.escape", reEscape),
			"IGNORECASE": starlark.MakeInt(reIgnoreCase), "I": starlark.MakeInt(reIgnoreCase),
			"MULTILINE": starlark.MakeInt(reMultiline), "M": starlark.MakeInt(reMultiline),
			"DOTALL": starlark.MakeInt(reDotAll), "S": starlark.MakeInt(reDotAll),
		}),
		"search_regex": fn("search_regex", reFind),
		"match_regex":  fn("match_regex", reFind),
	}
}

// Python's flag values.
const (
	reIgnoreCase = 2
	reMultiline  = 8
	reDotAll     = 16
)

// compileRegex compiles a Python pattern for RE2; anchor is "" (search), "match" or "fullmatch".
func compileRegex(pattern string, flags int, anchor string) (*regexp.Regexp, error) {
	p := strings.ReplaceAll(pattern, `\Z`, `\z`)
	var f string
	if flags&reIgnoreCase != 0 {
		f += "i"
	}
	if flags&reMultiline != 0 {
		f += "m"
	}
	if flags&reDotAll != 0 {
		f += "s"
	}
	if f != "" {
		p = "(?" + f + ")" + p
	}
	switch anchor {
	case "match":
		p = `\A(?:` + p + `)`
	case "fullmatch":
		p = `\A(?:` + p + `)\z`
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("the pattern %q is not one RE2 accepts (no lookarounds or backreferences): %v", pattern, err)
	}
	return re, nil
}

// regexArgs unpacks (pattern, string, flags=0).
func regexArgs(b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple, anchor string) (*regexp.Regexp, string, error) {
	var pattern, s string
	flags := 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "string", &s, "flags?", &flags); err != nil {
		return nil, "", err
	}
	re, err := compileRegex(pattern, flags, anchor)
	return re, s, err
}

// reFind is re.search, re.match, re.fullmatch, search_regex (re.search) and match_regex (a bool: whether
// the whole string matches).
func reFind(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	anchor := strings.TrimPrefix(b.Name(), "re.")
	switch b.Name() {
	case "search_regex", "re.search":
		anchor = ""
	case "match_regex":
		anchor = "fullmatch"
	}
	re, s, err := regexArgs(b, args, kwargs, anchor)
	if err != nil {
		return nil, err
	}
	if err := charge(th, len(s)); err != nil {
		return nil, err
	}
	loc := re.FindStringSubmatchIndex(s)
	if b.Name() == "match_regex" {
		return starlark.Bool(loc != nil), nil
	}
	if loc == nil {
		return starlark.None, nil
	}
	return &reMatch{re: re, s: s, loc: loc}, nil
}

// reFindall is re.findall (strings, or tuples of the groups) and re.finditer (match objects, as a list).
func reFindall(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	re, s, err := regexArgs(b, args, kwargs, "")
	if err != nil {
		return nil, err
	}
	if err := charge(th, len(s)); err != nil {
		return nil, err
	}
	var out []starlark.Value
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		m := &reMatch{re: re, s: s, loc: loc}
		switch {
		case b.Name() == "re.finditer":
			out = append(out, m)
		case re.NumSubexp() == 0:
			out = append(out, m.group(0))
		case re.NumSubexp() == 1:
			out = append(out, m.groupOr(1, starlark.String("")))
		default:
			out = append(out, m.groups(starlark.String("")))
		}
	}
	return starlark.NewList(out), charge(th, len(out))
}

func reSplit(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	maxsplit, flags := 0, 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "string", &s, "maxsplit?", &maxsplit, "flags?", &flags); err != nil {
		return nil, err
	}
	re, err := compileRegex(pattern, flags, "")
	if err != nil {
		return nil, err
	}
	if err := charge(th, len(s)); err != nil {
		return nil, err
	}
	var out []starlark.Value
	last := 0
	for i, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		if maxsplit > 0 && i >= maxsplit {
			break
		}
		out = append(out, starlark.String(s[last:loc[0]]))
		m := &reMatch{re: re, s: s, loc: loc}
		for g := 1; g <= re.NumSubexp(); g++ {
			out = append(out, m.groupOr(g, starlark.None))
		}
		last = loc[1]
	}
	out = append(out, starlark.String(s[last:]))
	return starlark.NewList(out), nil
}

// reSub is re.sub and re.subn: repl is a template (\1, \g<name>) or a function of the match.
func reSub(th *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var pattern, s string
	var repl starlark.Value
	count, flags := 0, 0
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "pattern", &pattern, "repl", &repl, "string", &s, "count?", &count, "flags?", &flags); err != nil {
		return nil, err
	}
	re, err := compileRegex(pattern, flags, "")
	if err != nil {
		return nil, err
	}
	limit := meterOf(th).limits.MaxBytes
	var out strings.Builder
	last, n := 0, 0
	for _, loc := range re.FindAllStringSubmatchIndex(s, -1) {
		if count > 0 && n >= count {
			break
		}
		out.WriteString(s[last:loc[0]])
		r, err := replacement(th, &reMatch{re: re, s: s, loc: loc}, repl)
		if err != nil {
			return nil, err
		}
		out.WriteString(r)
		if out.Len() > limit {
			return nil, fmt.Errorf("%s would build more than %d bytes", b.Name(), limit)
		}
		last, n = loc[1], n+1
	}
	out.WriteString(s[last:])
	if err := charge(th, out.Len()); err != nil {
		return nil, err
	}
	if b.Name() == "re.subn" {
		return starlark.Tuple{starlark.String(out.String()), starlark.MakeInt(n)}, nil
	}
	return starlark.String(out.String()), nil
}

func replacement(th *starlark.Thread, m *reMatch, repl starlark.Value) (string, error) {
	if s, ok := repl.(starlark.String); ok {
		return m.expand(string(s))
	}
	if _, ok := repl.(starlark.Callable); !ok {
		return "", fmt.Errorf("re.sub: repl must be a str or a function, not %s", repl.Type())
	}
	v, err := starlark.Call(th, repl, starlark.Tuple{m}, nil)
	if err != nil {
		return "", err
	}
	s, ok := v.(starlark.String)
	if !ok {
		return "", fmt.Errorf("re.sub: the function returned %s, want a str", v.Type())
	}
	return string(s), nil
}

func reEscape(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var s string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &s); err != nil {
		return nil, err
	}
	// Python (3.7 on) escapes the characters that mean something in a pattern.
	var out strings.Builder
	for _, r := range s {
		if strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", r) {
			out.WriteByte('\\')
		}
		out.WriteRune(r)
	}
	return starlark.String(out.String()), nil
}
