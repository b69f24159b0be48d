package session_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// sessionLog folds a session's events as the log would and keeps them for Describe.
type sessionLog struct {
	s    session.State
	seq  uint64
	envs []events.Envelope
}

func (l *sessionLog) add(t *testing.T, evs ...events.Event) {
	t.Helper()
	for _, ev := range evs {
		l.seq++
		id, ev := events.Unwrap(ev)
		if id == "" {
			id = events.NewID()
		}
		env := events.Envelope{ID: id, AggregateID: "acct_a-5b9c3c4e-2222-4e2b-9d3c-0123456789ab", Account: "acct_a",
			Version: l.seq, Sequence: l.seq, Time: time.Unix(int64(l.seq), 0), Event: ev}
		l.s.Apply(env)
		l.envs = append(l.envs, env)
	}
}

func newJulepSession(t *testing.T) *sessionLog {
	l := &sessionLog{}
	evs, err := session.CreateJulep(&l.s, "acct_a", "s1", events.JulepSessionSpec{Agents: []string{"a1"}, RenderTemplates: true})
	if err != nil {
		t.Fatal(err)
	}
	l.add(t, evs...)
	return l
}

func chat(text string, save bool) events.SessionChatRequested {
	return events.SessionChatRequested{TurnID: "turn-" + text, Agent: "a1", Save: save,
		Messages: []events.JulepMessage{{Role: "user", Content: text}}}
}

// A turn goes prepare → model → the tools the platform runs, one by one → model → answer; each decision is made
// once (a second attempt at a step decides nothing), and the answered turn's messages are the history.
func TestJulepTurnSteps(t *testing.T) {
	l := newJulepSession(t)
	if l.s.Next() != nil {
		t.Fatal("the Fixie runner would dispatch a Julep session's query")
	}
	if _, err := session.Post(&l.s, "acct_a", events.SessionMessagePosted{MessageID: "m", Text: "x", Type: events.MessageQuery}, nil); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("a Fixie message to a Julep session: %v", err)
	}
	evs, err := session.RequestChat(&l.s, "acct_a", "s1", chat("hello", true))
	if err != nil {
		t.Fatal(err)
	}
	l.add(t, evs...)
	if evs, _ := session.RequestChat(&l.s, "acct_a", "s1", chat("hello", true)); len(evs) != 0 {
		t.Fatalf("the same chat request again: %v", evs)
	}
	if _, err := session.RequestChat(&l.s, "acct_a", "s1", events.SessionChatRequested{TurnID: "x", Agent: "other"}); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("a chat with an agent not of the session: %v", err)
	}
	turn := l.s.Julep.Active()
	step := func() session.TurnStep { return l.s.Julep.Active().Next() }
	if step().Kind != session.StepPrepare {
		t.Fatalf("first step: %+v", step())
	}
	l.add(t, session.Prepare(&l.s, turn, events.SessionChatPrepared{Model: "m", System: "sys", Input: turn.Request.Messages})...)
	if evs := session.Prepare(&l.s, turn, events.SessionChatPrepared{}); len(evs) != 0 {
		t.Fatalf("prepared twice: %v", evs)
	}
	if s := step(); s.Kind != session.StepModel || s.Call != 0 {
		t.Fatalf("after prepare: %+v", s)
	}
	calls := []events.JulepToolCall{{ID: "c1", Name: "search"}, {ID: "c2", Name: "fetch"}}
	l.add(t, session.CallModel(&l.s, turn, events.SessionChatModelCalled{Call: 0, ToolCalls: calls, Usage: events.JulepUsage{TotalTokens: 10}})...)
	if evs := session.CallModel(&l.s, turn, events.SessionChatModelCalled{Call: 0, ToolCalls: calls}); len(evs) != 0 {
		t.Fatalf("model call 0 recorded twice: %v", evs)
	}
	for i := range calls {
		s := step()
		if s.Kind != session.StepTool || s.Call != 0 || s.Index != i || s.ToolCall.ID != calls[i].ID {
			t.Fatalf("tool step %d: %+v", i, s)
		}
		l.add(t, session.RanTool(&l.s, turn, events.SessionChatToolRan{Call: 0, Index: i, ToolCallID: calls[i].ID, Name: calls[i].Name, Output: "out"})...)
	}
	if s := step(); s.Kind != session.StepModel || s.Call != 1 {
		t.Fatalf("after the tools: %+v", s)
	}
	prompt := l.s.Julep.Prompt(turn, 1)
	if len(prompt) != 5 || prompt[0].Content != "sys" || prompt[2].Role != "assistant" || prompt[4].ToolCallID != "c2" {
		t.Fatalf("prompt of call 1: %+v", prompt)
	}
	if evs := session.Answer(&l.s, turn, 0, events.SessionChatAnswered{Text: "late"}); len(evs) != 0 {
		t.Fatalf("an answer to a past call: %v", evs)
	}
	l.add(t, session.Answer(&l.s, turn, 1, events.SessionChatAnswered{Text: "done", Finish: "stop"})...)
	if evs := session.FailTurn(&l.s, turn, "x", ""); len(evs) != 0 {
		t.Fatalf("a failure after the answer: %v", evs)
	}
	if l.s.Julep.Active() != nil {
		t.Fatal("a turn is still active")
	}
	var sources []string
	for _, e := range l.s.Julep.Entries {
		sources = append(sources, e.Source)
	}
	if got := strings.Join(sources, ","); got != "api_request,tool_request,tool_response,tool_response,api_response" {
		t.Fatalf("history: %s", got)
	}
	if h := l.s.Julep.History(0, false); len(h) != 2 || h[1].Content != "done" {
		t.Fatalf("history without the platform's tool calls: %+v", h)
	}
	for _, env := range l.envs {
		if line, ok := session.Describe(env); !ok || line == "" {
			t.Errorf("replay has no line for %T", env.Event)
		}
	}
}

