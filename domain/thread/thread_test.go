package thread

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
)

// log folds events into a thread as the store would: each with an ID (its own, when the decision gave one), a
// sequence and a time.
type log struct {
	t   State
	seq uint64
}

func (l *log) apply(evs ...events.Event) {
	for _, ev := range evs {
		l.seq++
		id, inner := events.Unwrap(ev)
		if id == "" {
			id = fmt.Sprintf("ev%d", l.seq)
		}
		l.t.Apply(events.Envelope{ID: id, AggregateID: "thread_1", Account: "acct_1", Sequence: l.seq,
			Time: time.Unix(int64(l.seq), 0), Type: inner.EventType(), Event: inner})
	}
}

func newRun(t *testing.T) (*log, *Run) {
	t.Helper()
	l := &log{}
	l.apply(events.ThreadCreated{},
		events.MessageCreated{MessageID: "msg_u", Role: "user", Content: []events.ContentPart{{Type: "text", Text: "hi"}}},
		events.RunCreated{RunID: "run_1", AssistantID: "asst_1", Model: "m"})
	r := l.t.Runs["run_1"]
	if r.Status != events.RunStatusQueued || l.t.ActiveRun != "run_1" {
		t.Fatalf("a created run: %+v, active %q", r, l.t.ActiveRun)
	}
	l.apply(Start(r)...)
	if r.Status != events.RunStatusInProgress || r.Turn == "" {
		t.Fatalf("a started run: %+v", r)
	}
	if evs := Start(r); evs != nil {
		t.Fatalf("a run in progress started again: %v", evs)
	}
	return l, r
}

// typesOf lists the types of the events a decision returns.
func typesOf(evs []events.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		_, inner := events.Unwrap(e)
		out[i] = inner.EventType()
	}
	return out
}

func TestATurnThatAnswersCompletesTheRun(t *testing.T) {
	l, r := newRun(t)
	res := TurnResult{Text: "hello", Usage: events.TokenUsage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4}}
	evs := Turn(&l.t, r, r.Turn, res)
	// The message's step is recorded completed: no event completes it.
	if got := typesOf(evs); !slices.Equal(got, []string{"thread.message_created", "thread.run_step_created", "thread.run_completed"}) {
		t.Fatalf("the turn records %v", got)
	}
	l.apply(evs...)
	m := l.t.Messages[TurnMessageID(r.Turn)]
	if r.Status != events.RunStatusCompleted || m == nil || m.Text() != "hello" || l.t.ActiveRun != "" || r.Usage.TotalTokens != 4 {
		t.Fatalf("after the turn: run %+v, message %+v", r, m)
	}
	if s := l.t.Steps[TurnMessageStepID(r.Turn)]; s == nil || s.Status != events.StepStatusCompleted {
		t.Fatalf("the message's step: %+v", s)
	}
	if got, ok := l.t.RecordedTurn(r); !ok || got.Text != "hello" || got.Usage.TotalTokens != 4 {
		t.Fatalf("the turn rebuilt from the log: %+v %v", got, ok)
	}
}

func TestATurnInterruptedAfterItsFirstEventIsFinishedFromTheLog(t *testing.T) {
	l, r := newRun(t)
	evs := Turn(&l.t, r, r.Turn, TurnResult{Text: "hello"})
	l.apply(evs[0]) // the message, then a crash
	res, ok := l.t.RecordedTurn(r)
	if !ok || res.Text != "hello" {
		t.Fatalf("the recorded part of the turn: %+v %v", res, ok)
	}
	rest := Turn(&l.t, r, r.Turn, res)
	if got := typesOf(rest); !slices.Equal(got, []string{"thread.run_step_created", "thread.run_completed"}) {
		t.Fatalf("what finishes the turn: %v", got)
	}
	l.apply(rest...)
	if r.Status != events.RunStatusCompleted || len(l.t.Order) != 2 {
		t.Fatalf("after finishing: run %s, %d messages", r.Status, len(l.t.Order))
	}
}

