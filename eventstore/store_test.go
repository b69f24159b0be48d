package eventstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

type incremented struct {
	By int `json:"by"`
}

func (incremented) EventType() string { return "counter.incremented" }

type counter struct {
	Total    int
	Versions []uint64
}

func (c *counter) Apply(e events.Envelope) {
	if d, ok := e.Event.(incremented); ok {
		c.Total += d.By
		c.Versions = append(c.Versions, e.Version)
	}
}

// newCachedStore is newStore and a second store on the same log that keeps histories in memory.
func newCachedStore(t *testing.T) (plain, cached *eventstore.Store, srv *natstest.Server) {
	t.Helper()
	plain, srv = newStore(t)
	names, _ := natsx.NewNames("")
	reg := events.NewRegistry()
	reg.Register(incremented{})
	return plain, eventstore.NewStore(srv.JS, names, reg, eventstore.WithHistoryCache(16)), srv
}

func newStore(t *testing.T) (*eventstore.Store, *natstest.Server) {
	t.Helper()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	if err := natsx.Provision(context.Background(), srv.JS, layout, discard()); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	return eventstore.NewStore(srv.JS, names, reg), srv
}

func TestAppendLoadRoundTrip(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "c1"}
	meta := events.Meta{Account: "acct_1", Actor: "key_1", CorrelationID: "q1"}
	res, err := st.Append(ctx, ref, events.Version{}, meta, incremented{By: 2}, incremented{By: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version.Count != 2 || res.Version.Seq != res.Events[1].Sequence {
		t.Fatalf("head after append = %+v", res.Version)
	}
	history, v, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if v != res.Version {
		t.Fatalf("load version %+v, append said %+v", v, res.Version)
	}
	if len(history) != 2 {
		t.Fatalf("loaded %d events, want 2", len(history))
	}
	for i, e := range history {
		if e.ID != res.Events[i].ID || e.Version != uint64(i+1) || e.Account != "acct_1" || e.CorrelationID != "q1" {
			t.Errorf("event %d = %+v", i, e)
		}
		if e.Event.(incremented).By != []int{2, 3}[i] {
			t.Errorf("event %d payload %+v", i, e.Event)
		}
	}
	// Another aggregate's history is separate.
	other, _, err := st.Load(ctx, events.Ref{Type: "counter", ID: "c2"})
	if err != nil || len(other) != 0 {
		t.Fatalf("other aggregate: %d events, err %v", len(other), err)
	}
}

func TestAppendRefusesStaleVersion(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "c1"}
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
	_, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1})
	var conflict *eventstore.ConflictError
	if !errors.As(err, &conflict) || !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("append at a stale version: err = %v, want a ConflictError", err)
	}
	history, _, _ := st.Load(ctx, ref)
	if len(history) != 1 {
		t.Fatalf("history has %d events after a refused append, want 1", len(history))
	}
}

func TestAppendRejectsEventOfAnotherAggregate(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	_, err := st.Append(context.Background(), events.Ref{Type: "account", ID: "a1"}, events.Version{}, events.Meta{}, incremented{})
	if err == nil {
		t.Fatal("appending a counter event to an account was accepted")
	}
	_, err = st.Append(context.Background(), events.Ref{Type: "counter", ID: "bad.id"}, events.Version{}, events.Meta{}, incremented{})
	if err == nil {
		t.Fatal("an id with a dot (a subject separator) was accepted")
	}
}

func TestConcurrentUpdatesWinEachVersionOnce(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "hot"}
	const writers, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				_, err := eventstore.Update(ctx, st, ref, events.Meta{}, func(c *counter) ([]events.Event, error) {
					return []events.Event{incremented{By: 1}}, nil
				})
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("update: %v", err)
		}
	}
	history, _, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	var c counter
	for _, e := range history {
		c.Apply(e)
	}
	if c.Total != writers*each {
		t.Fatalf("total = %d, want %d: an update was lost", c.Total, writers*each)
	}
	for i, v := range c.Versions {
		if v != uint64(i+1) {
			t.Fatalf("version at position %d is %d: versions must be won once each, in order", i, v)
		}
	}
}

