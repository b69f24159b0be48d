package eventstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// collect follows until it has n events or ctx ends, and fails on an error, a duplicate, a gap in the versions or
// an event of another aggregate.
func collect(t *testing.T, ctx context.Context, it func(func(events.Envelope, error) bool), id string, n int, firstVersion uint64) []events.Envelope {
	t.Helper()
	var got []events.Envelope
	for e, err := range it {
		if err != nil {
			t.Fatalf("follow: %v", err)
		}
		if e.AggregateID != id {
			t.Fatalf("followed an event of %s", e.AggregateID)
		}
		if want := firstVersion + uint64(len(got)); e.Version != want {
			t.Fatalf("event %d has version %d, want %d (a gap or a duplicate)", len(got), e.Version, want)
		}
		if len(got) > 0 && e.Sequence <= got[len(got)-1].Sequence {
			t.Fatalf("sequence %d after %d", e.Sequence, got[len(got)-1].Sequence)
		}
		got = append(got, e)
		if len(got) == n {
			return got
		}
	}
	if ctx.Err() != nil {
		t.Fatalf("followed %d events before the deadline, want %d", len(got), n)
	}
	return got
}

func appendTo(t *testing.T, st *eventstore.Store, ref events.Ref, v *events.Version, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		res, err := st.Append(context.Background(), ref, *v, events.Meta{}, incremented{By: 1})
		if err != nil {
			t.Error(err)
			return
		}
		*v = res.Version
	}
}

