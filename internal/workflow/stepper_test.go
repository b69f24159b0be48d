package workflow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/workflow"
)

func TestEvaluateChain(t *testing.T) {
	e := newEngine(t, `
name: count
main:
- evaluate: {n: $ _.n + 1}
- evaluate: {n: $ _.n + 1}
- evaluate:
    n: $ _.n + 1
    first: $ steps[0].input.n
    prev: $ outputs[-1].n
    via_inputs: $ inputs[1].n
`)
	e.start(map[string]any{"n": 1})
	e.run()
	e.expectOutput(map[string]any{"n": 4, "first": 1, "prev": 3, "via_inputs": 2})
	if got := e.types(); got != "init step step finish" {
		t.Errorf("transitions %s", got)
	}
	fin := e.log[len(e.log)-1]
	if fin.Current.Step != 2 || fin.Next != nil || fin.Metadata["step_type"] != "EvaluateStep" {
		t.Errorf("finish %+v", fin)
	}
	e.checkFold()
}

// The example of seed 004, as written: Julep 0.x expressions without $, Jinja prompts, sleep: 24*3600 and
// a workflow step that starts main again.
const dailyMotivation = `
# An example Task definition
name: Daily Motivation
input_schema:
  about_user:
    type: string
  topics:
    type: array
    items:
      type: string

tools:
- function:
  name: send_email
  # ...

main:
- evaluate:
    chosen_topic: _["topics"][randint(len(_["topics"]))]

- prompt: You are a motivational coach and you are coaching someone who is {{inputs[0]["about_user"]}}. Think of the challenges they might be facing on the {{_["chosen_topic"]}} topic and what to do about them. Write down your answer as a bulleted list.

- prompt: Write a short motivational poem about {{_["choices"][0].content}}

- tool:
    name: send_email
    arguments:
      subject: '"Daily Motivation"'
      content: _["choices"][0].content

- sleep: 24*3600

- workflow: main
  arguments: inputs[0]
`

func TestSeedExample(t *testing.T) {
	e := newEngine(t, dailyMotivation)
	input := map[string]any{"about_user": "a marathon runner", "topics": []any{"rest", "speed", "focus"}}
	if err := e.task.ValidateInput(map[string]any{"about_user": 3}); err == nil {
		t.Error("the seed's input schema accepted a number for about_user")
	}
	e.start(input)
	var prompts []string
	e.model = func(path string, call *workflow.ModelCall) workflow.Result {
		msg := call.Messages[0].(map[string]any)
		prompts = append(prompts, msg["content"].(string))
		return workflow.Result{Output: chatResponse("reply " + path)}
	}
	e.inputs = []any{map[string]any{"sent": true}}
	e.maxEffects = 4 // two prompts, the sleep, and the first prompt of the second day
	e.run()

	if len(prompts) != 3 {
		t.Fatalf("prompts %q", prompts)
	}
	chosen := e.log[1].Output.(map[string]any)["chosen_topic"].(string)
	if !strings.Contains(prompts[0], "someone who is a marathon runner.") || !strings.Contains(prompts[0], "on the "+chosen+" topic") {
		t.Errorf("first prompt %q (topic %q)", prompts[0], chosen)
	}
	if prompts[1] != "Write a short motivational poem about reply main[1]" {
		t.Errorf("second prompt %q", prompts[1])
	}
	// The function tool waited for the client with the call, then resumed with its result.
	waits := e.transitionsOf(workflow.TypeWait)
	if len(waits) != 1 {
		t.Fatalf("waits %d: %s", len(waits), e.types())
	}
	call := waits[0].Output.(map[string]any)["function"].(map[string]any)
	if call["name"] != "send_email" || !equalJSON(t, call["arguments"], map[string]any{"subject": "Daily Motivation", "content": "reply main[2]"}) {
		t.Errorf("tool call %v", call)
	}
	// The sleep lasted a day from the step before it.
	var timer workflow.Effect
	for _, ef := range e.effects {
		if ef.Kind == workflow.EffectTimer {
			timer = ef
		}
	}
	resumed := e.transitionsOf(workflow.TypeResume)[0]
	if want := resumed.At.Add(24 * time.Hour); !timer.Until.Equal(want) {
		t.Errorf("sleep until %v, want %v", timer.Until, want)
	}
	// workflow: main at the end of main replaced it with a new run of main, with the same input.
	branches := e.transitionsOf(workflow.TypeInitBranch)
	if len(branches) != 1 || !branches[0].Branch.Tail || branches[0].Current.Workflow != "main" || !equalJSON(t, branches[0].Output, input) {
		t.Fatalf("init_branch %+v", branches)
	}
	if len(e.state.Frames) != 1 {
		t.Errorf("frames after the call: %d, want 1 (a tail call replaces its caller)", len(e.state.Frames))
	}
	if e.state.Status != workflow.StatusRunning {
		t.Errorf("status %s", e.state.Status)
	}
	e.checkFold()
}

