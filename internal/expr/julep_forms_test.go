package expr_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/expr"
)

// julepEnv is what the documented forms read: a previous step's output, a list, two dicts, a model's
// answer holding JSON, and a fixed clock.
func julepEnv() *expr.Env {
	return &expr.Env{
		Input: map[string]any{
			"x":      2.0,
			"xs":     []any{1.0, 2.0, 3.0},
			"a":      map[string]any{"k": 0.0, "j": "kept"},
			"text":   "Order 66 shipped on 2024-05-01, order 7 on 2024-05-09.",
			"answer": "Here it is:\n```json\n{\"ok\": true, \"n\": [1, 2]}\n```\nDone.",
			"yaml":   "b: 1\na:\n  - x\n  - y\n",
			"csv":    "name,age\nAda,36\nAlan,41\n",
		},
		Inputs:  []any{map[string]any{"q": "hi"}},
		Outputs: []any{map[string]any{"x": 3.0}},
		Now:     time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC),
		Seed:    7,
	}
}

// TestJulepDocumentedForms evaluates the forms Julep's documentation and evaluator offer, each as Python
// answers it.
func TestJulepDocumentedForms(t *testing.T) {
	cases := []struct {
		src  string
		want any
	}{
		// Operators Starlark lacks.
		{`steps[0].output.x ** 2`, int64(9)},
		{`2 ** -1`, 0.5},
		{`-2 ** 2`, int64(-4)},
		{`2 ** 3 ** 2`, int64(512)},
		{`2.0 ** 0.5 > 1.41`, true},
		{`1 < _.x < 3`, true},
		{`1 < _.x < 2`, false},
		{`0 <= _.x <= 2 != 3`, true},
		{`len({1, 2, 2, 3})`, int64(3)},
		{`sorted({x % 3 for x in range(10)})`, []any{int64(0), int64(1), int64(2)}},
		{`{**_.a, 'k': 1}`, map[string]any{"k": int64(1), "j": "kept"}},
		{`{'k': 1, **_.a}`, map[string]any{"k": int64(0), "j": "kept"}},
		{`[*_.xs, 4]`, []any{int64(1), int64(2), int64(3), int64(4)}},
		{`[*"ab", *range(2)]`, []any{"a", "b", int64(0), int64(1)}},
		{`(*_.xs,)`, []any{int64(1), int64(2), int64(3)}},
		{`max(*_.xs)`, int64(3)},
		{`sum(x * x for x in _.xs)`, int64(14)},
		{`any(x > 2 for x in _.xs)`, true},
		{`"ab" "cd"`, "abcd"},
		{`1_000 + 0x10 + 0o10 + 0b10`, int64(1026)},
		{`True + True`, int64(2)},
		{`1 == True and 1 in [True] and [1, 2] == [True, 2]`, true},
		{`inputs == [{"q": "hi"}]`, true},
		// Identity.
		{`[] is []`, false},
		{`_.xs is _.xs`, true},
		{`steps[0] is steps[0] and steps[0] is not steps[0].copy()`, true},
		{`_.get("nope") is None`, true},
		{`_.x is not None`, true},
		{`(1 == 1) is True`, true},
		// Builtins.
		{`isinstance(_.a, dict)`, true},
		{`isinstance(_.xs, list) and isinstance(inputs, list)`, true},
		{`isinstance(True, int) and not isinstance(1, float)`, true},
		{`isinstance(_.x, (str, int))`, true},
		{`divmod(7, 2)`, []any{int64(3), int64(1)}},
		{`divmod(-7, 2)`, []any{int64(-4), int64(1)}},
		{`divmod(7.5, 2)`, []any{3.0, 1.5}},
		{`pow(3, 4, 5)`, int64(1)},
		// re, and Julep's regex helpers.
		{`re.findall(r"\d+", _.text)`, []any{"66", "2024", "05", "01", "7", "2024", "05", "09"}},
		{`re.findall("order (\d+)", _.text, re.I)`, []any{"66", "7"}},
		{`re.findall(r"(\d{4})-(\d\d)", _.text)[0]`, []any{"2024", "05"}},
		{`re.search(r"(?P<y>\d{4})-\d\d", _.text).group("y")`, "2024"},
		{`re.search(r"\d{4}", _.text).span()`, []any{int64(20), int64(24)}},
		{`re.match(r"Order", _.text) is not None and re.match(r"order", _.text) is None`, true},
		{`re.sub(r"(\d{4})-(\d\d)-(\d\d)", r"\3/\2/\1", "2024-05-01")`, "01/05/2024"},
		{`re.sub(r"\d", lambda m: str(int(m.group()) + 1), "a1b2")`, "a2b3"},
		{`re.split(r"\s*,\s*", "a , b,c")`, []any{"a", "b", "c"}},
		{`re.escape("a.b")`, `a\.b`},
		{`match_regex(r"\d+", "123")`, true},
		{`match_regex(r"\d+", "123a")`, false},
		{`search_regex(r"\d+", "ab12").group()`, "12"},
		// json, yaml, extract_json.
		{`json.dumps({"b": [1, 2.0], "a": None})`, `{"b": [1, 2.0], "a": null}`},
		{`json.loads('{"a": [1, 2]}')["a"][1]`, int64(2)},
		{`extract_json(_.answer)`, map[string]any{"ok": true, "n": []any{int64(1), int64(2)}}},
		{`extract_json('{"a": 1}')["a"]`, int64(1)},
		{`list(load_yaml(_.yaml).keys())`, []any{"b", "a"}},
		{`yaml.safe_load("a: [1, 2]")["a"]`, []any{int64(1), int64(2)}},
		{`dump_yaml({"b": 1, "a": ["x", "z"]})`, "a:\n- x\n- z\nb: 1\n"},
		// math and statistics.
		{`math.sqrt(16)`, 4.0},
		{`math.floor(2.7) + math.ceil(2.1)`, int64(5)},
		{`round(math.pi, 2)`, 3.14},
		{`math.log(8, 2)`, 3.0},
		{`math.isnan(float("nan")) and math.isinf(math.inf) and not math.isinf(1)`, true},
		{`statistics.mean([1, 2, 3])`, int64(2)},
		{`statistics.mean([1, 2])`, 1.5},
		{`statistics.median([3, 1, 2])`, int64(2)},
		{`statistics.median([1, 2, 3, 4])`, 2.5},
		{`statistics.mode(["a", "b", "a"])`, "a"},
		{`round(statistics.stdev([2, 4, 4, 4, 5, 5, 7, 9]), 4)`, 2.1381},
		{`statistics.quantiles([1, 2, 3, 4, 5, 6, 7, 8], n=4)`, []any{2.25, 4.5, 6.75}},
		// base64, string, urllib.parse, csv.
		{`base64.b64encode("hello")`, "aGVsbG8="},
		{`base64.b64decode("aGVsbG8=")`, "hello"},
		{`string.ascii_lowercase[:3] + string.digits[-1]`, "abc9"},
		{`urllib.parse.quote("a b/c")`, "a%20b/c"},
		{`urllib.parse.urlencode({"q": "a b", "n": 1})`, "q=a+b&n=1"},
		{`urllib.parse.urlparse("https://ex.com:8080/p?q=1#f").netloc`, "ex.com:8080"},
		{`urllib.parse.urlparse("https://ex.com:8080/p?q=1#f").port`, int64(8080)},
		{`urllib.parse.parse_qs("a=1&a=2&b=3")`, map[string]any{"a": []any{"1", "2"}, "b": []any{"3"}}},
		{`urllib.parse.unquote("a%20b")`, "a b"},
		{`list(csv.reader(_.csv))[1]`, []any{"Ada", "36"}},
		{`[r["age"] for r in csv.DictReader(_.csv)]`, []any{"36", "41"}},
		// datetime and time, on the evaluation's clock.
		{`datetime.datetime.now().isoformat()`, "2025-03-04T05:06:07"},
		{`datetime.datetime.now(datetime.timezone.utc).isoformat()`, "2025-03-04T05:06:07+00:00"},
		{`datetime.datetime.now().strftime("%Y-%m-%d %H:%M")`, "2025-03-04 05:06"},
		{`(datetime.datetime.now() + datetime.timedelta(days=1, hours=2)).isoformat()`, "2025-03-05T07:06:07"},
		{`str(datetime.datetime(2024, 1, 2) - datetime.datetime(2024, 1, 1, 12))`, "12:00:00"},
		{`(datetime.datetime(2024, 3, 1) - datetime.datetime(2024, 2, 1)).days`, int64(29)},
		{`datetime.datetime.fromisoformat("2024-05-01T10:00:00+02:00").hour`, int64(10)},
		{`datetime.datetime.strptime("01/05/2024", "%d/%m/%Y").month`, int64(5)},
		{`datetime.date(2024, 5, 1).weekday()`, int64(2)},
		{`str(datetime.date.today())`, "2025-03-04"},
		{`datetime.datetime(2024, 1, 1) < datetime.datetime(2024, 1, 2)`, true},
		{`isinstance(datetime.datetime.now(), datetime.date)`, true},
		{`datetime.timedelta(minutes=90).total_seconds()`, 5400.0},
		{`f"{datetime.datetime(2024, 1, 2):%d.%m.%Y}"`, "02.01.2024"},
		{`datetime.datetime(2024, 1, 2, 3, 4)`, "2024-01-02T03:04:00"},
		{`time.time()`, float64(time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC).Unix())},
		{`time.strftime("%Y", time.strptime("2024-05-01", "%Y-%m-%d"))`, "2024"},
		// Python's answers where Starlark's differ.
		{`len("héllo") + len("héllo"[1:3])`, int64(7)},
		{`"héllo"[1] + "héllo"[-1]`, "éo"},
		{`"héllo".find("l")`, int64(2)},
		{`[c for c in "hé"]`, []any{"h", "é"}},
		{`list("ab") + sorted("ba")`, []any{"a", "b", "a", "b"}},
		{`"".join(reversed("abc"))`, "cba"},
		{`"%.2f|%5d|%-4s|%r" % (3.14159, 42, "ab", "q")`, "3.14|   42|ab  |'q'"},
		{`"%(n)03d" % {"n": 7}`, "007"},
		{`"{:.1f} {} {name!r:>6}".format(2.25, [1], name="x")`, "2.2 [1]    'x'"},
		{`hex(255) + oct(8) + bin(5)`, "0xff0o100b101"},
		{`(lambda xs: [xs.sort(reverse=True), xs][1])([1, 3, 2])`, []any{int64(3), int64(2), int64(1)}},
		{`[x for x in _.xs if 1 < x < 3]`, []any{int64(2)}},
		{`dict(type="t", id=1)`, map[string]any{"type": "t", "id": int64(1)}},
		{`str(_.a.keys()) + f" {_.a.items()}"`, "dict_keys(['j', 'k']) dict_items([('j', 'kept'), ('k', 0)])"},
		{`_.a.keys() == ["j", "k"] or ("j", "kept") not in _.a.items()`, false},
		{`[k for k, v in sorted(_.a.items())] + list(_.a.values())`, []any{"j", "k", "kept", int64(0)}},
		{`min([], default=0) + max(_.xs, default=0)`, int64(3)},
		{`list(enumerate("ab", start=1))`, []any{[]any{int64(1), "a"}, []any{int64(2), "b"}}},
		// random stays seeded.
		{`random.choice([5]) + random.randint(1, 1)`, int64(6)},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			got, err := eval(t, c.src, julepEnv())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

// TestRefusals checks that what expressions do not support is refused by name, never answered wrongly.
func TestRefusals(t *testing.T) {
	cases := []struct{ src, want string }{
		{`open("/etc/passwd").read()`, "open() is not available"},
		{`__import__("os").system("id")`, "names starting with __ (__import__) are not available"},
		{`_.__class__`, "attribute access to __class__ is not allowed"},
		{`().__class__.__bases__[0].__subclasses__()`, "attribute access to __class__ is not allowed"},
		{`import os`, "import is not available"},
		{`os.system("id")`, "the os module is not available"},
		{`type(1) == int`, "type() is not available"},
		{`eval("1")`, "eval() is not available"},
		{`nlp(_.text)`, "nlp() (spaCy) is not available"},
		{`print(1)`, "print() is not available"},
		{`1 is 1`, "use == to compare them"},
		{`"a" is "a"`, "use == to compare them"},
		{`(y := 1)`, "walrus operator"},
		{`x @ y`, "the @ (matrix multiplication) operator is not supported"},
		{`1j`, "complex numbers"},
		{`b"x"`, "bytes literals"},
		{`...`, "Ellipsis"},
		{`(-8) ** 0.5`, "complex number"},
		{`10 ** 10 ** 10`, "would be an integer of more than"},
		{`re.search(r"(?=a)", "a")`, "not one RE2 accepts"},
		{`re.compile("a")`, "re.compile is not available in expressions; re offers"},
		{`json.dumps(datetime.datetime.now())`, "not JSON serializable"},
		{`math.sqrt(-1)`, "math domain error"},
		{`datetime.datetime(2024, 1, 1) < datetime.datetime.now(datetime.timezone.utc)`, "can't compare offset-naive and offset-aware"},
		{`re.search("a", "a")`, "a re.Match is not a JSON value"},
		{`[x for x in range(100000) for y in range(100000)]`, "too many steps"},
		{`reduce(lambda a, b: a + [b], range(200000), [])`, "ran too long"},
		{`(lambda f: f(f))(lambda f: f(f))`, "called recursively"},
		{`(lambda type: type(1))(len)`, "has no len"},
		{`[type(1) for type in [0]]`, "invalid call of non-function"},
		{`"%d" % "x"`, "a number is required"},
		{`"%s %s" % ("a",)`, "not enough arguments"},
		{`"{0[k]}".format({"k": 1})`, "is not supported"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			e := julepEnv()
			e.Limits = expr.Limits{MaxSteps: 100_000, MaxAlloc: 1 << 40}
			_, err := eval(t, c.src, e)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

// TestWallClockLimit stops an expression that stays under the step limit but runs past MaxTime.
func TestWallClockLimit(t *testing.T) {
	e := julepEnv()
	e.Limits = expr.Limits{MaxSteps: 1 << 40, MaxTime: time.Millisecond}
	_, err := eval(t, `reduce(lambda a, b: a + b, range(1000000), 0) + reduce(lambda a, b: a + b, range(1000000), 0)`, e)
	if err == nil || !strings.Contains(err.Error(), "ran too long: it ran longer than 1ms") {
		t.Fatalf("error %v, want the wall-clock limit", err)
	}
}