func TestToolCallsWaitForTheirOutputsAndQueueTheNextTurn(t *testing.T) {
	l, r := newRun(t)
	calls := []events.ToolCall{{ID: "call_1", Type: "function", Name: "f", Arguments: "{}"}}
	l.apply(Turn(&l.t, r, r.Turn, TurnResult{ToolCalls: calls})...)
	step := l.t.WaitingStep(r)
	if r.Status != events.RunStatusRequiresAction || step == nil || step.StepID != TurnToolStepID(r.Turn) {
		t.Fatalf("after tool calls: run %s, waiting %+v", r.Status, step)
	}
	l.apply(events.RunToolOutputsSubmitted{RunID: "run_1", StepID: step.StepID, Outputs: []events.ToolOutput{{ToolCallID: "call_1", Output: "42"}}})
	if r.Status != events.RunStatusQueued || step.Status != events.StepStatusCompleted || step.Outputs["call_1"] != "42" || l.t.WaitingStep(r) != nil {
		t.Fatalf("after the outputs: run %s, step %+v", r.Status, step)
	}
	first := r.Turn
	l.apply(Start(r)...)
	if r.Turn == first {
		t.Fatal("the next turn has the first one's ID")
	}
}

func TestServerToolsQueueTheRunAtOnceAndOnlyOnce(t *testing.T) {
	l, r := newRun(t)
	calls := []events.ToolCall{{ID: "call_fs", Type: "file_search", FileSearch: &events.FileSearchCall{}}}
	outs := []events.ToolOutput{{ToolCallID: "call_fs", Output: "found"}}
	turn := r.Turn
	l.apply(ServerTools(&l.t, r, turn, calls, outs, events.TokenUsage{TotalTokens: 5})...)
	if r.Status != events.RunStatusQueued || r.Usage.TotalTokens != 5 || l.t.Steps[TurnToolStepID(turn)].Outputs["call_fs"] != "found" {
		t.Fatalf("after the platform's tools: run %+v", r)
	}
	if evs := ServerTools(&l.t, r, turn, calls, outs, events.TokenUsage{}); evs != nil {
		t.Fatalf("the same turn's tools recorded again: %v", evs)
	}
}

// Code started and never recorded as ended is found interrupted, recorded once as such, and not started again.
func TestStartedCodeIsRecordedInterruptedOnce(t *testing.T) {
	l, r := newRun(t)
	turn := r.Turn
	started := []events.ToolCall{{ID: "call_c", Type: "code_interpreter", Name: "code_interpreter",
		CodeInterpreter: &events.CodeInterpreterCall{Input: "import time", Outputs: []events.CodeOutput{}}}}
	if _, _, ok := l.t.InterruptedCalls(r); ok {
		t.Fatal("interrupted calls before any started")
	}
	l.apply(StartServerTools(&l.t, r, turn, started, events.TokenUsage{TotalTokens: 7})...)
	if evs := StartServerTools(&l.t, r, turn, started, events.TokenUsage{}); evs != nil {
		t.Fatalf("the same turn's code started again: %v", evs)
	}
	if _, ok := l.t.RecordedTurn(r); !ok {
		t.Fatal("a started step is not the turn's record")
	}
	calls, usage, ok := l.t.InterruptedCalls(r)
	if !ok || len(calls) != 1 || usage.TotalTokens != 7 || r.Usage.TotalTokens != 7 {
		t.Fatalf("interrupted: %v %+v %v, run usage %+v", calls, usage, ok, r.Usage)
	}
	calls, outs := Interrupt(calls)
	l.apply(ServerTools(&l.t, r, turn, calls, outs, usage)...)
	s := l.t.Steps[TurnToolStepID(turn)]
	if r.Status != events.RunStatusQueued || r.Usage.TotalTokens != 7 || s.Status != events.StepStatusCompleted ||
		s.Outputs["call_c"] != InterruptedError || s.ToolCalls[0].CodeInterpreter.Outputs[0].Logs != InterruptedError {
		t.Fatalf("after the interruption: run %+v step %+v", r, s)
	}
	if started[0].CodeInterpreter.Outputs == nil || len(started[0].CodeInterpreter.Outputs) != 0 {
		t.Fatalf("Interrupt changed the calls it was given: %+v", started[0].CodeInterpreter)
	}
	if _, _, ok := l.t.InterruptedCalls(r); ok {
		t.Fatal("interrupted calls after they were recorded")
	}
	if evs := ServerTools(&l.t, r, turn, calls, outs, usage); evs != nil {
		t.Fatalf("the interrupted calls recorded again: %v", evs)
	}
}