// A failed turn saves nothing and lets the next one go; a turn with save false answers without history.
func TestJulepFailedAndUnsavedTurns(t *testing.T) {
	l := newJulepSession(t)
	for _, c := range []events.SessionChatRequested{chat("a", true), chat("b", false), chat("c", true)} {
		evs, _ := session.RequestChat(&l.s, "acct_a", "s1", c)
		l.add(t, evs...)
	}
	first := l.s.Julep.Active()
	if first.ID != "turn-a" {
		t.Fatalf("active: %s", first.ID)
	}
	l.add(t, session.FailTurn(&l.s, first, "the model is down", string(errs.Unavailable))...)
	second := l.s.Julep.Active()
	if second.ID != "turn-b" || len(l.s.Julep.Entries) != 0 {
		t.Fatalf("after a failure: active %s, %d entries", second.ID, len(l.s.Julep.Entries))
	}
	l.add(t, session.Prepare(&l.s, second, events.SessionChatPrepared{Input: second.Request.Messages})...)
	l.add(t, session.Answer(&l.s, second, 0, events.SessionChatAnswered{Text: "B"})...)
	if len(l.s.Julep.Entries) != 0 {
		t.Fatalf("an unsaved turn made history: %+v", l.s.Julep.Entries)
	}
	if l.s.Julep.Active().ID != "turn-c" {
		t.Fatal("the third turn is not next")
	}
}