// watchedLog is a log, and a context that ends with the test or after 30 s.
func watchedLog(t *testing.T) (*eventstore.Store, *natstest.Server, context.Context) {
	t.Helper()
	st, srv := newStore(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return st, srv, ctx
}

func watch(t *testing.T, ctx context.Context, st *eventstore.Store, ref events.Ref) *eventstore.Watch {
	t.Helper()
	w, err := st.Watch(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func consumers(t *testing.T, js jetstream.JetStream) int {
	t.Helper()
	stream, err := js.Stream(context.Background(), "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Consumers
}

// TestAWatchFollowsWhatTheLogCommitsWithNoConsumer: a watch made before a read follows on from the read's version;
// appends race with it on purpose, another aggregate's events and an append the log refused are not shown, and
// the server holds no consumer for it.
func TestAWatchFollowsWhatTheLogCommitsWithNoConsumer(t *testing.T) {
	t.Parallel()
	st, srv, ctx := watchedLog(t)
	ref, noise := events.Ref{Type: "counter", ID: "c1"}, events.Ref{Type: "counter", ID: "other"}
	var v, nv events.Version
	appendTo(t, st, ref, &v, 3)
	w := watch(t, ctx, st, ref)
	read := v
	stale := v
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		appendTo(t, st, ref, &v, 5)
		appendTo(t, st, noise, &nv, 5)
		if _, err := st.Append(ctx, ref, stale, events.Meta{}, incremented{By: 100}); !errors.Is(err, eventstore.ErrConflict) {
			t.Errorf("an append at a stale version: %v, want a conflict", err)
		}
		appendTo(t, st, ref, &v, 2)
	})
	got := collect(t, ctx, w.Follow(ctx, read), "c1", 7, 4)
	for _, e := range got {
		if e.Event.(incremented).By != 1 {
			t.Fatalf("followed the refused append: %+v", e)
		}
	}
	if n := consumers(t, srv.JS); n != 0 {
		t.Fatalf("%d consumers on the stream while a watch followed", n)
	}
}

// TestAWatchReadsWhatItDroppedFromTheLog: a reader that takes nothing while many events are committed loses some
// of the watch's messages (core NATS drops past the buffer); it reads them from the log and shows every event once.
func TestAWatchReadsWhatItDroppedFromTheLog(t *testing.T) {
	t.Parallel()
	st, _, ctx := watchedLog(t)
	ref := events.Ref{Type: "counter", ID: "c1"}
	w := watch(t, ctx, st, ref)
	var v events.Version
	batch := make([]events.Event, 100)
	for i := range batch {
		batch[i] = incremented{By: 1}
	}
	for i := 0; i < 15; i++ { // 1,500 events, well past what the watch holds
		res, err := st.Append(ctx, ref, v, events.Meta{}, batch...)
		if err != nil {
			t.Fatal(err)
		}
		v = res.Version
	}
	collect(t, ctx, w.Follow(ctx, events.Version{}), "c1", 1500, 1)
}

// TestAWatchFindsEventsItWasNeverSent: events committed before the watch began, after the version its reader
// read, never come through it (as an event stored by a leader that died before republishing it); the watch's idle
// check finds them in the log.
func TestAWatchFindsEventsItWasNeverSent(t *testing.T) {
	t.Parallel()
	st, _, ctx := watchedLog(t)
	ref := events.Ref{Type: "counter", ID: "c1"}
	var v events.Version
	appendTo(t, st, ref, &v, 1)
	read := v
	appendTo(t, st, ref, &v, 2)
	w := watch(t, ctx, st, ref)
	collect(t, ctx, w.Follow(ctx, read), "c1", 2, 2)
}

// TestFollowAggregateFromASequence: from the middle of a history, from past its end (it learns the version from the
// log and goes on live) and for an aggregate with no events yet.
func TestFollowAggregateFromASequence(t *testing.T) {
	t.Parallel()
	st, _, ctx := watchedLog(t)
	ref := events.Ref{Type: "counter", ID: "c1"}
	var v events.Version
	appendTo(t, st, ref, &v, 4)
	first := v
	appendTo(t, st, ref, &v, 2)
	collect(t, ctx, st.FollowAggregate(ctx, ref, first.Seq), "c1", 3, 4)

	var wg sync.WaitGroup
	defer wg.Wait()
	pastEnd := v.Seq + 1
	wg.Go(func() {
		time.Sleep(50 * time.Millisecond)
		appendTo(t, st, ref, &v, 2)
	})
	collect(t, ctx, st.FollowAggregate(ctx, ref, pastEnd), "c1", 2, 7)

	fresh := events.Ref{Type: "counter", ID: "fresh"}
	var fv events.Version
	wg.Go(func() {
		time.Sleep(50 * time.Millisecond)
		appendTo(t, st, fresh, &fv, 2)
	})
	collect(t, ctx, st.FollowAggregate(ctx, fresh, 0), "fresh", 2, 1)
}

// TestAWatchOnALogThatDoesNotRepublishReadsWithAConsumer: a stream set up without republishing (by hand, or by an
// older build) is followed all the same; provisioning it again turns republishing on, and watches use it.
func TestAWatchOnALogThatDoesNotRepublishReadsWithAConsumer(t *testing.T) {
	t.Parallel()
	_, srv, ctx := watchedLog(t)
	names, _ := natsx.NewNames("")
	cfg := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}.EventsConfig()
	cfg.RePublish = nil
	if _, err := srv.JS.UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	st := eventstore.NewStore(srv.JS, names, reg)
	ref := events.Ref{Type: "counter", ID: "c1"}
	w := watch(t, ctx, st, ref)
	var wg sync.WaitGroup
	defer wg.Wait()
	var first events.Version
	wg.Go(func() { appendTo(t, st, ref, &first, 3) })
	got := collect(t, ctx, w.Follow(ctx, events.Version{}), "c1", 3, 1)
	v := events.Version{Count: got[2].Version, Seq: got[2].Sequence}

	if err := natsx.Provision(ctx, srv.JS, natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}, discard()); err != nil {
		t.Fatal(err)
	}
	st = eventstore.NewStore(srv.JS, names, reg)
	w2 := watch(t, ctx, st, ref)
	read := v
	wg.Go(func() { appendTo(t, st, ref, &v, 2) })
	for range collect(t, ctx, w2.Follow(ctx, read), "c1", 2, 4) {
		if n := consumers(t, srv.JS); n != 0 {
			t.Fatalf("%d consumers on the stream: the watch did not use republishing", n)
		}
	}
}