func TestSameEventAppendedTwiceIsStoredOnce(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "c1"}
	id := events.DeriveID(events.NewID(), "reply")
	first, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, events.WithID(id, incremented{By: 5}))
	if err != nil {
		t.Fatal(err)
	}
	// The same append again (a retry that did not see its answer).
	again, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, events.WithID(id, incremented{By: 5}))
	if err != nil {
		t.Fatalf("repeating an append: %v", err)
	}
	if again.Events[0].Sequence != first.Events[0].Sequence {
		t.Fatalf("repeat answered sequence %d, original %d", again.Events[0].Sequence, first.Events[0].Sequence)
	}
	// A redelivered cause after the aggregate moved on: the derived event is found in the history.
	if _, err := st.Append(ctx, ref, first.Version, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, events.WithID(id, incremented{By: 5})); err != nil {
		t.Fatalf("repeating an old append: %v", err)
	}
	history, _, _ := st.Load(ctx, ref)
	if len(history) != 2 {
		t.Fatalf("history has %d events, want 2 (the repeated event stored once)", len(history))
	}
}

func TestDeriveIDIsStableAndDistinct(t *testing.T) {
	t.Parallel()
	cause := events.NewID()
	if events.DeriveID(cause, "reply") != events.DeriveID(cause, "reply") {
		t.Fatal("DeriveID is not deterministic")
	}
	if events.DeriveID(cause, "reply") == events.DeriveID(cause, "call") {
		t.Fatal("different labels gave the same ID")
	}
	if events.DeriveID(cause, "reply") == events.DeriveID(events.NewID(), "reply") {
		t.Fatal("different causes gave the same ID")
	}
}

func TestUnknownEventTypeIsKeptAndSkipped(t *testing.T) {
	t.Parallel()
	st, srv := newStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "c1"}
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
	// An event written by a newer build.
	body, _ := json.Marshal(map[string]any{"id": events.NewID(), "type": "counter.reset", "aggregate": "counter",
		"aggregate_id": "c1", "version": 2, "time": time.Now(), "data": map[string]any{"to": 0}})
	if _, err := srv.JS.PublishMsg(ctx, &nats.Msg{Subject: st.Names().EventSubject("counter", "c1", "reset"), Data: body}); err != nil {
		t.Fatal(err)
	}
	history, v, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatalf("load with an unknown event: %v", err)
	}
	if len(history) != 2 || history[1].Event != nil || history[1].Type != "counter.reset" {
		t.Fatalf("unknown event not kept as raw: %+v", history)
	}
	// Appending after it still works: the version covers it.
	if _, err := st.Append(ctx, ref, v, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
}

func TestFollowGoesFromHistoryToLiveWithoutGapOrDuplicate(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ref := events.Ref{Type: "counter", ID: "c1"}
	noise := events.Ref{Type: "counter", ID: "other"}
	var v, nv events.Version
	appendN := func(n int) {
		for i := 0; i < n; i++ {
			res, err := st.Append(ctx, ref, v, events.Meta{}, incremented{By: 1})
			if err != nil {
				t.Error(err)
				return
			}
			v = res.Version
			res, err = st.Append(ctx, noise, nv, events.Meta{}, incremented{By: 1})
			if err != nil {
				t.Error(err)
				return
			}
			nv = res.Version
		}
	}
	appendN(5)
	got := make(chan events.Envelope, 100)
	go func() {
		for e, err := range st.Follow(ctx, 0, st.Names().AggregateFilter("counter", "c1")) {
			if err != nil {
				return
			}
			got <- e
		}
	}()
	// Appends race with the switch from history to live on purpose.
	go appendN(5)
	var seqs []uint64
	for len(seqs) < 10 {
		select {
		case e := <-got:
			if e.AggregateID != "c1" {
				t.Fatalf("followed an event of %s", e.AggregateID)
			}
			seqs = append(seqs, e.Sequence)
		case <-ctx.Done():
			t.Fatalf("followed %d events, want 10", len(seqs))
		}
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("sequences out of order or repeated: %v", seqs)
		}
	}
	select {
	case e := <-got:
		t.Fatalf("an 11th event arrived: %+v", e)
	case <-time.After(100 * time.Millisecond):
	}
}

