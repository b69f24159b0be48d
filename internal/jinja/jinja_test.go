package jinja_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/jinja"
)

func render(t *testing.T, src string, vars map[string]any) (string, error) {
	t.Helper()
	return jinja.Render(context.Background(), "t", src, vars)
}

// The expected texts below are read off the template: every tag trims the whitespace around it, so only the
// literal {{"..."}} outputs and the text on the lines make it into the result.
func TestDefaultSystemTemplate(t *testing.T) {
	fn := func(name, desc string) map[string]any {
		f := map[string]any{"name": name}
		if desc != "" {
			f["description"] = desc
		}
		return map[string]any{"type": "function", "name": name, "function": f}
	}
	cases := []struct {
		name string
		vars jinja.SessionVars
		want string
	}{
		{"nothing", jinja.SessionVars{Agent: map[string]any{}}, "\n\n"},
		{"agent name", jinja.SessionVars{Agent: map[string]any{"name": "Ada"}}, "You are Ada. \n\n"},
		// "About you" prints the agent's name: the seed's template says agent.name there.
		{"agent name and about", jinja.SessionVars{Agent: map[string]any{"name": "Ada", "about": "a poet"}},
			"You are Ada. About you: Ada. \n\n"},
		{"about without name", jinja.SessionVars{Agent: map[string]any{"about": "a poet"}}, "About you: . \n\n"},
		// {{" "}} then the text " and their name is": two spaces.
		{"user with name and about", jinja.SessionVars{Agent: map[string]any{}, User: map[string]any{"name": "Bob", "about": "a human"}},
			"You are talking to a user  and their name is Bob. About the user: a human.\n\n"},
		{"user with name", jinja.SessionVars{Agent: map[string]any{}, User: map[string]any{"name": "Bob"}},
			"You are talking to a user  and their name is Bob.\n\n"},
		{"user without name", jinja.SessionVars{Agent: map[string]any{}, User: map[string]any{"about": "x"}},
			"You are talking to a user\n\n"},
		{"instructions as a string", jinja.SessionVars{Agent: map[string]any{"name": "Ada", "instructions": "Be kind."}},
			"You are Ada. \n\nInstructions:\nBe kind.\n\n"},
		{"instructions as a list", jinja.SessionVars{Agent: map[string]any{"instructions": []any{"be kind", "be brief"}}},
			"\n\nInstructions:\n- be kind\n- be brief\n\n"},
		{"empty instructions", jinja.SessionVars{Agent: map[string]any{"instructions": []any{}}}, "\n\n"},
		{"function tools", jinja.SessionVars{Agent: map[string]any{}, Tools: []any{fn("f1", "does f"), fn("f2", "")}},
			"\n\nTools:\n- f1: does f\n- f2\n\n\n"},
		{"docs", jinja.SessionVars{Agent: map[string]any{}, Docs: []any{
			map[string]any{"title": "T1", "content": "c1"},
			map[string]any{"title": "T2", "content": []any{"s1", "s2"}},
		}}, "\n\nRelevant documents:\nT1\nc1\n---T2\ns1\ns2\n---"},
		{"everything", jinja.SessionVars{
			Agent: map[string]any{"name": "Ada", "about": "a poet", "instructions": []any{"rhyme"}},
			User:  map[string]any{"name": "Bob", "about": "a human"},
			Tools: []any{fn("f1", "does f")},
			Docs:  []any{map[string]any{"title": "T", "content": "c"}},
		}, "You are Ada. About you: Ada. You are talking to a user  and their name is Bob. About the user: a human." +
			"\n\nInstructions:\n- rhyme\n\nTools:\n- f1: does f\n\n\nRelevant documents:\nT\nc\n---"},
		// Typed values (what a caller's structs marshal to) render like maps.
		{"struct agent", jinja.SessionVars{Agent: struct {
			Name string `json:"name"`
		}{"Ada"}}, "You are Ada. \n\n"},
	}
	tpl, err := jinja.Compile("system_template", jinja.DefaultSystemTemplate)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := tpl.Render(context.Background(), c.vars.Map())
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestDefaultSystemTemplateRefusesOtherToolTypes(t *testing.T) {
	vars := jinja.SessionVars{Agent: map[string]any{"name": "Ada"}, Tools: []any{
		map[string]any{"type": "function", "name": "f1", "function": map[string]any{"name": "f1"}},
		map[string]any{"type": "integration", "name": "web_search", "integration": map[string]any{"provider": "brave"}},
	}}
	_, err := jinja.Render(context.Background(), "system_template", jinja.DefaultSystemTemplate, vars.Map())
	if err == nil {
		t.Fatal("rendered a tool the template refuses")
	}
	e := errs.As(err)
	if e == nil || e.Code != errs.Invalid || e.Field != "system_template" {
		t.Fatalf("error %v: want an invalid error on system_template", err)
	}
	for _, want := range []string{"template system_template, line 37", "division by zero", `tool "web_search" of type "integration"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "f1") {
		t.Errorf("error %q names the function tool, which the template accepts", err)
	}
}

func TestJulepEnvironment(t *testing.T) {
	cases := []struct{ name, src, want string }{
		// trim_blocks and lstrip_blocks, as Julep's environment sets them.
		{"trim blocks", "{% if true %}\n  yes\n{% endif %}\n", "  yes\n"},
		{"lstrip blocks", "a\n    {% if true %}b{% endif %}\nc", "a\nbc"},
		{"constants", "{{ NEWLINE }}{{ null is none }}{{ true }}", "\nTrueTrue"},
		{"underscore is data", "{{ _.x }}", "1"},
		{"negative index", "{{ outputs[-1] }}", "3"},
		{"whole floats print as ints", "{{ n }} {{ f }}", "3 2.5"},
		{"string methods", "{{ 'a,b'.split(',') | join('+') }}", "a+b"},
		{"set and namespace", "{% set ns = namespace(n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "3"},
		{"block set", "{% set x %}hi {{ 1 + 1 }}{% endset %}[{{ x }}]", "[hi 2]"},
		{"conditional set", "{% set x = 1 if false else 2 %}{{ x }}", "2"},
		{"string repeat within bounds", "{{ '-' * 3 }}", "---"},
		{"division", "{{ 7 / 2 }} {{ 7 // 2 }} {{ 7 % 4 }}", "3.5 3 3"},
		{"loop controls", "{% for i in range(5) %}{% if i == 3 %}{% break %}{% endif %}{{ i }}{% endfor %}", "012"},
		{"tojson", "{{ {'a': [1, 2]} | tojson }}", `{"a": [1, 2]}`},
		{"missing attribute is empty", "[{{ user.nickname }}]", "[]"},
	}
	vars := map[string]any{"_": map[string]any{"x": 1.0}, "outputs": []any{1, 2, 3}, "n": 3.0, "f": 2.5,
		"user": map[string]any{"name": "Bob"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := render(t, c.src, vars)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestErrorsNameTemplateAndLine(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"syntax", "line one\n{{ foo( }}", "template t, line 2"},
		{"unclosed block", "a\n{% if x %}\nb", "template t"},
		{"runtime", "a\n\n{{ a.b.c }}", "template t, line 3"},
		{"division by a variable", "x\n{{ 1 / zero }}", "template t, line 2: division by zero"},
		{"modulo by zero", "{{ 1 % 0 }}", "division by zero"},
		{"include", "{% include '/etc/passwd' %}", `the "include" tag is not supported`},
		{"import", "{% import 'x' as y %}", `the "import" tag is not supported`},
		{"extends", "{% extends 'base' %}", `the "extends" tag is not supported`},
		{"macro", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", `the "macro" tag is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := render(t, c.src, map[string]any{"zero": 0})
			if err == nil {
				t.Fatal("no error")
			}
			if errs.CodeOf(err) != errs.Invalid {
				t.Errorf("code %s, want invalid", errs.CodeOf(err))
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if strings.Contains(err.Error(), "root:") {
				t.Errorf("error %q shows a file's content", err)
			}
		})
	}
}

