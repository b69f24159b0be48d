package eventstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
)

type noted struct {
	Text string `json:"text"`
}

func (noted) EventType() string { return "counter.noted" }

// The store is the line below the faces: a reference or filter that is not a valid subject is refused before
// anything is sent, so that an ID a face let through is neither a wildcard read of other aggregates nor a subject
// long enough for the server to close the connection (which nats.go does not reopen).
func TestStoreRefusesReferencesThatAreNotSubjectTokens(t *testing.T) {
	t.Parallel()
	st, srv := newStore(t)
	ctx := context.Background()
	if _, err := st.Append(ctx, events.Ref{Type: "counter", ID: "c1"}, events.Version{}, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"*", ">", "c1.>", "c 1", "c1\x00", "", strings.Repeat("A", 4000), strings.Repeat("A", 100<<10)} {
		history, _, err := st.Load(ctx, events.Ref{Type: "counter", ID: id})
		if !errors.Is(err, eventstore.ErrInvalidRef) || errs.CodeOf(err) != errs.Invalid || len(history) != 0 {
			t.Errorf("Load(%.20q): %d events, err %v; want ErrInvalidRef", id, len(history), err)
		}
		if strings.Contains(errs.MessageOf(err), id) && id != "" {
			t.Errorf("Load(%.20q): the message repeats the ID", id)
		}
		filter := st.Names().AggregateFilter("counter", id)
		if _, err := st.Read(ctx, 0, func(events.Envelope) error { return nil }, filter); id != "*" && !errors.Is(err, eventstore.ErrInvalidRef) {
			t.Errorf("Read(%.40q): err %v; want ErrInvalidRef", filter, err)
		}
		for _, err := range st.Follow(ctx, 0, filter) {
			if id != "*" && !errors.Is(err, eventstore.ErrInvalidRef) {
				t.Errorf("Follow(%.40q): err %v; want ErrInvalidRef", filter, err)
			}
			break
		}
	}
	if !srv.NC.IsConnected() {
		t.Fatalf("the connection did not survive: %v", srv.NC.LastError())
	}
	if history, _, err := st.Load(ctx, events.Ref{Type: "counter", ID: "c1"}); err != nil || len(history) != 1 {
		t.Fatalf("a valid load after the refused ones: %d events, %v", len(history), err)
	}
}

func TestAnEventTooLargeForTheLogIsTooLargeNotAnInternalError(t *testing.T) {
	t.Parallel()
	st, srv := newStore(t)
	st.Registry().Register(noted{})
	ctx := context.Background()
	big := strings.Repeat("x", int(srv.NC.MaxPayload()))
	_, err := st.Append(ctx, events.Ref{Type: "counter", ID: "c1"}, events.Version{}, events.Meta{}, noted{Text: big})
	if e := errs.As(err); e == nil || e.Code != errs.TooLarge || strings.Contains(e.Message, big[:1000]) {
		t.Fatalf("append of an event over the max payload: %v; want a too_large error that does not repeat the event", err)
	}
	res, errList := st.AppendBatch(ctx, []eventstore.Batch{{Ref: events.Ref{Type: "counter", ID: "c2"}, Event: noted{Text: big}}})
	if errs.CodeOf(errList[0]) != errs.TooLarge || len(res[0].Events) != 0 {
		t.Fatalf("a batched append of an event over the max payload: %v", errList[0])
	}
	if history, _, _ := st.Load(ctx, events.Ref{Type: "counter", ID: "c1"}); len(history) != 0 {
		t.Fatalf("the refused event is in the log")
	}
	if !srv.NC.IsConnected() {
		t.Fatal("the connection did not survive")
	}
}

// Past its retries, contention on one aggregate is a conflict the client may retry (409), not an internal error.
func TestUpdateReportsContentionPastItsRetriesAsAConflict(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "contended"}
	attempts := 0
	_, err := eventstore.Update(ctx, st, ref, events.Meta{}, func(c *counter) ([]events.Event, error) {
		attempts++
		// Another writer gets in between every load and append.
		if _, err := st.Append(ctx, ref, events.Version{Count: uint64(len(c.Versions)), Seq: lastSeq(t, st, ref)}, events.Meta{}, incremented{By: 1}); err != nil {
			t.Fatalf("the other writer: %v", err)
		}
		return []events.Event{incremented{By: 100}}, nil
	})
	if errs.CodeOf(err) != errs.Conflict || !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("after %d attempts: %v; want an errs.Conflict that is an eventstore.ErrConflict", attempts, err)
	}
	if attempts < 2 {
		t.Fatalf("gave up after %d attempts", attempts)
	}
}

func lastSeq(t *testing.T, st *eventstore.Store, ref events.Ref) uint64 {
	t.Helper()
	_, v, err := st.Load(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return v.Seq
}