func TestRandomIsReplayed(t *testing.T) {
	topic := func(execution string) string {
		e := newEngine(t, dailyMotivation)
		e.env.ExecutionID = execution
		e.start(map[string]any{"about_user": "x", "topics": []any{"a", "b", "c", "d", "e", "f", "g", "h"}})
		d, err := workflow.Decide(context.Background(), e.task, e.state, e.env)
		if err != nil {
			t.Fatal(err)
		}
		return d.Transitions[0].Output.(map[string]any)["chosen_topic"].(string)
	}
	if a, b := topic("exec-1"), topic("exec-1"); a != b {
		t.Errorf("the same execution chose %q then %q", a, b)
	}
	seen := map[string]bool{}
	for i := range 20 {
		seen[topic("exec-"+string(rune('a'+i)))] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 executions all chose %v", seen)
	}
}

func TestIfWithNestedForeach(t *testing.T) {
	src := `
name: nested
main:
- if: $ len(_.xs) > 0
  then:
    foreach:
      in: $ _.xs
      do:
      - evaluate: {double: $ _ * 2}
      - set: {last: $ _.double}
  else:
    evaluate: {empty: true}
- evaluate: {got: $ _, last: $ state.get("last")}
`
	e := newEngine(t, src)
	e.start(map[string]any{"xs": []any{1, 2, 3}})
	e.run()
	e.expectOutput(map[string]any{"got": []any{map[string]any{"last": 2}, map[string]any{"last": 4}, map[string]any{"last": 6}}, "last": 6})
	var names []string
	for _, tr := range e.transitionsOf(workflow.TypeInitBranch) {
		names = append(names, tr.Current.Workflow)
	}
	want := "main[0].then main[0].then.foreach[0] main[0].then.foreach[1] main[0].then.foreach[2]"
	if strings.Join(names, " ") != want {
		t.Errorf("branches %q, want %q", strings.Join(names, " "), want)
	}
	e.checkFold()

	e = newEngine(t, src)
	e.start(map[string]any{"xs": []any{}})
	e.run()
	e.expectOutput(map[string]any{"got": map[string]any{"empty": true}, "last": nil})
	e.checkFold()
}