func TestEndingARunEndsItsStepsInProgress(t *testing.T) {
	for _, c := range []struct {
		status, run string
	}{
		{events.StepStatusCancelled, events.RunStatusCancelled},
		{events.StepStatusExpired, events.RunStatusExpired},
		{events.StepStatusFailed, events.RunStatusFailed},
	} {
		l, r := newRun(t)
		l.apply(Turn(&l.t, r, r.Turn, TurnResult{ToolCalls: []events.ToolCall{{ID: "c", Type: "function", Name: "f"}}})...)
		l.apply(End(&l.t, r, c.status, "server_error", "boom")...)
		step := l.t.Steps[TurnToolStepID(r.Turn)]
		if r.Status != c.run || step.Status != c.status || l.t.ActiveRun != "" || Active(r.Status) {
			t.Errorf("%s: run %s, step %s, active %q", c.status, r.Status, step.Status, l.t.ActiveRun)
		}
	}
}

func TestAttachedFilesPerTool(t *testing.T) {
	l := &log{}
	l.apply(events.ThreadCreated{},
		events.MessageCreated{MessageID: "m1", Role: "user", Attachments: []byte(`[{"file_id":"file-a","tools":[{"type":"file_search"},{"type":"code_interpreter"}]},{"file_id":"file-b","tools":[{"type":"code_interpreter"}]}]`)},
		events.MessageCreated{MessageID: "m2", Role: "user", Attachments: []byte(`[{"file_id":"file-a","tools":[{"type":"file_search"}]}]`)},
		events.MessageDeleted{MessageID: "m2"},
		events.MessageCreated{MessageID: "m3", Role: "user", Attachments: []byte(`[{"file_id":"file-c","tools":[{"type":"file_search"}]}]`)})
	if got := fmt.Sprint(l.t.AttachedFiles("file_search")); got != "[file-a file-c]" {
		t.Errorf("file_search: %s", got)
	}
	if got := fmt.Sprint(l.t.AttachedFiles("code_interpreter")); got != "[file-a file-b]" {
		t.Errorf("code_interpreter: %s", got)
	}
}

// TestACloneAndItsOriginalFoldApart: what is folded into a copy after Clone (a turn: a message, steps, the run's
// end) leaves the original as it was, and what is folded into the original leaves the copy as it was. The run
// worker changes its copy as it appends while the node's copy goes on folding. The expected states are folded
// apart from the same events, not cloned.
func TestACloneAndItsOriginalFoldApart(t *testing.T) {
	start := func() (*log, *Run) {
		l, r := newRun(t)
		for i := range 3 { // three steps: the run's list of steps has room for a fourth
			l.apply(events.StepCreated{StepID: fmt.Sprintf("step_%d", i), RunID: "run_1"})
		}
		return l, r
	}
	turn := func(l *log, r *Run) {
		l.apply(Turn(&l.t, l.t.Runs["run_1"], r.Turn, TurnResult{Text: "hello"})...)
		l.apply(events.MessageModified{MessageID: "msg_u", Metadata: map[string]string{"k": "v"}})
	}
	l, r := start()
	want, _ := start()
	c := &log{t: l.t.Clone(), seq: l.seq}
	turn(c, r)
	if c.t.Runs["run_1"].Status != events.RunStatusCompleted || len(c.t.Runs["run_1"].Steps) != 4 || c.t.Messages["msg_u"].Metadata["k"] != "v" {
		t.Fatalf("the copy did not fold the turn: %+v", c.t.Runs["run_1"])
	}
	if !reflect.DeepEqual(l.t, want.t) {
		t.Fatalf("folding into the copy changed the original:\n%+v\nwant\n%+v", l.t, want.t)
	}
	wantCopy, r2 := start()
	turn(wantCopy, r2)
	l.apply(events.MessageCreated{MessageID: "msg_3", Role: "user"}, events.RunCancelling{RunID: "run_1"})
	l.apply(events.StepCreated{StepID: "step_x", RunID: "run_1"})
	l.apply(events.MessageModified{MessageID: "msg_u", Metadata: map[string]string{"k": "other"}})
	if !reflect.DeepEqual(c.t, wantCopy.t) {
		t.Fatalf("folding into the original changed the copy:\n%+v\nwant\n%+v", c.t, wantCopy.t)
	}
}

