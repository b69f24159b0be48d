package execution_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/workflow"
)

var t0 = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// run folds decided events into a state as the log would hand them back.
type run struct {
	t   *testing.T
	s   execution.State
	seq uint64
}

func (r *run) fold(evs []events.Event) {
	r.t.Helper()
	for _, ev := range evs {
		r.seq++
		_, ev = events.Unwrap(ev)
		raw, err := json.Marshal(ev)
		if err != nil {
			r.t.Fatal(err)
		}
		// Through JSON, as the log holds it.
		decoded, err := events.NewRegistry().Decode(ev.EventType(), raw)
		if err != nil {
			r.t.Fatal(err)
		}
		r.s.Apply(events.Envelope{Type: ev.EventType(), AggregateID: "acct_a-0190b0b0-0000-7000-8000-000000000001",
			Account: "acct_a", Sequence: r.seq, Time: t0, Event: decoded})
	}
	if r.s.Broken != "" {
		r.t.Fatalf("the fold refused: %s", r.s.Broken)
	}
}

func start(t *testing.T, source string, input string) *run {
	t.Helper()
	r := &run{t: t}
	task, raw, err := workflow.ParseSource([]byte(source))
	if err != nil || task == nil {
		t.Fatalf("parse: %v", err)
	}
	evs, err := execution.Start(&r.s, "acct_a", execution.NewExecution{ID: "0190b0b0-0000-7000-8000-000000000001",
		Task: events.TaskSpec{Agent: "agent", Source: raw}, TaskID: "task", Input: json.RawMessage(input)}, t0)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	r.fold(evs)
	return r
}

// advance decides until nothing is left to decide, and returns the effects requested.
func (r *run) advance() []events.ExecutionEffectRequested {
	r.t.Helper()
	var asked []events.ExecutionEffectRequested
	for range 100 {
		evs, err := execution.Advance(context.Background(), &r.s, execution.Env{Now: t0}, 1)
		if err != nil {
			r.t.Fatalf("advance: %v", err)
		}
		if len(evs) == 0 {
			return asked
		}
		for _, ev := range evs {
			if a, ok := ev.(events.ExecutionEffectRequested); ok {
				asked = append(asked, a)
			}
		}
		r.fold(evs)
	}
	r.t.Fatal("the execution did not settle")
	return nil
}

func TestStartRefusesInputTheSchemaRefuses(t *testing.T) {
	var s execution.State
	_, raw, _ := workflow.ParseSource([]byte("name: t\ninput_schema: {type: object, properties: {n: {type: integer}}, required: [n]}\nmain:\n- evaluate: {x: $ _.n}\n"))
	_, err := execution.Start(&s, "acct_a", execution.NewExecution{ID: "x", Task: events.TaskSpec{Source: raw}, Input: json.RawMessage(`{"n":"four"}`)}, t0)
	if e := errs.As(err); e == nil || e.Code != errs.Invalid || e.Field != "input.n" {
		t.Fatalf("bad input: %v", err)
	}
}