func TestIfWithoutElsePassesInputOn(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- if: $ False
  then: {evaluate: {x: 1}}
`)
	e.start("unchanged")
	e.run()
	e.expectOutput("unchanged")
	e.checkFold()
}

func TestSwitch(t *testing.T) {
	src := `
name: t
main:
- switch:
  - case: $ _.kind == "a"
    then: {evaluate: {picked: a}}
  - case: $ _.kind == "b"
    then:
    - evaluate: {picked: b}
    - evaluate: {picked: $ _.picked + "!"}
  - case: _
    then: {return: {picked: default}}
- evaluate: {after: $ _.picked}
`
	for kind, want := range map[string]any{
		"a": map[string]any{"after": "a"},
		"b": map[string]any{"after": "b!"},
		"z": map[string]any{"picked": "default"}, // return in a case returns from main
	} {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, src)
			e.start(map[string]any{"kind": kind})
			e.run()
			e.expectOutput(want)
			e.checkFold()
		})
	}
	e := newEngine(t, `
name: t
main:
- switch:
  - case: $ False
    then: {evaluate: {x: 1}}
`)
	e.start(nil)
	e.run()
	e.expectError("main[0].switch: no case matched")
}

func TestMapReduce(t *testing.T) {
	src := `
name: t
tools:
- name: fetch
  type: api_call
  api_call: {method: GET, url: "https://example.com/{id}"}
main:
- over: $ _.ids
  map:
    tool: fetch
    arguments: {id: $ _}
  reduce: $ results + [_.args.id * 10]
  initial: [0]
  parallelism: 2
`
	e := newEngine(t, src)
	e.reverse = true // the branches finish out of order; the reduce follows the items' order
	e.start(map[string]any{"ids": []any{1, 2, 3, 4, 5}})
	e.run()
	e.expectOutput([]any{0, 10, 20, 30, 40, 50})
	// Never more than two branches at once.
	if most := e.mostBranches(); most != 2 {
		t.Errorf("at most %d branches ran at once, want 2", most)
	}
	if n := len(e.effects); n != 5 {
		t.Errorf("%d tool calls, want 5", n)
	}
	e.checkFold()

	// Without reduce the results are collected; with no items the output is initial.
	e = newEngine(t, `
name: t
main:
- over: $ _
  map: {evaluate: {sq: $ _ * _}}
`)
	e.start([]any{2, 3})
	e.run()
	e.expectOutput([]any{map[string]any{"sq": 4}, map[string]any{"sq": 9}})
	e = newEngine(t, `
name: t
main:
- over: $ _
  map: {evaluate: {sq: $ _ * _}}
  initial: {none: true}
`)
	e.start([]any{})
	e.run()
	e.expectOutput(map[string]any{"none": true})
}

// Julep runs a map_reduce one item at a time unless it is given a parallelism above 1.
func TestMapReduceWithoutParallelismIsSequential(t *testing.T) {
	e := newEngine(t, `
name: t
tools:
- name: fetch
  type: api_call
  api_call: {method: GET, url: "https://example.com/{id}"}
main:
- over: $ _
  map:
    tool: fetch
    arguments: {id: $ _}
`)
	e.reverse = true
	e.start([]any{1, 2, 3, 4})
	e.run()
	if most := e.mostBranches(); most != 1 {
		t.Errorf("%d branches ran at once, want 1", most)
	}
	if n := len(e.effects); n != 4 {
		t.Errorf("%d tool calls, want 4", n)
	}
	e.checkFold()
}

func TestParallel(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- parallel:
  - evaluate: {a: $ _ + 1}
  - prompt: "Say {{ _ }}"
    unwrap: true
  - [{evaluate: {b: $ _}}, {set: {seen: $ _.b}}]
- evaluate: {all: $ _, seen: $ state.get("seen")}
`)
	e.reverse = true
	e.start(41)
	e.run()
	// A parallel branch's set stays in the branch.
	e.expectOutput(map[string]any{"all": []any{map[string]any{"a": 42}, "answer to main[0].parallel[1]", map[string]any{"seen": 41}}, "seen": nil})
	e.checkFold()
}

func TestWorkflowCall(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- set: {who: caller}
- workflow: greet
  arguments: {name: $ _.who, n: 2}
- evaluate:
    from_call: $ steps[1].output
    state_kept: $ state.who
greet:
- evaluate:
    text: $ "hi " + _.name
    own_input: $ steps[0].input.n
    caller_state: $ state.who
- set: {who: callee}
- if: $ True
  then:
    return:
      text: $ steps[1].input.text
      state_in_callee: $ state.who
- error: not reached
`)
	e.start(nil)
	e.run()
	e.expectOutput(map[string]any{
		"from_call":  map[string]any{"text": "hi caller", "state_in_callee": "callee"},
		"state_kept": "caller",
	})
	// The return inside the if ended its branch with returned, then the callee.
	var ends []string
	for _, tr := range e.log {
		if tr.Type == workflow.TypeFinishBranch {
			ends = append(ends, tr.Current.Workflow+map[bool]string{true: "(returned)"}[tr.Returned])
		}
	}
	if strings.Join(ends, " ") != "greet[2].then(returned) greet" {
		t.Errorf("finish_branch %q", ends)
	}
	e.checkFold()
}

func TestReturnInsideForeachEndsTheWorkflow(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- foreach:
    in: $ _
    do:
      if: $ _ > 2
      then: {return: {found: $ _}}
- error: not reached
`)
	e.start([]any{1, 2, 3, 4})
	e.run()
	e.expectOutput(map[string]any{"found": 3})
	e.checkFold()
}

func TestTailRecursionDoesNotGrow(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- if: $ _.n >= 200
  then: {return: $ _.n}
- workflow: main
  arguments: {n: $ _.n + 1}
`)
	e.start(map[string]any{"n": 0})
	e.run()
	e.expectOutput(200)
	e.checkFold()

	e = newEngine(t, `
name: t
main:
- workflow: deep
  arguments: 0
deep:
- workflow: deep
  arguments: $ _ + 1
- evaluate: {not: tail}
`)
	e.env.Limits.MaxDepth = 10
	e.start(nil)
	e.run()
	e.expectError("deep[0]: workflows nested more than 10 deep")
}

func TestStateGetSetLog(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- set: {a: 1, b: $ _ * 2}
- get: b
- log: "b is {{ _ }} and a is {{ state.a }}"
- get: [a, b, c]
`)
	e.start(5)
	e.run()
	e.expectOutput(map[string]any{"a": 1, "b": 10, "c": nil})
	log := e.log[3]
	if log.Metadata["log"] != "b is 10 and a is 1" || !equalJSON(t, log.Output, 10) || log.Metadata["step_type"] != "LogStep" {
		t.Errorf("log transition %+v", log)
	}
	e.checkFold()
}

