package expr

import (
	"errors"
	"fmt"
	"sync"

	"go.starlark.net/starlark"
)

const (
	meterKey = "contrail.meter"
	seedKey  = "contrail.seed"
	randKey  = "contrail.rand"
)

// meter is an evaluation's budget of allocations.
type meter struct {
	limits Limits
	used   int64
}

func meterOf(th *starlark.Thread) *meter {
	if m, ok := th.Local(meterKey).(*meter); ok {
		return m
	}
	return &meter{limits: DefaultLimits()}
}

// charge counts n elements or bytes about to be built.
func charge(th *starlark.Thread, n int) error {
	m := meterOf(th)
	m.used += int64(n)
	if m.used > m.limits.MaxAlloc {
		return fmt.Errorf("the expression builds too much (more than %d elements and bytes)", m.limits.MaxAlloc)
	}
	return nil
}

// checkPrint refuses to print a value larger than the limit (before printing builds it).
func checkPrint(th *starlark.Thread, v starlark.Value) error {
	limit := meterOf(th).limits.MaxBytes
	n := sizeOf(v, limit)
	if n > limit {
		return fmt.Errorf("the text would be more than %d bytes", limit)
	}
	return charge(th, n)
}

// builtins are the names every expression sees besides the context names; built once, never changed.
var builtins = sync.OnceValue(func() starlark.StringDict {
	b := starlark.StringDict{
		"__attr__":   starlark.NewBuiltin("__attr__", attrBuiltin),
		"__op__":     starlark.NewBuiltin("__op__", opBuiltin),
		"__fmt__":    starlark.NewBuiltin("__fmt__", fmtBuiltin),
		"__pow__":    starlark.NewBuiltin("**", powBuiltin),
		"__chain__":  starlark.NewBuiltin("__chain__", chainBuiltin),
		"__cmp__":    starlark.NewBuiltin("__cmp__", cmpBuiltin),
		"__unpack__": starlark.NewBuiltin("__unpack__", unpackBuiltin),
		"__s__":      starlark.NewBuiltin("__s__", subscriptable),
		"__iter__":   starlark.NewBuiltin("__iter__", iterable),
		"NEWLINE":    starlark.String("\n"),
		"true":       starlark.True,
		"false":      starlark.False,
		"null":       starlark.None,
	}
	// Starlark's own builtins that Python answers differently are replaced by refusals, whatever binds them.
	for _, name := range []string{"type", "dir", "hash", "fail", "print", "bytes"} {
		why := refusedNames[name]
		b[name] = starlark.NewBuiltin(name, func(*starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error) {
			return nil, errors.New(why)
		})
	}
	for _, group := range []starlark.StringDict{pythonBuiltins(), randomBuiltins(), jsonBuiltins(), yamlBuiltins(),
		regexBuiltins(), mathBuiltins(), textBuiltins(), timeBuiltins()} {
		for k, v := range group {
			b[k] = v
		}
	}
	return b
})

// refusedNames are the Python builtins an expression may not call, with the reason it is told. Starlark's
// own builtins that Python answers differently (type, dir, hash) are among them, so that none answers wrongly.
var refusedNames = map[string]string{
	"open":       "open() is not available: expressions have no file or network access",
	"input":      "input() is not available in expressions; use a wait_for_input step",
	"print":      "print() is not available in expressions; use a log step",
	"exec":       "exec() is not available in expressions",
	"eval":       "eval() is not available in expressions",
	"compile":    "compile() is not available in expressions",
	"globals":    "globals() is not available in expressions",
	"locals":     "locals() is not available in expressions",
	"vars":       "vars() is not available in expressions",
	"dir":        "dir() is not available in expressions",
	"type":       "type() is not available in expressions; use isinstance(x, T)",
	"hash":       "hash() is not available in expressions",
	"id":         "id() is not available in expressions",
	"setattr":    "setattr() is not available in expressions",
	"delattr":    "delattr() is not available in expressions",
	"breakpoint": "breakpoint() is not available in expressions",
	"exit":       "exit() is not available in expressions",
	"quit":       "quit() is not available in expressions",
	"help":       "help() is not available in expressions",
	"fail":       "fail() is not available in expressions; use an error step",
	"iter":       "iter() is not available in expressions",
	"next":       "next() is not available in expressions",
	"object":     "object is not available in expressions",
	"super":      "super() is not available in expressions",
	"memoryview": "memoryview is not available in expressions",
	"bytes":      "bytes are not available in expressions; use a str",
	"os":         "the os module is not available: expressions have no file, process or network access",
	"sys":        "the sys module is not available in expressions",
	"subprocess": "the subprocess module is not available: expressions cannot run programs",
	// Julep's helpers that need a language model or an HTML library Contrail does not carry.
	"nlp":                 "nlp() (spaCy) is not available in Contrail's expressions",
	"chunk_doc":           "chunk_doc() (spaCy) is not available in Contrail's expressions",
	"humanize_text_alpha": "humanize_text_alpha() is not available in Contrail's expressions",
	"markdown_to_html":    "markdown_to_html() is not available in Contrail's expressions",
	"html_to_markdown":    "html_to_markdown() is not available in Contrail's expressions",
}

func predeclaredNames(extra []string) map[string]bool {
	known := map[string]bool{}
	for k := range builtins() {
		known[k] = true
	}
	for _, k := range contextNames {
		known[k] = true
	}
	for _, k := range extra {
		known[k] = true
	}
	return known
}

// predeclare binds the names an expression uses (converting only the parts of the environment it reads).
func predeclare(env *Env, used []string) (starlark.StringDict, error) {
	d := make(starlark.StringDict, len(used))
	var inputs, outputs *lazyList
	lists := func() {
		if inputs == nil {
			inputs, outputs = newLazyList(env.Inputs), newLazyList(env.Outputs)
		}
	}
	for _, name := range used {
		if v, ok := env.Vars[name]; ok {
			sv, err := ToStarlark(v)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
			d[name] = sv
			continue
		}
		switch name {
		case "_":
			in, err := ToStarlark(env.Input)
			if err != nil {
				return nil, fmt.Errorf("_: %w", err)
			}
			d[name] = in
		case "state":
			st, err := ToStarlark(orEmptyMap(env.State))
			if err != nil {
				return nil, fmt.Errorf("state: %w", err)
			}
			d[name] = st
		case "inputs":
			lists()
			d[name] = inputs
		case "outputs":
			lists()
			d[name] = outputs
		case "steps":
			lists()
			d[name] = &stepsView{inputs: inputs, outputs: outputs, labels: env.Labels}
		default:
			if b, ok := builtins()[name]; ok {
				d[name] = b
			} else {
				// A name compiled as extra but not given: None, as an unset variable.
				d[name] = starlark.None
			}
		}
	}
	return d, nil
}

func orEmptyMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func lengthOf(v starlark.Value) (int, bool) {
	if s, ok := v.(starlark.Sequence); ok {
		return s.Len(), true
	}
	if d, ok := v.(*starlark.Dict); ok {
		return d.Len(), true
	}
	if d, ok := v.(*starlark.Set); ok {
		return d.Len(), true
	}
	return 0, false
}