// TestACloneSharesWhatEndedAndNeitherChangesItForTheOther: a clone shares the messages, runs and steps that no
// longer change by themselves; what an event still changes of them (metadata, a deletion) each side changes for
// itself alone.
func TestACloneSharesWhatEndedAndNeitherChangesItForTheOther(t *testing.T) {
	ended := func() *log {
		l, r := newRun(t)
		l.apply(Turn(&l.t, r, r.Turn, TurnResult{Text: "hello"})...)
		return l
	}
	changes := func(l *log, v string) {
		step := l.t.Runs["run_1"].Steps[0]
		l.apply(events.MessageModified{MessageID: "msg_u", Metadata: map[string]string{"k": v}},
			events.MessageDeleted{MessageID: TurnMessageID(l.t.Runs["run_1"].Turn)},
			events.RunModified{RunID: "run_1", Metadata: map[string]string{"k": v}},
			events.StepEnded{StepID: step, RunID: "run_1", Status: "ended by " + v},
			events.RunCreated{RunID: "run_" + v})
	}
	l := ended()
	if l.t.Runs["run_1"].Status != events.RunStatusCompleted {
		t.Fatalf("the run did not end: %+v", l.t.Runs["run_1"])
	}
	c := &log{t: l.t.Clone(), seq: l.seq}
	if c.t.Messages["msg_u"] != l.t.Messages["msg_u"] || c.t.Runs["run_1"] != l.t.Runs["run_1"] {
		t.Fatal("a clone copied what it can share")
	}
	changes(l, "original")
	changes(c, "copy")
	for name, s := range map[string]*log{"original": l, "copy": c} {
		want := ended()
		changes(want, name)
		if !reflect.DeepEqual(s.t, want.t) {
			t.Fatalf("the %s after both changed:\n%+v\nwant\n%+v", name, s.t, want.t)
		}
	}
}

// A step's view started with code_interpreter calls shows them, once ended, with what they gave and their outputs.
func TestAStartedStepsViewEndsWithItsCallsAsTheyEnded(t *testing.T) {
	at := time.Unix(1, 0)
	started := events.StepCreated{StepID: "step_1", RunID: "run_1", Type: events.StepTypeToolCalls,
		ToolCalls: []events.ToolCall{{ID: "call_c", Type: "code_interpreter", CodeInterpreter: &events.CodeInterpreterCall{Input: "print(1)", Outputs: []events.CodeOutput{}}}}}
	v := NewStepView(events.Envelope{Time: at, AggregateID: "thread_1"}, started)
	ended := []events.ToolCall{{ID: "call_c", Type: "code_interpreter", CodeInterpreter: &events.CodeInterpreterCall{Input: "print(1)",
		Outputs: []events.CodeOutput{{Type: "logs", Logs: "1\n"}}}}}
	ApplyStep(&v, events.Envelope{Time: at, Event: events.RunToolOutputsSubmitted{RunID: "run_1", StepID: "step_1",
		Outputs: []events.ToolOutput{{ToolCallID: "call_c", Output: "1\n"}}, ToolCalls: ended}})
	if v.Status != events.StepStatusCompleted || len(v.ToolCalls) != 1 || v.ToolCalls[0].Output == nil ||
		!reflect.DeepEqual(v.ToolCalls[0].CodeInterpreter, ended[0].CodeInterpreter) {
		t.Fatalf("the ended step's view: %+v", v)
	}
}
