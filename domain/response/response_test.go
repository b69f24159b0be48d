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
