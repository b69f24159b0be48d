package expr

import (
	"fmt"
	"strings"

	"go.starlark.net/starlark"
)

// stringMethod returns the Python string methods Starlark lacks, and bounded versions of those that build.
func stringMethod(th *starlark.Thread, s starlark.String, name string) starlark.Value {
	var f builtinFunc
	switch name {
	case "ljust", "rjust", "center", "zfill":
		f = padMethod(s, name)
	case "casefold", "swapcase", "isnumeric", "isdecimal":
		f = caseMethod(s, name)
	case "find", "rfind", "index", "rindex":
		if isASCII(string(s)) {
			return nil
		}
		f = findMethod(s, name)
	case "join", "replace", "format":
		inner, err := s.Attr(name)
		if err != nil || inner == nil {
			return nil
		}
		f = boundedMethod(s, name, inner)
	default:
		return nil
	}
	return starlark.NewBuiltin(name, f)
}

// padWidth reads (width[, fillchar]) and returns how many fill characters to add, charged.
func padWidth(th *starlark.Thread, s starlark.String, name string, args starlark.Tuple, kwargs []starlark.Tuple) (int, string, error) {
	var w int
	f := " "
	var err error
	if name == "zfill" {
		err = starlark.UnpackPositionalArgs(name, args, kwargs, 1, &w)
	} else {
		err = starlark.UnpackPositionalArgs(name, args, kwargs, 1, &w, &f)
	}
	if err != nil {
		return 0, "", err
	}
	if limit := meterOf(th).limits.MaxBytes; w > limit {
		return 0, "", fmt.Errorf("%s(%d) would be more than %d bytes", name, w, limit)
	}
	if len([]rune(f)) != 1 {
		return 0, "", fmt.Errorf("%s: the fill character must be exactly one character", name)
	}
	return w - len([]rune(string(s))), f, charge(th, w)
}

func padMethod(s starlark.String, name string) builtinFunc {
	return func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		n, f, err := padWidth(th, s, name, args, kwargs)
		if err != nil || n <= 0 {
			return s, err
		}
		switch name {
		case "ljust":
			return s + starlark.String(strings.Repeat(f, n)), nil
		case "rjust":
			return starlark.String(strings.Repeat(f, n)) + s, nil
		case "zfill":
			str := string(s)
			sign := ""
			if strings.HasPrefix(str, "-") || strings.HasPrefix(str, "+") {
				sign, str = str[:1], str[1:]
			}
			return starlark.String(sign + strings.Repeat("0", n) + str), nil
		}
		w := n + len([]rune(string(s)))
		left := n/2 + (n & w & 1) // CPython's rule for where the odd fill goes
		return starlark.String(strings.Repeat(f, left)) + s + starlark.String(strings.Repeat(f, n-left)), nil
	}
}

func caseMethod(s starlark.String, name string) builtinFunc {
	return func(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 0); err != nil {
			return nil, err
		}
		switch name {
		case "casefold":
			return starlark.String(strings.ToLower(string(s))), nil
		case "swapcase":
			r := []rune(string(s))
			for i, c := range r {
				if u := strings.ToUpper(string(c)); u != string(c) {
					r[i] = []rune(u)[0]
				} else {
					r[i] = []rune(strings.ToLower(string(c)))[0]
				}
			}
			return starlark.String(string(r)), nil
		}
		if s == "" {
			return starlark.False, nil
		}
		for _, c := range string(s) {
			if c < '0' || c > '9' {
				return starlark.False, nil
			}
		}
		return starlark.True, nil
	}
}

// boundedMethod is join, replace or format, refused when what it would build is over the limit.
func boundedMethod(s starlark.String, name string, inner starlark.Value) builtinFunc {
	return func(th *starlark.Thread, _ *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
		limit := meterOf(th).limits.MaxBytes
		size := len(s)
		switch name {
		case "join":
			if len(args) == 1 {
				n, _ := lengthOf(args[0])
				size = sizeOf(args[0], limit) + n*len(s)
			}
		case "replace":
			if len(args) >= 2 {
				old, _ := starlark.AsString(args[0])
				repl, _ := starlark.AsString(args[1])
				size = len(s) + strings.Count(string(s), old)*(len(repl)-len(old))
			}
		case "format":
			for _, a := range args {
				size += sizeOf(a, limit)
			}
			for _, kv := range kwargs {
				size += sizeOf(kv[1], limit)
			}
		}
		if size > limit {
			return nil, fmt.Errorf("%s would build more than %d bytes", name, limit)
		}
		if err := charge(th, size); err != nil {
			return nil, err
		}
		if name == "format" {
			out, err := strFormat(string(s), args, kwargs, limit)
			return starlark.String(out), err
		}
		return starlark.Call(th, inner, args, kwargs)
	}
}
