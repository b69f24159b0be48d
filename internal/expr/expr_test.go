package expr_test

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/expr"
)

func env() *expr.Env {
	return &expr.Env{
		Input:   map[string]any{"topics": []any{"a", "b", "c"}, "n": 3.0, "x": 2.5, "name": "Ada", "items": "the key", "nested": map[string]any{"k": []any{1.0, 2.0}}},
		Inputs:  []any{map[string]any{"about_user": "a runner"}, map[string]any{"chosen": "b"}},
		Outputs: []any{map[string]any{"chosen": "b"}},
		Labels:  map[string]int{"pick": 0},
		State:   map[string]any{"count": 4.0},
		Seed:    42,
	}
}

func eval(t *testing.T, src string, e *expr.Env) (any, error) {
	t.Helper()
	x, err := expr.Compile(src)
	if err != nil {
		return nil, err
	}
	return x.Eval(e)
}

func TestEval(t *testing.T) {
	cases := []struct {
		src  string
		want any
	}{
		// Context names, dicts by key and by attribute.
		{`_["topics"][1]`, "b"},
		{`_.topics[-1]`, "c"},
		{`_.nested.k`, []any{int64(1), int64(2)}},
		{`_.items`, "the key"}, // a key wins over the dict method of the same name
		{`inputs[0]["about_user"]`, "a runner"},
		{`inputs[-1].chosen`, "b"},
		{`outputs[0].chosen`, "b"},
		{`steps[0].input.about_user`, "a runner"},
		{`steps[0].output.chosen`, "b"},
		{`steps["pick"].output.chosen`, "b"},
		{`steps[1].input.chosen`, "b"},
		{`"output" in steps[1]`, false},
		{`state.count + 1`, int64(5)},
		{`len(steps)`, int64(2)},
		// Numbers: ints stay ints, whole floats from JSON become ints, / is true division.
		{`_.n * 2`, int64(6)},
		{`_.x * 2`, 5.0},
		{`7 / 2`, 3.5},
		{`7 // 2`, int64(3)},
		{`pow(2, 10)`, int64(1024)},
		{`round(2.5)`, int64(2)},
		{`round(3.5)`, int64(4)},
		{`round(2.675, 2)`, 2.67},
		{`round(1234, -2)`, int64(1200)},
		{`abs(-3)`, int64(3)},
		{`int("42") + int(3.9)`, int64(45)},
		{`float("2.5")`, 2.5},
		{`12345678901234567890 * 10`, json.Number("123456789012345678900")},
		// Helpers.
		{`len(_.topics)`, int64(3)},
		{`sorted([3, 1, 2], reverse=True)`, []any{int64(3), int64(2), int64(1)}},
		{`min(4, 2, 8), max([1, 5])`, []any{int64(2), int64(5)}},
		{`sum([1, 2, 3])`, int64(6)},
		{`sum([[1], [2]], [])`, []any{int64(1), int64(2)}},
		{`list(range(3))`, []any{int64(0), int64(1), int64(2)}},
		{`[i * v for i, v in enumerate([10, 20])]`, []any{int64(0), int64(20)}},
		{`dict(zip(["a", "b"], [1, 2]))`, map[string]any{"a": int64(1), "b": int64(2)}},
		{`bool([]) or bool("x")`, true},
		{`list(map(lambda t: t.upper(), _.topics))`, []any{"A", "B", "C"}},
		{`list(filter(lambda n: n % 2, range(5)))`, []any{int64(1), int64(3)}},
		{`reduce(lambda a, b: a + b, [1, 2, 3], 10)`, int64(16)},
		{`any([0, 1]) and all([1, 1])`, true},
		{`json.dumps({"b": [1, 2.0], "a": "é"})`, `{"b": [1, 2.0], "a": "\u00e9"}`},
		{`json.dumps({"b": 1, "a": 2}, sort_keys=True, indent=2)`, "{\n  \"a\": 2,\n  \"b\": 1\n}"},
		{`json.loads('{"a": [1, 2.5, null]}')["a"]`, []any{int64(1), 2.5, nil}},
		{`str(1.0) + " " + str(1e16) + " " + repr("x") + " " + str(["it's", None, True, {"a": (1,)}])`, `1.0 1e+16 'x' ["it's", None, True, {'a': (1,)}]`},
		{`f"{_.topics}"`, `['a', 'b', 'c']`},
		{`math.floor(2.7)`, int64(2)},
		{`NEWLINE.join(["a", "b"])`, "a\nb"},
		{`[true, false, null]`, []any{true, false, nil}},
		// String and list methods, including the Python ones Starlark lacks.
		{`" Hi ".strip().lower().replace("h", "j")`, "ji"},
		{`"a,b".split(",")`, []any{"a", "b"}},
		{`"{} and {name}".format(1, name="x")`, "1 and x"},
		{`"x".startswith("x") and "abc".endswith("c")`, true},
		{`"7".zfill(3) + "|" + "ab".ljust(4, ".") + "|" + "ab".rjust(4) + "|" + "ab".center(5, "*")`, "007|ab..|  ab|**ab*"},
		{`"42".isnumeric()`, true},
		{`[1, 2, 1].count(1)`, int64(2)},
		{`_.topics[::-1]`, []any{"c", "b", "a"}},
		{`"%s-%d" % ("a", 3)`, "a-3"},
		{`hasattr(_, "name") and not hasattr(_, "nope")`, true},
		{`getattr(_, "nope", "dflt")`, "dflt"},
		// Python syntax Starlark lacks.
		{`_.get("missing") is None`, true},
		{`_.name is not None`, true},
		{`f"Hi {_.name}!"`, "Hi Ada!"},
		{`f'{_["name"]!r} {_.x:.2f} {_.n:>4} {_.n:04d} {1234567:,} {0.25:.0%}'`, `'Ada' 2.50    3 0003 1,234,567 25%`},
		{`f"{{literal}} {len(_.topics)}"`, "{literal} 3"},
		{"f'''line one\n{_.name}\n'''", "line one\nAda\n"},
		{`f"tab\there {_.n=}"`, "tab\there _.n=3"},
		{`F"{'nested ' + f'{_.n}'}"`, "nested 3"},
		{`f"{_.x:g} {1e20:g} {0.0001:e}"`, "2.5 1e+20 1.000000e-04"},
		{"(_.n\n  + 1)", int64(4)},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			got, err := eval(t, c.src, env())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestRandomIsSeeded(t *testing.T) {
	draw := func(seed uint64) []any {
		t.Helper()
		e := env()
		e.Seed = seed
		v, err := eval(t, `[randint(3) for i in range(20)] + [random.randint(5, 6), random.choice("xyz"), random.random() < 1]`, e)
		if err != nil {
			t.Fatal(err)
		}
		return v.([]any)
	}
	a, b, c := draw(1), draw(1), draw(2)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the same seed drew %v then %v", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("seeds 1 and 2 drew the same %v", a)
	}
	for _, v := range a[:20] {
		if n := v.(int64); n < 0 || n > 2 {
			t.Errorf("randint(3) gave %d", n)
		}
	}
	if n := a[20].(int64); n < 5 || n > 6 {
		t.Errorf("random.randint(5, 6) gave %d", n)
	}
}

func TestErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{`_["topics"`, "syntax error"},
		{`undefined_name + 1`, "undefined: undefined_name"},
		{`_.nope`, `dict has no key or method "nope"`},
		{`_["nope"]`, `key "nope" not in dict`},
		{`1 / 0`, "division by zero"},
		{`_.topics[10]`, "out of range"},
		{`len(5)`, "len: value of type int has no len"},
		{`[x for x in range(100000) for y in range(100000)]`, "too many steps"},
		{`"x" * 1000000000`, "would build more than"},
		{`[list(range(100000)) for i in range(100)]`, "builds too much"},
		{`reduce(lambda a, b: a + a, range(40), "xx")`, "more than"},
		{`str(reduce(lambda a, b: [a, a], range(40), "xx"))`, "more than"},
		{`reduce(lambda a, b: [a, a], range(40), "xx")`, "too large"},
		{`range(10000000)`, "more than the 100000 allowed"},
		{`float("nan")`, "nan is not a JSON number"},
		{`set([1])`, "a set is not a JSON value"},
		{`lambda x: x`, "function is not a JSON value"},
		{`f"{_.name"`, "f-string"},
		{`steps[5]`, "out of range"},
		{`steps["nope"]`, "no step is labelled"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			e := env()
			e.Limits = expr.Limits{MaxSteps: 100_000, MaxAlloc: 1_000_000, MaxItems: 100_000}
			_, err := eval(t, c.src, e)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if _, ok := err.(*expr.Error); !ok {
				t.Errorf("error is a %T, want *expr.Error", err)
			}
			if !strings.Contains(err.Error(), "in \"") {
				t.Errorf("error %q does not quote the expression", err)
			}
		})
	}
}

