package openaiapi

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
)

// TestPiecesAheadOfTheLogAreHeldNotDropped: the model loop's first pieces of text can reach a stream before the
// response's created event does (they come over core NATS, the event through the watch). They are held and sent
// after the event's frames, in order; dropped, the stream showed nothing until the message was committed.
func TestPiecesAheadOfTheLogAreHeldNotDropped(t *testing.T) {
	var types []string
	var text string
	fr := &frames{after: -1, send: func(typ string, data obj) bool {
		types = append(types, typ)
		if typ == "response.output_text.delta" {
			text += data["delta"].(string)
		}
		return true
	}}
	for i, piece := range []string{"one ", "two "} {
		if !fr.offer(response.LiveDelta{Turn: 0, Index: i, Text: piece}) {
			t.Fatal("offer refused")
		}
	}
	if len(types) != 0 {
		t.Fatalf("frames %q before the response was created", types)
	}
	created := events.Envelope{ID: "evt_1", Type: "response.created", Aggregate: "response", AggregateID: "resp_1",
		Account: "acct_1", Version: 1, Event: events.ResponseCreated{Model: "gpt-4o-mini"}}
	if !fr.event(created) {
		t.Fatal("event refused")
	}
	want := "response.created,response.in_progress,response.output_item.added,response.content_part.added," +
		"response.output_text.delta,response.output_text.delta"
	if strings.Join(types, ",") != want || text != "one two " {
		t.Fatalf("frames %q with text %q; want %s with %q", types, text, want, "one two ")
	}
	// A piece that follows is sent at once.
	fr.offer(response.LiveDelta{Turn: 0, Index: 2, Text: "three"})
	if types[len(types)-1] != "response.output_text.delta" || text != "one two three" {
		t.Fatalf("frames %q with text %q after the third piece", types, text)
	}
}