func TestWaitForInput(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- wait_for_input:
    info: {question: $ "Name for " + _}
- evaluate: {hello: $ _.name}
`)
	e.start("the cat")
	e.run()
	if e.state.Status != workflow.StatusAwaitingInput {
		t.Fatalf("status %s", e.state.Status)
	}
	if w := e.log[len(e.log)-1]; w.Type != workflow.TypeWait || !equalJSON(t, w.Output, map[string]any{"question": "Name for the cat"}) {
		t.Fatalf("last transition %+v", w)
	}
	// Nothing to decide while waiting.
	if d, _ := workflow.Decide(context.Background(), e.task, e.state, e.env); len(d.Transitions)+len(d.Effects) > 0 {
		t.Fatalf("decided %+v while waiting", d)
	}
	e.inputs = []any{map[string]any{"name": "Tom"}}
	e.run()
	e.expectOutput(map[string]any{"hello": "Tom"})
	if got := e.types(); got != "init wait resume finish" {
		t.Errorf("transitions %s", got)
	}
	e.checkFold()
}

func TestWaitAsLastStep(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- wait_for_input: {info: {q: 1}}
`)
	e.start(nil)
	e.inputs = []any{"answer"}
	e.run()
	e.expectOutput("answer")
	if got := e.types(); got != "init wait resume finish" {
		t.Errorf("transitions %s", got)
	}
	e.checkFold()
}

func TestSleep(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- evaluate: {minutes: 2}
- sleep: {minutes: $ _.minutes, seconds: 30}
- sleep: {hours: 1}
`)
	e.start(nil)
	e.run()
	e.expectOutput(map[string]any{"minutes": 2})
	if len(e.effects) != 2 {
		t.Fatalf("effects %+v", e.effects)
	}
	if d := e.effects[0].Until.Sub(e.log[1].At); d != 150*time.Second {
		t.Errorf("first sleep %v, want 2m30s", d)
	}
	if d := e.effects[1].Until.Sub(e.log[2].At); d != time.Hour {
		t.Errorf("second sleep %v, want 1h", d)
	}
	e.checkFold()
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name, src string
		input     any
		want      []string
	}{
		{"error step", "name: t\nmain:\n- evaluate: {x: 1}\n- error: \"bad {{ _.x }}\"", nil, []string{"main[1]: bad 1"}},
		{"expression", "name: t\nmain:\n- evaluate:\n    ok: 1\n    bad: $ _.missing + 1", map[string]any{},
			[]string{"main[0].evaluate.bad", `dict has no key or method "missing"`, `"_.missing + 1"`}},
		{"nested expression", "name: t\nmain:\n- foreach:\n    in: $ _\n    do:\n      evaluate: {x: $ 1 / _}", []any{1, 0},
			[]string{"main[0].foreach.do.evaluate.x", "division by zero", `"1 / _"`}},
		{"foreach over a non-list", "name: t\nmain:\n- foreach: {in: $ _.n, do: {evaluate: {}}}", map[string]any{"n": 3},
			[]string{"main[0].foreach.in: want a list to iterate over, got a number"}},
		{"tool arguments", "name: t\ntools: [{name: f, type: system, system: {}}]\nmain:\n- tool: f\n  arguments: $ 3", nil,
			[]string{"main[0].arguments: a tool's arguments are an object"}},
		{"template", "name: t\nmain:\n- log: \"{{ 1 / 0 }}\"", nil, []string{"main[0].log", "division by zero"}},
		{"reduce", "name: t\nmain:\n- over: $ [1]\n  map: {evaluate: {}}\n  reduce: $ results + 1", nil,
			[]string{"main[0].reduce", `"results + 1"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, c.src)
			e.start(c.input)
			e.run()
			e.expectError(c.want...)
			if last := e.log[len(e.log)-1]; last.Type != workflow.TypeError {
				t.Errorf("last transition %s", last.Type)
			}
			e.checkFold()
		})
	}
}