// A summary is recorded when none was made since the one the summarizer started from, and stands in for the
// entries it covers in later prompts.
func TestJulepSummaries(t *testing.T) {
	l := newJulepSession(t)
	for _, text := range []string{"a", "b", "c"} {
		evs, _ := session.RequestChat(&l.s, "acct_a", "s1", chat(text, true))
		l.add(t, evs...)
		turn := l.s.Julep.Active()
		l.add(t, session.Prepare(&l.s, turn, events.SessionChatPrepared{Input: turn.Request.Messages})...)
		l.add(t, session.Answer(&l.s, turn, 0, events.SessionChatAnswered{Text: strings.ToUpper(text)})...)
	}
	if n := len(l.s.Julep.Entries); n != 6 {
		t.Fatalf("%d entries", n)
	}
	if evs := session.Summarize(&l.s, events.NewID(), 2, events.SessionSummarized{Upto: 4}); len(evs) != 0 {
		t.Fatalf("a summary from a start that is not the latest: %v", evs)
	}
	// A summary that could not be made is said once for its reason and start; another reason is said again.
	cannot := events.SessionSummaryFailed{From: 0, Upto: 4, Reason: "the offline model cannot summarise"}
	l.add(t, session.FailSummary(&l.s, events.NewID(), cannot)...)
	if l.s.Julep.SummaryFailed == nil || l.s.Julep.SummaryUpto() != 0 {
		t.Fatalf("failure not recorded, or recorded as a summary: %+v", l.s.Julep)
	}
	if evs := session.FailSummary(&l.s, events.NewID(), cannot); len(evs) != 0 {
		t.Fatalf("the same failure recorded twice: %v", evs)
	}
	if evs := session.FailSummary(&l.s, events.NewID(), events.SessionSummaryFailed{Upto: 4, Reason: "cut off"}); len(evs) != 1 {
		t.Fatalf("another reason is not recorded: %v", evs)
	}
	if evs := session.FailSummary(&l.s, events.NewID(), events.SessionSummaryFailed{From: 2, Upto: 4, Reason: "x"}); len(evs) != 0 {
		t.Fatalf("a failure from a start that is not the latest: %v", evs)
	}
	l.add(t, session.Summarize(&l.s, events.NewID(), 0, events.SessionSummarized{Upto: 4, Summary: "a, b"})...)
	if l.s.Julep.SummaryUpto() != 4 {
		t.Fatalf("summary upto %d", l.s.Julep.SummaryUpto())
	}
	if evs := session.Summarize(&l.s, events.NewID(), 0, events.SessionSummarized{Upto: 6}); len(evs) != 0 {
		t.Fatalf("a second summary from the same start: %v", evs)
	}
	evs, _ := session.RequestChat(&l.s, "acct_a", "s1", chat("d", true))
	l.add(t, evs...)
	turn := l.s.Julep.Active()
	l.add(t, session.Prepare(&l.s, turn, events.SessionChatPrepared{Input: turn.Request.Messages, HistoryFrom: 4, SummaryUpto: 4})...)
	prompt := l.s.Julep.Prompt(turn, 0)
	if len(prompt) != 4 || !strings.Contains(prompt[0].Content, "a, b") || prompt[1].Content != "c" || prompt[3].Content != "d" {
		t.Fatalf("prompt with the summary: %+v", prompt)
	}
	if v := l.s.JulepView(); v.Summary != "a, b" || v.ID != "5b9c3c4e-2222-4e2b-9d3c-0123456789ab" {
		t.Fatalf("view: %+v", v)
	}
}

// A clone of a session's Julep side does not change when the session goes on.
func TestJulepClone(t *testing.T) {
	l := newJulepSession(t)
	evs, _ := session.RequestChat(&l.s, "acct_a", "s1", chat("a", true))
	l.add(t, evs...)
	c := l.s.Julep.Clone()
	turn := l.s.Julep.Active()
	l.add(t, session.Prepare(&l.s, turn, events.SessionChatPrepared{Input: turn.Request.Messages})...)
	l.add(t, session.Answer(&l.s, turn, 0, events.SessionChatAnswered{Text: "A"})...)
	if c.Turns[0].Prepared != nil || c.Turns[0].Done() || len(c.Entries) != 0 {
		t.Fatalf("the clone changed with the session: %+v", c.Turns[0])
	}
	var none *session.Julep
	if none.Clone() != nil {
		t.Fatal("a Fixie session's clone")
	}
}
