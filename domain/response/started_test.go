package response

import (
	"fmt"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
)

// TestStartedKeepsTheCurrentTurnsCalls: the calls a response recorded as started are kept while their turn is the
// current one, and dropped when it is recorded, so that a response of many tool turns does not hold every call it
// ever made; what CallStarted and Interrupted decide is unchanged.
func TestStartedKeepsTheCurrentTurnsCalls(t *testing.T) {
	var s State
	seq := uint64(0)
	fold := func(evs ...events.Event) {
		for _, e := range evs {
			id, ev := events.Unwrap(e)
			seq++
			s.Apply(events.Envelope{ID: id, AggregateID: "resp_1", Account: "acct_1", Time: time.Unix(1, 0), Sequence: seq, Event: ev})
		}
	}
	fold(events.WithID("created", events.ResponseCreated{Model: "m", Store: true}))
	for turn := range 3 {
		call := events.Item{Type: "mcp_call", ID: ItemID(&s, turn, 0, "mcp_")}
		evs, ok := CallStarted(&s, turn, call)
		if !ok {
			t.Fatalf("turn %d: the call was not started", turn)
		}
		fold(evs...)
		if len(s.started) != 1 || len(s.Interrupted()) != 1 {
			t.Fatalf("turn %d: started %v, interrupted %v", turn, s.started, s.Interrupted())
		}
		if _, ok := CallStarted(&s, turn, call); ok {
			t.Fatalf("turn %d: the call was started twice", turn)
		}
		clone := s.Clone()
		call.Status = events.ResponseStatusCompleted
		fold(Turn(&s, turn, []events.Item{call}, events.TokenUsage{}, End{}, false)...)
		if len(s.started) != 0 || len(s.Interrupted()) != 0 || s.Turns != turn+1 {
			t.Fatalf("after turn %d: started %v, interrupted %v", turn, s.started, s.Interrupted())
		}
		if len(clone.started) != 1 || clone.started[0].ID != call.ID {
			t.Fatalf("turn %d: the clone's started calls changed: %v", turn, fmt.Sprint(clone.started))
		}
	}
}
