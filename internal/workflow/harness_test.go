package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/workflow"
)

// engine plays the task engine in tests: it records transitions, folds them, performs fake effects and
// feeds their results back, without I/O.
type engine struct {
	t     *testing.T
	task  *workflow.Task
	state *workflow.State
	log   []workflow.Transition
	now   time.Time
	env   workflow.Env
	// model answers a prompt step (by path); tool a non-function tool call.
	model func(path string, call *workflow.ModelCall) workflow.Result
	tool  func(path string, call *workflow.ToolCall) workflow.Result
	// inputs answer waits, in order.
	inputs []any
	// reverse completes the effects of one decision in reverse order (branches finish out of order).
	reverse bool
	// maxEffects stops the run after that many effects (0: no limit).
	maxEffects int
	effects    []workflow.Effect
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func newEngine(t *testing.T, src string) *engine {
	t.Helper()
	task, err := workflow.Parse([]byte(src))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	e := &engine{t: t, task: task, state: workflow.NewState(), now: t0}
	e.env = workflow.Env{ExecutionID: "exec-1", Now: e.now}
	e.model = func(path string, call *workflow.ModelCall) workflow.Result {
		return workflow.Result{Output: chatResponse("answer to " + path)}
	}
	e.tool = func(path string, call *workflow.ToolCall) workflow.Result {
		return workflow.Result{Output: map[string]any{"tool": call.Name, "args": call.Arguments}}
	}
	return e
}

func chatResponse(content string) map[string]any {
	return map[string]any{"id": "resp", "choices": []any{map[string]any{
		"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content},
	}}}
}

// record folds transitions into the state as the engine would after appending them.
func (e *engine) record(trs ...workflow.Transition) {
	e.t.Helper()
	for _, tr := range trs {
		e.now = e.now.Add(time.Millisecond)
		tr.At = e.now
		if err := workflow.Apply(e.task, e.state, tr); err != nil {
			e.t.Fatalf("apply %s at %+v: %v\nlog so far: %s", tr.Type, tr.Current, err, e.types())
		}
		e.log = append(e.log, tr)
	}
	e.env.Now = e.now
}

func (e *engine) types() string {
	var ts []string
	for _, tr := range e.log {
		ts = append(ts, string(tr.Type))
	}
	return strings.Join(ts, " ")
}

func (e *engine) start(input any) {
	e.t.Helper()
	tr, err := workflow.Start(e.task, input, e.env)
	if err != nil {
		e.t.Fatalf("start: %v", err)
	}
	e.record(tr)
}

// run decides and performs until the execution ends or waits with no scripted input left.
func (e *engine) run() *workflow.State {
	e.t.Helper()
	for range 10_000 {
		if e.state.Status.Terminal() {
			return e.state
		}
		d, err := workflow.Decide(context.Background(), e.task, e.state, e.env)
		if err != nil {
			e.t.Fatalf("decide: %v", err)
		}
		if len(d.Transitions) > 0 {
			e.record(d.Transitions...)
			continue
		}
		if len(d.Effects) > 0 {
			effects := d.Effects
			if e.reverse {
				effects = slices.Clone(effects)
				slices.Reverse(effects)
			}
			for _, ef := range effects {
				if e.maxEffects > 0 && len(e.effects) >= e.maxEffects {
					return e.state
				}
				e.effects = append(e.effects, ef)
				trs, err := workflow.Complete(context.Background(), e.task, e.state, ef.Key, e.perform(ef), e.env)
				if err != nil {
					e.t.Fatalf("complete %s: %v", ef.Key, err)
				}
				e.record(trs...)
			}
			continue
		}
		if e.state.Status == workflow.StatusAwaitingInput && len(e.inputs) > 0 {
			in := e.inputs[0]
			e.inputs = e.inputs[1:]
			trs, err := workflow.Resume(e.task, e.state, in, e.env)
			if err != nil {
				e.t.Fatalf("resume: %v", err)
			}
			e.record(trs...)
			continue
		}
		return e.state
	}
	e.t.Fatalf("the execution did not settle: %s", e.types())
	return nil
}

func (e *engine) perform(ef workflow.Effect) workflow.Result {
	switch ef.Kind {
	case workflow.EffectModel:
		return e.model(ef.Path, ef.Model)
	case workflow.EffectTool:
		return e.tool(ef.Path, ef.Tool)
	case workflow.EffectTimer:
		if ef.Until.After(e.now) {
			e.now = ef.Until
			e.env.Now = e.now
		}
		return workflow.Result{}
	}
	e.t.Fatalf("unknown effect %s", ef.Kind)
	return workflow.Result{}
}

// checkFold checks that the state is what folding the log gives, also after a JSON round trip of every
// transition (the events an engine stores), and that each scope's transitions follow Julep's rules.
func (e *engine) checkFold() {
	e.t.Helper()
	data, err := json.Marshal(e.log)
	if err != nil {
		e.t.Fatal(err)
	}
	var decoded []workflow.Transition
	if err := json.Unmarshal(data, &decoded); err != nil {
		e.t.Fatal(err)
	}
	rebuilt, err := workflow.Fold(e.task, decoded)
	if err != nil {
		e.t.Fatalf("fold: %v", err)
	}
	if a, b := jsonOf(e.t, e.state), jsonOf(e.t, rebuilt); a != b {
		e.t.Errorf("the folded state differs from the live one:\nlive   %s\nfolded %s", a, b)
	}
	last := map[int]workflow.TransitionType{}
	for _, tr := range e.log {
		prev := last[tr.Current.Scope]
		if !workflow.CanFollow(prev, tr.Type) {
			e.t.Errorf("scope %d: %s after %q", tr.Current.Scope, tr.Type, prev)
		}
		last[tr.Current.Scope] = tr.Type
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var generic any
	if err := json.Unmarshal(data, &generic); err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(generic)
	return string(out)
}

// equalJSON compares values as JSON (numbers decoded from events are float64, computed ones int64).
func equalJSON(t *testing.T, got, want any) bool {
	t.Helper()
	return jsonOf(t, got) == jsonOf(t, want)
}

func (e *engine) transitionsOf(typ workflow.TransitionType) []workflow.Transition {
	var out []workflow.Transition
	for _, tr := range e.log {
		if tr.Type == typ {
			out = append(out, tr)
		}
	}
	return out
}

func (e *engine) expectOutput(want any) {
	e.t.Helper()
	if e.state.Status != workflow.StatusSucceeded {
		e.t.Fatalf("status %s (error %q), want succeeded; transitions: %s", e.state.Status, e.state.Error, e.types())
	}
	if !equalJSON(e.t, e.state.Output, want) {
		e.t.Errorf("output %s, want %s", jsonOf(e.t, e.state.Output), jsonOf(e.t, want))
	}
}

func (e *engine) expectError(parts ...string) {
	e.t.Helper()
	if e.state.Status != workflow.StatusFailed {
		e.t.Fatalf("status %s, want failed; transitions: %s", e.state.Status, e.types())
	}
	for _, p := range parts {
		if !strings.Contains(e.state.Error, p) {
			e.t.Errorf("error %q does not say %q", e.state.Error, p)
		}
	}
}

var _ = fmt.Sprint
var _ = reflect.DeepEqual

// mostBranches is the most branches the log shows running at once.
func (e *engine) mostBranches() int {
	running, most := 0, 0
	for _, tr := range e.log {
		switch tr.Type {
		case workflow.TypeInitBranch:
			running++
		case workflow.TypeFinishBranch:
			running--
		}
		most = max(most, running)
	}
	return most
}