func TestReadStopsAtTheEndOfTheLog(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	var v events.Version
	for i := 0; i < 7; i++ {
		res, err := st.Append(ctx, events.Ref{Type: "counter", ID: "c1"}, v, events.Meta{}, incremented{By: i})
		if err != nil {
			t.Fatal(err)
		}
		v = res.Version
	}
	var n int
	last, err := st.Read(ctx, 3, func(events.Envelope) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	if n != 5 || last != v.Seq {
		t.Fatalf("read from 3: %d events ending at %d, want 5 ending at %d", n, last, v.Seq)
	}
	n = 0
	if _, err := st.Read(ctx, 0, func(events.Envelope) error { n++; return nil }, "contrail.ev.nothing.>"); err != nil || n != 0 {
		t.Fatalf("read of an empty filter: %d events, err %v", n, err)
	}
	stop := errors.New("stop")
	if _, err := st.Read(ctx, 0, func(events.Envelope) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("read did not pass back the callback's error: %v", err)
	}
}

func TestFollowLeavesNoConsumerBehind(t *testing.T) {
	t.Parallel()
	st, srv := newStore(t)
	ctx := context.Background()
	if _, err := st.Append(ctx, events.Ref{Type: "counter", ID: "c1"}, events.Version{}, events.Meta{}, incremented{By: 1}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		fctx, cancel := context.WithCancel(ctx)
		for _, err := range st.Follow(fctx, 0) {
			if err != nil {
				t.Fatal(err)
			}
			break // one event is enough: the reader goes away
		}
		cancel()
	}
	stream, err := srv.JS.Stream(ctx, "EVENTS")
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Consumers != 0 {
		t.Fatalf("%d consumers left on the stream after 20 followers ended", info.State.Consumers)
	}
}

// TestACachedLoadSeesWhatOtherNodesAppended: a store that keeps histories in memory asks the log whether anything
// came after what it holds; loads see another store's appends (another node's), and loads after appends to other
// aggregates only (nothing new for this one) return the history as it is.
func TestACachedLoadSeesWhatOtherNodesAppended(t *testing.T) {
	t.Parallel()
	plain, cached, _ := newCachedStore(t)
	ctx := context.Background()
	ref := events.Ref{Type: "counter", ID: "cached"}
	meta := events.Meta{Account: "acct_1", Actor: "key_1"}
	load := func(want ...int) {
		t.Helper()
		history, v, err := cached.Load(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for i, e := range history {
			got = append(got, e.Event.(incremented).By)
			if e.Version != uint64(i+1) {
				t.Fatalf("event %d has version %d", i, e.Version)
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || v.Count != uint64(len(want)) {
			t.Fatalf("loaded %v (version %+v), want %v", got, v, want)
		}
	}
	res, err := cached.Append(ctx, ref, events.Version{}, meta, incremented{By: 1}, incremented{By: 2})
	if err != nil {
		t.Fatal(err)
	}
	load(1, 2)
	// Other aggregates move the log on: nothing new for this one.
	for i := 0; i < 50; i++ {
		if _, err := plain.Append(ctx, events.Ref{Type: "counter", ID: fmt.Sprintf("other%d", i)}, events.Version{}, meta, incremented{By: i}); err != nil {
			t.Fatal(err)
		}
	}
	load(1, 2)
	// Another node appends to it, then to others again.
	if _, err := plain.Append(ctx, ref, res.Version, meta, incremented{By: 3}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		if _, err := plain.Append(ctx, events.Ref{Type: "counter", ID: fmt.Sprintf("later%d", i)}, events.Version{}, meta, incremented{By: i}); err != nil {
			t.Fatal(err)
		}
	}
	load(1, 2, 3)
	load(1, 2, 3)
}

// TestACachedStoreFindsItsOwnAppendsWithoutReadingThemBack: what a store with a history cache appends is added to
// the history it holds, so that its next load asks the log only whether anything else came (no read of the events
// themselves); the history is what a plain store reads from the log, and an append by another node in between is
// still read.
func TestACachedStoreFindsItsOwnAppendsWithoutReadingThemBack(t *testing.T) {
	t.Parallel()
	plain, cached, srv := newCachedStore(t)
	ctx := context.Background()
	meta := events.Meta{Account: "acct_1", Actor: "key_1"}

	readsSoFar := countReads(t, srv)
	same := func(ref events.Ref, want int) {
		t.Helper()
		got, v, err := cached.Load(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		log, lv, err := plain.Load(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != want || v != lv || !reflect.DeepEqual(got, log) {
			t.Fatalf("the cached store loaded %d events (%+v), want the log's %d (%+v):\n%+v\n%+v", len(got), v, want, lv, got, log)
		}
	}

	ref := events.Ref{Type: "counter", ID: "mine"}
	res, err := cached.Append(ctx, ref, events.Version{}, meta, incremented{By: 1}, incremented{By: 2})
	if err != nil {
		t.Fatal(err)
	}
	same(ref, 2) // the first load reads the history: the cache holds no aggregate it has not loaded
	res, err = cached.Append(ctx, ref, res.Version, meta, incremented{By: 3})
	if err != nil {
		t.Fatal(err)
	}
	before := readsSoFar()
	if _, _, err := cached.Load(ctx, ref); err != nil {
		t.Fatal(err)
	}
	if n := readsSoFar() - before; n != 0 {
		t.Fatalf("loading what this store appended read the log %d times", n)
	}
	same(ref, 3)

	// Another node appends: the cached history no longer ends where this store's next append begins, and the
	// event is read.
	other, err := plain.Append(ctx, ref, res.Version, meta, incremented{By: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cached.Append(ctx, ref, res.Version, meta, incremented{By: 99}); !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("an append on a stale version: %v, want a conflict", err)
	}
	if _, err := cached.Append(ctx, ref, other.Version, meta, incremented{By: 5}); err != nil {
		t.Fatal(err)
	}
	same(ref, 5)
}

// countReads counts the reads of events the server is asked for (direct gets from a sequence on), leaving out the
// "multi_last" asks of where an aggregate's subjects end.
func countReads(t *testing.T, srv *natstest.Server) func() int {
	t.Helper()
	nc := srv.Connect(t)
	// A subscription read here, not a callback: a callback may run after the count is read, and so count a read made
	// before it against what came after.
	sub, err := nc.SubscribeSync("$JS.API.DIRECT.GET.>")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	reads := 0
	return func() int {
		t.Helper()
		if err := nc.Flush(); err != nil { // the requests sent so far have reached the subscription
			t.Fatal(err)
		}
		for {
			m, err := sub.NextMsg(10 * time.Millisecond)
			if errors.Is(err, nats.ErrTimeout) {
				return reads
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(m.Data), "multi_last") {
				reads++
			}
		}
	}
}

// TestAnAppendWhoseFirstEventWentInStoresTheRest: a retried publish whose first attempt went in meets a conflict
// (here the log's dedupe window has passed; on a cluster the server may check the expected sequence first). The
// append must then store the rest of its events after its own first one, not report a conflict that leaves its
// decision half stored (a thread created without its messages, answered 409). Another writer's event in between is
// still a conflict.
func TestAnAppendWhoseFirstEventWentInStoresTheRest(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	const window = 100 * time.Millisecond
	if err := natsx.Provision(context.Background(), srv.JS, natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: window}, discard()); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	st := eventstore.NewStore(srv.JS, names, reg)
	ctx := context.Background()

	decision := func(ids ...string) []events.Event {
		var out []events.Event
		for i, id := range ids {
			out = append(out, events.WithID(id, incremented{By: i + 1}))
		}
		return out
	}
	ref := events.Ref{Type: "counter", ID: "half"}
	a, b, c := events.NewID(), events.NewID(), events.NewID()
	// The first event of the decision went in; the append's answer was lost.
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decision(a)...); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * window)
	res, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decision(a, b, c)...)
	if err != nil {
		t.Fatalf("the retried append: %v", err)
	}
	history, v, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range history {
		got = append(got, e.ID)
	}
	if want := []string{a, b, c}; !reflect.DeepEqual(got, want) {
		t.Fatalf("history %v, want the decision once, whole: %v", got, want)
	}
	if res.Version != v || len(res.Events) != 3 || res.Events[2].ID != c {
		t.Fatalf("the append answered %+v, want its three events and version %+v", res, v)
	}

	// Another writer between the decision's first event and the rest: a conflict, and nothing more stored.
	other := events.Ref{Type: "counter", ID: "raced"}
	first, err := st.Append(ctx, other, events.Version{}, events.Meta{}, decision(a)...)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Append(ctx, other, first.Version, events.Meta{}, incremented{By: 10}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * window)
	if _, err := st.Append(ctx, other, events.Version{}, events.Meta{}, decision(a, b)...); !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("a retried append after another writer's event: %v, want a conflict", err)
	}
	if history, _, _ := st.Load(ctx, other); len(history) != 2 {
		t.Fatalf("history has %d events after the refused append, want 2", len(history))
	}
}
