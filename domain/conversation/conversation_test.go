package conversation

import (
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

func created(account string) *State {
	var s State
	s.Apply(events.Envelope{AggregateID: "conv_1", Account: account, Event: events.ConversationCreated{}})
	return &s
}

// Two items of one batch with the same ID are refused, naming the second: kept, the second would hide the first,
// which could then be neither retrieved nor deleted.
func TestAddRefusesTwoItemsWithOneID(t *testing.T) {
	s := created("acct_a")
	items := []events.Item{{Type: "message", ID: "msg_x"}, {Type: "message", ID: "msg_y"}, {Type: "message", ID: "msg_x"}}
	if _, err := Add(s, "acct_a", items); errs.As(err) == nil || errs.As(err).Field != "items[2].id" {
		t.Fatalf("a batch with msg_x twice: %v", err)
	}
	if _, err := Add(s, "acct_a", items[:2]); err != nil {
		t.Fatalf("distinct items: %v", err)
	}
}

// A response's items are appended once each, even when the response holds one ID twice.
func TestAddResponseAddsAnIDOnce(t *testing.T) {
	s := created("acct_a")
	evs := AddResponse(s, "resp_1", []events.Item{{Type: "message", ID: "msg_x"}, {Type: "message", ID: "msg_x"}})
	if len(evs) != 1 {
		t.Fatalf("events: %v", evs)
	}
	_, e := events.Unwrap(evs[0])
	if n := len(e.(events.ConversationItemsAdded).Items); n != 1 {
		t.Fatalf("%d items added for one ID, want 1: %v", n, evs)
	}
}