func TestEffectErrorAndStaleResults(t *testing.T) {
	e := newEngine(t, `
name: t
main:
- prompt: hi
`)
	e.model = func(string, *workflow.ModelCall) workflow.Result { return workflow.Result{Error: "the model is down"} }
	e.start(nil)
	e.run()
	e.expectError("main[0]: the model is down")

	e = newEngine(t, "name: t\nmain:\n- prompt: hi\n  unwrap: true\n- evaluate: {said: $ _}")
	e.start(nil)
	d, err := workflow.Decide(context.Background(), e.task, e.state, e.env)
	if err != nil || len(d.Effects) != 1 {
		t.Fatalf("decide %+v %v", d, err)
	}
	key := d.Effects[0].Key
	trs, err := workflow.Complete(context.Background(), e.task, e.state, key, workflow.Result{Output: chatResponse("hello")}, e.env)
	if err != nil {
		t.Fatal(err)
	}
	e.record(trs...)
	// The same result again (a redelivery) is stale, not a second step.
	if _, err := workflow.Complete(context.Background(), e.task, e.state, key, workflow.Result{Output: chatResponse("again")}, e.env); !errors.Is(err, workflow.ErrStale) {
		t.Errorf("second completion: %v, want ErrStale", err)
	}
	e.run()
	e.expectOutput(map[string]any{"said": "hello"})
}

func TestPromptCall(t *testing.T) {
	e := newEngine(t, `
name: t
tools:
- {name: lookup, type: function, function: {name: lookup, description: finds}}
inherit_tools: true
main:
- prompt:
  - role: system
    content: $ f"You help {_.who}."
  - role: user
    content: "Hello {{ _.who }}"
  settings: {model: gpt-4o, temperature: 0.2, user: $ _.who}
  tool_choice: auto
`)
	e.env.AgentTools = []workflow.Tool{{Name: "search", Type: "system"}, {Name: "lookup", Type: "function"}}
	var got *workflow.ModelCall
	e.model = func(path string, call *workflow.ModelCall) workflow.Result {
		got = call
		return workflow.Result{Output: chatResponse("ok")}
	}
	e.start(map[string]any{"who": "Ada"})
	e.run()
	if got == nil {
		t.Fatal("no model call")
	}
	if !equalJSON(t, got.Messages, []any{
		map[string]any{"role": "system", "content": "You help Ada."},
		map[string]any{"role": "user", "content": "Hello Ada"},
	}) {
		t.Errorf("messages %s", jsonOf(t, got.Messages))
	}
	if !equalJSON(t, got.Settings, map[string]any{"model": "gpt-4o", "temperature": 0.2, "user": "Ada"}) || got.ToolChoice != "auto" {
		t.Errorf("settings %v tool_choice %v", got.Settings, got.ToolChoice)
	}
	var names []string
	for _, tl := range got.Tools {
		names = append(names, tl.Name)
	}
	// The agent's tools first, the task's own replacing the agent's of the same name.
	if strings.Join(names, ",") != "search,lookup" || got.Tools[1].Description != "finds" {
		t.Errorf("tools %+v", got.Tools)
	}
	// Without unwrap the output is the response, with each choice's content beside its message.
	out := e.state.Output.(map[string]any)["choices"].([]any)[0].(map[string]any)
	if out["content"] != "ok" {
		t.Errorf("output %v", e.state.Output)
	}
}

func TestCancel(t *testing.T) {
	e := newEngine(t, "name: t\nmain:\n- wait_for_input: {info: {}}\n- evaluate: {}")
	e.start(nil)
	e.run()
	tr, err := workflow.Cancel(e.state, "changed my mind", e.env)
	if err != nil {
		t.Fatal(err)
	}
	e.record(tr)
	if e.state.Status != workflow.StatusCancelled {
		t.Fatalf("status %s", e.state.Status)
	}
	if _, err := workflow.Resume(e.task, e.state, "late", e.env); !errors.Is(err, workflow.ErrStale) {
		t.Errorf("resume after cancel: %v", err)
	}
	if _, err := workflow.Cancel(e.state, "", e.env); !errors.Is(err, workflow.ErrStale) {
		t.Errorf("second cancel: %v", err)
	}
	e.checkFold()
}

func TestTransitionTooLarge(t *testing.T) {
	e := newEngine(t, "name: t\nmain:\n- evaluate: {big: $ 'x' * 3000}\n- evaluate: {}")
	e.env.Limits.MaxTransitionBytes = 2000
	e.start(nil)
	e.run()
	e.expectError("the output cannot be recorded", "more than the 2000 a transition may hold")
}
