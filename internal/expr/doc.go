// Package expr evaluates the Python expressions of Julep's tasks with go.starlark.net, and the values that
// hold them (an evaluate step's map, a tool's arguments, ...).
//
// An expression sees `_` (the step's input), `inputs`, `outputs` and `steps` (steps[i].input, steps[i].output,
// also by label: steps["label"]), `state`, and the helpers Julep's tasks use: len, str, int, float, bool, list,
// dict, tuple, range, enumerate, zip, sorted, reversed, min, max, sum, abs, round, pow, map, filter, reduce, any,
// all, json (dumps, loads), math, random and randint, NEWLINE, true/false/null, string, list and dict methods.
// Dicts are read by key or by attribute (`_.topic`, as Julep's Box allows; a key wins over a method of the same
// name). Python syntax Starlark lacks is rewritten first: f-strings (with format specs) and `is` / `is not`.
// `**` is not supported (use pow), nor are statements, imports, load() or I/O.
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
// Bounds: a step limit (starlark's SetMaxExecutionSteps), a budget of allocated elements and bytes (string and
// list repetition and concatenation, list(), sorted(), str() of shared structure, json.dumps...), range() of
// at most a million items, and no recursion. Errors are values, never panics: an *Error names the expression.
// Randomness comes from the caller's seed (Env.Seed), so a replayed step draws the same numbers.
//
// It must not import the platform, NATS or HTTP packages.
package expr