func TestNoLoadNoPrint(t *testing.T) {
	if _, err := eval(t, `print("x")`, env()); err == nil || !strings.Contains(err.Error(), "print() is not available") {
		t.Errorf("print: %v", err)
	}
	if _, err := expr.Compile("load('x', 'y')"); err == nil {
		t.Error("load compiled")
	}
}

func TestCompileValue(t *testing.T) {
	cases := []struct {
		name string
		mode expr.Mode
		in   any
		want any
	}{
		{"dollar expression", expr.ValueMode, "$ _.n + 1", int64(4)},
		{"dollar with newline", expr.ValueMode, "$\n  _.n", int64(3)},
		{"plain text", expr.ValueMode, "hello world", "hello world"},
		{"bare context name is text", expr.ValueMode, "state", "state"},
		{"julep legacy underscore", expr.ValueMode, "_", map[string]any{"topics": []any{"a", "b", "c"}, "n": int64(3), "x": 2.5,
			"name": "Ada", "items": "the key", "nested": map[string]any{"k": []any{int64(1), int64(2)}}}},
		{"julep legacy _.x", expr.ValueMode, "_.name", "Ada"},
		{"julep legacy list", expr.ValueMode, "[1, 2]", []any{int64(1), int64(2)}},
		{"julep legacy inputs[", expr.ValueMode, "inputs[0]", map[string]any{"about_user": "a runner"}},
		{"seed: expression using _", expr.ValueMode, `_["topics"][randint(len(_["topics"]))]`, "b"},
		{"seed: quoted string", expr.ValueMode, `"Daily Motivation"`, "Daily Motivation"},
		{"template", expr.ValueMode, `Hi {{ _.name }} ({{ inputs[0]["about_user"] }})`, "Hi Ada (a runner)"},
		{"text mode keeps expression-looking text", expr.TextMode, "_.name", "_.name"},
		{"expr mode without dollar", expr.ExprMode, "len(_.topics) > 2", true},
		{"numbers stay", expr.ValueMode, 3.5, 3.5},
		{"nested", expr.ValueMode, map[string]any{"a": "$ _.n", "b": []any{"x", "$ _.name"}, "c": true},
			map[string]any{"a": int64(3), "b": []any{"x", "Ada"}, "c": true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := expr.CompileValue(c.in, c.mode)
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.Eval(context.Background(), env())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestCompileValueErrorsNamePath(t *testing.T) {
	_, err := expr.CompileValue(map[string]any{"ok": "$ 1", "list": []any{"x", "$ 1 +"}}, expr.ValueMode)
	if err == nil || !strings.HasPrefix(err.Error(), "list[1]: syntax error") {
		t.Fatalf("error %v, want one at list[1]", err)
	}
	v, err := expr.CompileValue(map[string]any{"deep": map[string]any{"x": "$ _.nope"}}, expr.ValueMode)
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Eval(context.Background(), env())
	if err == nil || !strings.HasPrefix(err.Error(), "deep.x: ") || !strings.Contains(err.Error(), "_.nope") {
		t.Fatalf("error %v, want one at deep.x quoting _.nope", err)
	}
	_, err = expr.CompileValue("{{ x( }}", expr.TextMode)
	if err == nil || !strings.Contains(err.Error(), "template") {
		t.Fatalf("error %v, want a template error", err)
	}
}

// BenchmarkEval measures one evaluation of the expression of the task benchmark (`$ _ + 1`).
func BenchmarkEval(b *testing.B) {
	x := expr.MustCompile("_ + 1")
	e := &expr.Env{Input: 41.0, Inputs: []any{1.0}, Outputs: []any{}}
	for b.Loop() {
		if _, err := x.Eval(e); err != nil {
			b.Fatal(err)
		}
	}
}
