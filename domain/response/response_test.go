package response_test

import (
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
)

// fold applies events as the log would give them back.
func fold(s *response.State, evs ...events.Event) {
	for _, e := range evs {
		id, ev := events.Unwrap(e)
		s.Seq++
		s.Apply(events.Envelope{ID: id, AggregateID: "resp_1", Account: "acct_1", Time: time.Unix(1, 0), Sequence: s.Seq, Event: ev})
	}
}

func msg(text string) events.Item {
	return events.Item{Type: "message", ID: "msg_" + text, Role: "assistant", Content: []events.ItemContent{{Type: "output_text", Text: text}}}
}

func TestTurnsRecordOnce(t *testing.T) {
	var s response.State
	fold(&s, events.WithID("created", events.ResponseCreated{Model: "m", Background: true, Store: true}))
	if s.Status != events.ResponseStatusQueued {
		t.Fatalf("status %s", s.Status)
	}
	if evs := response.Turn(&s, 0, []events.Item{msg("a")}, events.TokenUsage{}, response.End{Status: "completed"}, true); evs != nil {
		t.Fatal("a queued response recorded a turn")
	}
	fold(&s, response.Start(&s)...)
	if s.Status != events.ResponseStatusInProgress || response.Start(&s) != nil {
		t.Fatalf("after start: %s", s.Status)
	}
	// A server tool turn goes on; the end is a second turn's.
	evs := response.Turn(&s, 0, []events.Item{{Type: "file_search_call", ID: "fs_1"}}, events.TokenUsage{TotalTokens: 3}, response.End{}, true)
	if len(evs) != 2 {
		t.Fatalf("turn 0 recorded %d events", len(evs))
	}
	fold(&s, evs...)
	if response.Turn(&s, 0, []events.Item{msg("again")}, events.TokenUsage{}, response.End{}, true) != nil {
		t.Fatal("turn 0 recorded twice")
	}
	end := response.End{Status: events.ResponseStatusCompleted}
	// The turn's items are in, its close is not (a log that stopped between appends): the loop closes it from them.
	evs = response.Turn(&s, 1, []events.Item{msg("b")}, events.TokenUsage{TotalTokens: 4}, end, true)
	fold(&s, evs[0])
	if p := s.PartialTurn(); len(p) != 1 || p[0].ID != "msg_b" {
		t.Fatalf("partial turn %v", p)
	}
	fold(&s, response.Turn(&s, 1, nil, events.TokenUsage{}, end, true)...)
	if !s.Ended() || s.Status != events.ResponseStatusCompleted || len(s.Output) != 2 || len(s.PartialTurn()) != 0 || s.Usage.TotalTokens != 3 {
		t.Fatalf("after the end: %+v", s)
	}
	if response.Cancel(&s) != nil || response.Finish(&s, events.TokenUsage{}, end) != nil {
		t.Fatal("an ended response recorded more")
	}
	if got := s.Context(); len(got) != 2 || got[0].Type != "file_search_call" {
		t.Fatalf("context %v", got)
	}
}

func TestCancelAndPendingEnd(t *testing.T) {
	var s response.State
	fold(&s, events.WithID("created", events.ResponseCreated{Model: "m", Store: true, ConversationID: "conv_1"}))
	// With a conversation the turn records how it ends, and the end comes after the conversation has the items.
	fold(&s, response.Turn(&s, 0, []events.Item{msg("a")}, events.TokenUsage{}, response.End{Status: events.ResponseStatusIncomplete, Reason: "max_output_tokens"}, false)...)
	if s.Ended() || s.PendingEnd.Status != events.ResponseStatusIncomplete {
		t.Fatalf("pending end %+v, status %s", s.PendingEnd, s.Status)
	}
	fold(&s, response.Cancel(&s)...)
	if s.Status != events.ResponseStatusCancelled || response.Finish(&s, events.TokenUsage{}, s.PendingEnd) != nil {
		t.Fatalf("after cancel: %s", s.Status)
	}
}

// TestAStartedCallIsMadeOnce: a call recorded as started and never recorded is interrupted; it cannot be started a
// second time, a turn moved on starts nothing, and the interrupted item follows the items the turn recorded.
func TestAStartedCallIsMadeOnce(t *testing.T) {
	var s response.State
	fold(&s, events.WithID("created", events.ResponseCreated{Model: "m", Store: true}))
	call := events.Item{Type: "mcp_call", ID: "mcp_1", Name: "charge", Arguments: "{}"}
	evs, ok := response.CallStarted(&s, 0, call)
	if !ok || len(evs) != 1 {
		t.Fatalf("start: %v %v", evs, ok)
	}
	fold(&s, evs...)
	if evs, ok := response.CallStarted(&s, 0, call); ok || evs != nil {
		t.Fatal("a call was started twice")
	}
	if _, ok := response.CallStarted(&s, 1, events.Item{Type: "mcp_call", ID: "mcp_2"}); ok {
		t.Fatal("a call of a turn not yet reached was started")
	}
	// The turn's message is in, the call is not: the call is interrupted.
	first := response.Turn(&s, 0, []events.Item{msg("a"), call}, events.TokenUsage{}, response.End{}, false)[0]
	fold(&s, first)
	got := s.Interrupted()
	if len(got) != 1 || got[0].ID != "mcp_1" || got[0].Status != events.ResponseStatusInProgress {
		t.Fatalf("interrupted: %+v", got)
	}
	it := response.Interrupt(got[0])
	if it.Status != events.ResponseStatusFailed || it.Error != response.InterruptedError {
		t.Fatalf("interrupted item: %+v", it)
	}
	// The turn decided again with the item it recorded already: that one is not recorded twice.
	if again := response.Turn(&s, 0, []events.Item{msg("a"), it}, events.TokenUsage{}, response.End{}, false); len(again) != 2 {
		t.Fatalf("the turn decided again records %d events, want the interrupted item and the close", len(again))
	}
	evs = response.Turn(&s, 0, []events.Item{it}, events.TokenUsage{}, response.End{}, false)
	// Its event follows the turn's recorded item, under an ID of its own (the log drops a repeated ID).
	firstID, _ := events.Unwrap(first)
	nextID, _ := events.Unwrap(evs[0])
	if firstID == "" || firstID == nextID {
		t.Fatal("the interrupted item's event has the ID of the turn's first item")
	}
	fold(&s, evs...)
	if len(s.Output) != 2 || s.Output[1].Error == "" || len(s.Interrupted()) != 0 || s.Turns != 1 {
		t.Fatalf("after the close: %+v", s)
	}
	if _, ok := response.CallStarted(&s, 0, events.Item{Type: "mcp_call", ID: "mcp_3"}); ok {
		t.Fatal("a call was started in a recorded turn")
	}
	// A code call's model reads its logs: they say it too.
	code := response.Interrupt(events.Item{Type: "code_interpreter_call", ID: "ci_1"})
	if len(code.Outputs) != 1 || code.Outputs[0].Logs != response.InterruptedError {
		t.Fatalf("code item: %+v", code)
	}
}