func TestEffectsAreAskedOnceAndCompleted(t *testing.T) {
	r := start(t, "name: t\nmain:\n- prompt: hi {{ _.who }}\n  unwrap: true\n- sleep: {seconds: 5}\n- evaluate:\n    said: $ steps[0].output\n", `{"who":"ada"}`)
	asked := r.advance()
	// Julep's status stays starting until the first step's transition.
	if len(asked) != 1 || r.s.Status != workflow.StatusStarting {
		t.Fatalf("asked %v, status %s", asked, r.s.Status)
	}
	// Asked again, nothing more is requested while the effect is under way.
	if again := r.advance(); len(again) != 0 {
		t.Fatalf("asked twice: %v", again)
	}
	resp := map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": "hello ada"}}}}
	evs, err := execution.Complete(context.Background(), &r.s, asked[0].Key, workflow.Result{Output: resp}, execution.Env{Now: t0})
	if err != nil || len(evs) != 1 {
		t.Fatalf("complete: %v %v", evs, err)
	}
	r.fold(evs)
	// The same result again (a redelivery) records nothing.
	if evs, _ := execution.Complete(context.Background(), &r.s, asked[0].Key, workflow.Result{Output: resp}, execution.Env{Now: t0}); len(evs) != 0 {
		t.Fatalf("a result recorded twice: %v", evs)
	}
	timer := r.advance()
	if len(timer) != 1 || r.s.Timers[timer[0].Key].Sub(t0) != 5*time.Second {
		t.Fatalf("the sleep: %v %v", timer, r.s.Timers)
	}
	evs, _ = execution.Complete(context.Background(), &r.s, timer[0].Key, workflow.Result{}, execution.Env{Now: t0.Add(5 * time.Second)})
	r.fold(evs)
	r.advance()
	if r.s.Status != workflow.StatusSucceeded || string(r.s.Output) != `{"said":"hello ada"}` || len(r.s.Timers) != 0 {
		t.Fatalf("end: %s %s %v", r.s.Status, r.s.Output, r.s.Timers)
	}
}

func TestResumeAndCancelRules(t *testing.T) {
	r := start(t, "name: t\nmain:\n- wait_for_input: {info: more}\n- evaluate: {x: $ _.x}\n", `{}`)
	if _, err := execution.Resume(&r.s, "acct_a", "id", json.RawMessage(`{"x":1}`), execution.Env{Now: t0}); errs.CodeOf(err) != errs.Conflict {
		t.Fatalf("resume before the wait: %v", err)
	}
	r.advance()
	if r.s.Status != workflow.StatusAwaitingInput {
		t.Fatalf("status %s", r.s.Status)
	}
	if _, err := execution.Resume(&r.s, "acct_b", "id", json.RawMessage(`{}`), execution.Env{Now: t0}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another account resumes: %v", err)
	}
	evs, err := execution.Resume(&r.s, "acct_a", "id", json.RawMessage(`{"x":7}`), execution.Env{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	r.fold(evs)
	r.advance()
	if r.s.Status != workflow.StatusSucceeded || string(r.s.Output) != `{"x":7}` {
		t.Fatalf("end: %s %s", r.s.Status, r.s.Output)
	}
	if _, err := execution.Cancel(&r.s, "acct_a", "id", "", execution.Env{Now: t0}); errs.CodeOf(err) != errs.Conflict ||
		!strings.Contains(err.Error(), "succeeded") {
		t.Fatalf("cancel a finished execution: %v", err)
	}

	c := start(t, "name: t\nmain:\n- wait_for_input: {info: more}\n", `{}`)
	c.advance()
	evs, err = execution.Cancel(&c.s, "acct_a", "id", "changed my mind", execution.Env{Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	c.fold(evs)
	if c.s.Status != workflow.StatusCancelled || c.s.Error != "changed my mind" {
		t.Fatalf("cancelled: %s %q", c.s.Status, c.s.Error)
	}
	// A retried cancel is nothing; the engine decides nothing more.
	if evs, err := execution.Cancel(&c.s, "acct_a", "id", "", execution.Env{Now: t0}); err != nil || len(evs) != 0 {
		t.Fatalf("cancel again: %v %v", evs, err)
	}
	if asked := c.advance(); len(asked) != 0 {
		t.Fatalf("a cancelled execution asked for %v", asked)
	}
}

func TestAnExpressionErrorFailsNamingTheStep(t *testing.T) {
	r := start(t, "name: t\nmain:\n- evaluate: {ok: $ 1}\n- evaluate: {x: $ 1 / _.zero}\n", `{"zero":0}`)
	r.advance()
	if r.s.Status != workflow.StatusFailed || !strings.Contains(r.s.Error, "main[1]") {
		t.Fatalf("status %s, error %q", r.s.Status, r.s.Error)
	}
}
