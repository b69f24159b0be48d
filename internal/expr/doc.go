// Package expr evaluates the Python expressions of Julep's tasks, and the values that hold them (an evaluate
// step's map, a tool's arguments, ...).
//
// An expression is parsed as Python (parse.go, parse_atoms.go, lex.go) and written as the Starlark program
// that computes the same value, which go.starlark.net runs under limits. What Starlark lacks or answers
// differently is written as calls to helpers (ops.go): ** , chained comparisons (1 < x < 3), `is` as
// identity (`[] is []` is False; `is` between two equal numbers or strings, which Python leaves undefined,
// is refused), == and `in` with Python's answers (True == 1), set displays and comprehensions, unpacking
// in displays ({**a, 'k': 1}, [*xs, 4]), generator arguments (sum(x for x in xs)), f-strings with format
// specs, implicit string concatenation. A construct with no translation (the walrus, @, complex and bytes
// literals, names and attributes starting with __) is refused by name when the expression is compiled,
// never approximated.
//
// An expression sees `_` (the step's input), `inputs`, `outputs` and `steps` (steps[i].input,
// steps[i].output, also by label: steps["label"]), `state`, Python's builtins (builtins.go,
// pybuiltins.go; isinstance and divmod among them), the string, list and dict methods (attr.go), and the
// modules and helpers Julep offers (agents_api/common/utils/evaluator.py), one file each: re, match_regex,
// search_regex (mod_re.go, on RE2 as Julep's re2); json, load_json, dump_json, extract_json (mod_json.go);
// yaml, load_yaml, dump_yaml (mod_yaml.go); math and statistics (mod_math.go); base64, string, csv,
// urllib.parse (mod_text.go, mod_urllib.go); datetime and time (mod_datetime*.go, mod_time.go); random
// (mod_random.go). Dicts are read by key or by attribute (`_.topic`, as Julep's Box allows; a key wins over
// a method of the same name). open, eval, exec, import, type, print and the other builtins that reach
// outside or answer differently are refused with a message naming them.
//
// Where a value stands decides how a string in it is read (Julep 1.x, agents_api/common/utils/expressions.py):
//   - "$ <expression>" is an expression, anywhere.
//   - A string with Jinja markup ({{ }}, {% %}) is a template, rendered to a string with the same names.
//   - In a value (evaluate, arguments, return, set, info, workflow arguments), Julep's backwards-compatible
//     forms are expressions too: "_", "_.x", "_[...]", "[...]", anything containing "inputs[" or "outputs[".
//     Contrail adds the forms of seed 004's examples, written for Julep 0.x where every value was an
//     expression: a string that parses as an expression using _, inputs, outputs, steps or state (not bare),
//     such as `_["choices"][0].content`, and a quoted string literal such as `"Daily Motivation"`.
//     Anything else is the string itself. (Julep 1.x evaluates it as the body of a triple-quoted f-string, so
//     single braces in plain text would interpolate there; Contrail keeps plain text as written.)
//   - Where only an expression makes sense (if, case, in, over, reduce, a sleep's duration), the `$ ` is
//     optional.
//
// Bounds: a step limit (starlark's SetMaxExecutionSteps), a wall-clock limit (one second by default, as
// Julep's), a budget of allocated elements and bytes (string and list repetition and concatenation, **,
// list(), sorted(), str() of shared structure, json.dumps, the modules' results...), range() of at most a
// million items, and no recursion. Errors are values, never panics: an *Error names the expression.
// Randomness comes from the caller's seed (Env.Seed) and the clock from Env.Now, so that a replayed step
// draws the same numbers and reads the same time.
//
// It must not import the platform, NATS or HTTP packages.
package expr