func TestBounds(t *testing.T) {
	small := jinja.Limits{MaxBytes: 1 << 10, MaxItems: 100, MaxOps: 1000, Timeout: 10 * time.Second}
	cases := []struct{ name, src, want string }{
		{"output", "{% for i in range(100) %}{{ '0123456789' * 10 }}{% endfor %}", "rendered text would be more than 1024 bytes"},
		{"repeat", "{{ 'x' * 1000000000000 }}", "repeated"},
		{"doubling", "{% set ns = namespace(s='x') %}{% for i in range(60) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}", "more than 1024 bytes"},
		{"doubling with +", "{% set s = 'xxxxxxxxxxxxxxxx' %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}{% set s = s + s %}", "more than 1024 bytes"},
		{"nested lists", "{% set a = ['xxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{% set a = [a, a] %}{{ a }}", "more than 1024 bytes"},
		{"range", "{{ range(1000000000) | length }}", "range(...) would have 1000000000 items"},
		{"operations", "{% for i in range(10) %}{% for j in range(10) %}{% for k in range(10) %}{% for l in range(10) %}{% endfor %}{% endfor %}{% endfor %}{% endfor %}", "more than 1000 operations"},
		{"center", "{{ 'x' | center(100000000) }}", "center filter"},
		{"replace", "{{ ('x' * 500) | replace('', 'yyyyyyyyyy') }}", "replace filter"},
		{"ljust", "{{ 'x'.ljust(1000000000) }}", "ljust"},
		{"format width", "{{ '%999999999d' | format(1) }}", "format filter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := jinja.Render(context.Background(), "t", c.src, nil, jinja.WithLimits(small))
			if err == nil {
				t.Fatal("rendered past the bounds")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
		})
	}
}

func TestTimeout(t *testing.T) {
	l := jinja.DefaultLimits()
	l.Timeout = time.Millisecond
	l.MaxOps = 1 << 40
	src := "{% for i in range(100000) %}{% for j in range(100000) %}{% if j %}{% endif %}{% endfor %}{% endfor %}"
	_, err := jinja.Render(context.Background(), "slow", src, nil, jinja.WithLimits(l))
	if err == nil || !strings.Contains(err.Error(), "took more than 1ms") {
		t.Fatalf("error %v, want a timeout", err)
	}
}

func TestCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := jinja.Render(ctx, "t", "hello", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}

func TestIsTemplate(t *testing.T) {
	for s, want := range map[string]bool{"plain": false, "{{ x }}": true, "{% if %}": true, "a {b}": false, "{# c #}": true} {
		if got := jinja.IsTemplate(s); got != want {
			t.Errorf("IsTemplate(%q) = %v", s, got)
		}
	}
}
