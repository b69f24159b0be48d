package commands_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// runOnLog is a thread with one run in progress, written straight to a real log.
type runOnLog struct {
	store *eventstore.Store
	cmds  *commands.Turns
	ref   commands.RunRef
	turn  string
}

func newRunOnLog(t *testing.T) runOnLog {
	t.Helper()
	ctx := context.Background()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	if err := natsx.Provision(ctx, srv.JS, natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewStore(srv.JS, names, events.NewRegistry())
	ref := commands.RunRef{Account: "acct_1", ThreadID: "thread_1", RunID: "run_1"}
	meta := events.Meta{Account: ref.Account, Actor: "test"}
	res, err := store.Append(ctx, events.Ref{Type: "thread", ID: ref.ThreadID}, events.Version{}, meta,
		events.ThreadCreated{},
		events.MessageCreated{MessageID: "msg_q", Role: "user", Content: []events.ContentPart{{Type: "text", Text: "hi"}}, Status: "completed"},
		events.RunCreated{RunID: ref.RunID, AssistantID: "asst_1", Model: "m", ExpiresAt: time.Now().Add(time.Hour)},
		events.RunStarted{RunID: ref.RunID},
	)
	if err != nil {
		t.Fatal(err)
	}
	return runOnLog{store: store, cmds: commands.New(commands.Config{Store: store}).Turns, ref: ref, turn: res.Events[3].ID}
}

// appendAs writes an event with the ID the turn gives it, as a worker that died right after would have left it.
func (r runOnLog) appendAs(t *testing.T, label string, e events.Event) {
	t.Helper()
	th, err := r.cmds.Load(context.Background(), r.ref.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.store.Append(context.Background(), events.Ref{Type: "thread", ID: r.ref.ThreadID}, th.Version,
		events.Meta{Account: r.ref.Account}, events.WithID(events.DeriveID(r.turn, label), e)); err != nil {
		t.Fatal(err)
	}
}

func (r runOnLog) types(t *testing.T) []string {
	t.Helper()
	history, _, err := r.store.Load(context.Background(), events.Ref{Type: "thread", ID: r.ref.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range history[4:] {
		out = append(out, e.Type)
	}
	return out
}

func TestTurnFinishedFromItsFirstEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunOnLog(t)
	usage := events.TokenUsage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}
	// The worker died right after recording the message: the first event of a text answer.
	r.appendAs(t, "message", events.MessageCreated{MessageID: commands.TurnMessageID(r.turn), Role: "assistant",
		Content: []events.ContentPart{{Type: "text", Text: "hello"}}, RunID: r.ref.RunID, AssistantID: "asst_1",
		Status: "completed", StepID: commands.TurnMessageStepID(r.turn), Usage: &usage})

	th, err := r.cmds.Load(ctx, r.ref.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := th.RecordedTurn(th.Runs[r.ref.RunID])
	if !ok || res.Text != "hello" || res.Usage != usage || len(res.ToolCalls) != 0 {
		t.Fatalf("recorded turn: %+v %v", res, ok)
	}
	th, err = r.cmds.RecordTurn(ctx, r.ref, th, r.turn, res)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"thread.message_created", "thread.run_step_created", "thread.run_completed"}
	if got := r.types(t); !slices.Equal(got, want) {
		t.Fatalf("log after finishing the turn: %v", got)
	}
	if st := th.Steps[commands.TurnMessageStepID(r.turn)]; st == nil || st.Status != events.StepStatusCompleted {
		t.Fatalf("the message's step after the turn: %+v", st)
	}
	if run := th.Runs[r.ref.RunID]; run.Status != events.RunStatusCompleted || run.Usage != usage {
		t.Fatalf("run after: %+v", run)
	}
	// A second worker redoing the same turn records nothing more.
	if _, err := r.cmds.RecordTurn(ctx, r.ref, nil, r.turn, res); err != nil {
		t.Fatal(err)
	}
	if got := r.types(t); !slices.Equal(got, want) {
		t.Fatalf("log after a repeated turn: %v", got)
	}
}

func TestToolTurnFinishedFromItsFirstEvent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunOnLog(t)
	calls := []events.ToolCall{{ID: "call_1", Type: "function", Name: "f", Arguments: `{}`}}
	r.appendAs(t, "tool-step", events.StepCreated{StepID: commands.TurnToolStepID(r.turn), RunID: r.ref.RunID,
		Type: events.StepTypeToolCalls, ToolCalls: calls, Usage: &events.TokenUsage{TotalTokens: 3}})

	th, err := r.cmds.Load(ctx, r.ref.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := th.RecordedTurn(th.Runs[r.ref.RunID])
	if !ok || len(res.ToolCalls) != 1 || res.Text != "" {
		t.Fatalf("recorded turn: %+v %v", res, ok)
	}
	if _, err := r.cmds.RecordTurn(ctx, r.ref, th, r.turn, res); err != nil {
		t.Fatal(err)
	}
	if got := r.types(t); !slices.Equal(got, []string{"thread.run_step_created", "thread.run_requires_action"}) {
		t.Fatalf("log: %v", got)
	}
}

func TestRecordTurnOnAStaleThreadDecidesAgain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunOnLog(t)
	stale, err := r.cmds.Load(ctx, r.ref.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	// The run is cancelled while the model answers: the answer is not recorded.
	r.appendAs(t, "cancel", events.RunCancelling{RunID: r.ref.RunID})
	th, err := r.cmds.RecordTurn(ctx, r.ref, stale, r.turn, commands.TurnResult{Text: "too late"})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.types(t); !slices.Equal(got, []string{"thread.run_cancelling"}) {
		t.Fatalf("log: %v", got)
	}
	if _, err := r.cmds.FinishCancel(ctx, r.ref, th); err != nil {
		t.Fatal(err)
	}
	if got := r.types(t); !slices.Equal(got, []string{"thread.run_cancelling", "thread.run_cancelled"}) {
		t.Fatalf("log: %v", got)
	}
}

// A run its worker let go of, waiting for tool outputs, needs work again only once the log holds what hands it
// back: an event of another kind appended elsewhere leaves it waiting, a submission of its outputs appended
// elsewhere (not through this node's commands) is seen.
func TestARunLetGoOfNeedsWorkWhenTheLogHandsItBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunOnLog(t)
	calls := []events.ToolCall{{ID: "call_1", Type: "function", Name: "f", Arguments: `{}`}}
	if _, err := r.cmds.RecordTurn(ctx, r.ref, nil, r.turn, commands.TurnResult{ToolCalls: calls}); err != nil {
		t.Fatal(err)
	}
	needs := func(want bool) {
		t.Helper()
		got, err := r.cmds.NeedsWork(ctx, r.ref.ThreadID, r.ref.RunID)
		if err != nil || got != want {
			t.Fatalf("needs work: %v (%v), want %v", got, err, want)
		}
	}
	needs(false)
	r.appendAs(t, "other", events.MessageModified{MessageID: "msg_q", Metadata: map[string]string{"k": "v"}})
	needs(false)
	r.appendAs(t, "outputs", events.RunToolOutputsSubmitted{RunID: r.ref.RunID, StepID: commands.TurnToolStepID(r.turn),
		Outputs: []events.ToolOutput{{ToolCallID: "call_1", Output: "42"}}})
	needs(true)
}

// TestATurnRecordedByAnOlderBuildIsCompleted: a message step recorded in progress (as builds did that completed it
// with an event of its own) gets that event when the turn is finished, and nothing else is recorded twice.
func TestATurnRecordedByAnOlderBuildIsCompleted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newRunOnLog(t)
	usage := events.TokenUsage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12}
	msgID, stepID := commands.TurnMessageID(r.turn), commands.TurnMessageStepID(r.turn)
	r.appendAs(t, "message", events.MessageCreated{MessageID: msgID, Role: "assistant",
		Content: []events.ContentPart{{Type: "text", Text: "hello"}}, RunID: r.ref.RunID, AssistantID: "asst_1",
		Status: "completed", StepID: stepID, Usage: &usage})
	r.appendAs(t, "message-step", events.StepCreated{StepID: stepID, RunID: r.ref.RunID, AssistantID: "asst_1",
		Type: events.StepTypeMessageCreation, MessageID: msgID})
	th, err := r.cmds.Load(ctx, r.ref.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	res, ok := th.RecordedTurn(th.Runs[r.ref.RunID])
	if !ok || res.Text != "hello" {
		t.Fatalf("recorded turn: %+v %v", res, ok)
	}
	if th, err = r.cmds.RecordTurn(ctx, r.ref, th, r.turn, res); err != nil {
		t.Fatal(err)
	}
	want := []string{"thread.message_created", "thread.run_step_created", "thread.run_step_completed", "thread.run_completed"}
	if got := r.types(t); !slices.Equal(got, want) {
		t.Fatalf("log after finishing the turn: %v", got)
	}
	if st := th.Steps[stepID]; st.Status != events.StepStatusCompleted || th.Runs[r.ref.RunID].Status != events.RunStatusCompleted {
		t.Fatalf("step %+v, run %+v", st, th.Runs[r.ref.RunID])
	}
}
