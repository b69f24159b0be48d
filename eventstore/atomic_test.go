package eventstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// decisionOf is a decision of len(ids) events with those IDs.
func decisionOf(ids ...string) []events.Event {
	out := make([]events.Event, len(ids))
	for i, id := range ids {
		out[i] = events.WithID(id, incremented{By: i + 1})
	}
	return out
}

func idsOf(envs []events.Envelope) []string {
	out := make([]string, len(envs))
	for i, e := range envs {
		out[i] = e.ID
	}
	return out
}

// TestAnAtomicAppendStoresADecisionWholeOrNotAtAll appends decisions of several events as atomic batches: the
// events are stored one after the other at the sequences the append answers, a retry of the same decision appends
// nothing, a stale one is a conflict, and a decision the server refuses part of leaves none of its events behind.
func TestAnAtomicAppendStoresADecisionWholeOrNotAtAll(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	if err := natsx.Provision(context.Background(), srv.JS, natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}, discard()); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	st := eventstore.NewStore(srv.JS, names, reg, eventstore.WithAtomicBatches())
	ctx := context.Background()

	ref := events.Ref{Type: "counter", ID: "whole"}
	ids := []string{events.NewID(), events.NewID(), events.NewID()}
	res, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decisionOf(ids...)...)
	if err != nil {
		t.Fatal(err)
	}
	history, v, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idsOf(history), ids) || res.Version != v {
		t.Fatalf("history %v at %+v, want %v at the append's answer %+v", idsOf(history), v, ids, res.Version)
	}
	for i, e := range history {
		if e.Sequence != res.Events[i].Sequence || e.Version != uint64(i+1) {
			t.Fatalf("event %d stored at sequence %d version %d; the append answered sequence %d", i, e.Sequence, e.Version, res.Events[i].Sequence)
		}
	}
	if res.Events[2].Sequence != res.Events[0].Sequence+2 {
		t.Fatalf("the decision's events are at sequences %d..%d, want one after the other", res.Events[0].Sequence, res.Events[2].Sequence)
	}

	// The same decision again, as a retry whose first answer was lost: it succeeds and stores nothing.
	again, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decisionOf(ids...)...)
	if err != nil {
		t.Fatalf("retried decision: %v", err)
	}
	if again.Version != v {
		t.Fatalf("retried decision answered %+v, want the stored head %+v", again.Version, v)
	}

	// A decision made on a stale version: a conflict, and none of it stored.
	stale := []string{events.NewID(), events.NewID()}
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decisionOf(stale...)...); !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("stale decision: %v, want a conflict", err)
	}

	// A decision whose second event the server refuses (its ID is already in the log): the first is not stored
	// either. Published one by one, the first would have gone in before the second was refused.
	fresh := events.NewID()
	if _, err := st.Append(ctx, ref, v, events.Meta{}, decisionOf(fresh, ids[0])...); !errors.Is(err, eventstore.ErrConflict) {
		t.Fatalf("decision repeating a stored event: %v, want a conflict", err)
	}
	history, after, err := st.Load(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idsOf(history), ids) || after != v {
		t.Fatalf("after the refused decisions the history is %v at %+v, want %v at %+v", idsOf(history), after, ids, v)
	}
}

// TestClusterStoresEveryDecisionWholeWhenTheStreamLeaderDies appends decisions of three events on a 3-node
// cluster, shuts the stream's leader down among them, and retries each failed one as a client would: afterwards
// every aggregate holds all of its decision, once, or (for one whose every attempt failed) none of it.
func TestClusterStoresEveryDecisionWholeWhenTheStreamLeaderDies(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c, js, names := clusterLog(t, ctx)
	st := counterStore(js, names, eventstore.WithAtomicBatches())

	const decisions, writers = 240, 8
	acked := make([][]string, decisions)
	var mu sync.Mutex
	failures, afterKill := 0, 0
	killed := make(chan struct{})
	var wg sync.WaitGroup
	next := make(chan int)
	for range writers {
		wg.Go(func() {
			for i := range next {
				ref := events.Ref{Type: "counter", ID: fmt.Sprintf("d%d", i)}
				ids := []string{events.NewID(), events.NewID(), events.NewID()}
				for attempt := 0; attempt < 100 && ctx.Err() == nil; attempt++ {
					actx, acancel := context.WithTimeout(ctx, 3*time.Second)
					_, err := st.Append(actx, ref, events.Version{}, events.Meta{}, decisionOf(ids...)...)
					acancel()
					mu.Lock()
					if err == nil {
						acked[i] = ids
						select {
						case <-killed:
							afterKill++
						default:
						}
						mu.Unlock()
						break
					}
					failures++
					mu.Unlock()
					time.Sleep(50 * time.Millisecond)
				}
			}
		})
	}
	for i := range decisions {
		if i == decisions/3 {
			leader := streamLeader(t, ctx, js, names.EventsStream())
			for _, ns := range c.Servers {
				if ns.Name() == leader {
					ns.Shutdown()
				}
			}
			close(killed)
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if afterKill == 0 {
		t.Fatal("no decision was stored after the leader went down")
	}

	stored := map[string][]events.Envelope{}
	if _, err := st.Read(ctx, 0, func(e events.Envelope) error {
		stored[e.AggregateID] = append(stored[e.AggregateID], e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, ids := range acked {
		got := stored[fmt.Sprintf("d%d", i)]
		if ids == nil {
			if len(got) != 0 {
				t.Errorf("decision %d was never acknowledged but %d of its events are stored", i, len(got))
			}
			continue
		}
		if !slices.Equal(idsOf(got), ids) {
			t.Errorf("decision %d: stored %v, want %v", i, idsOf(got), ids)
			continue
		}
		if got[2].Sequence != got[0].Sequence+2 {
			t.Errorf("decision %d stored at sequences %d, %d, %d: not one after the other", i, got[0].Sequence, got[1].Sequence, got[2].Sequence)
		}
	}
	t.Logf("%d decisions of 3 events stored whole (%d after the leader died); %d attempts failed during the election", len(acked), afterKill, failures)
}

// BenchmarkClusterDecision appends decisions of three events to new aggregates on a 3-node cluster, from 16
// writers at once: raw (three plain publishes, no expectations: what JetStream itself takes), one by one (each
// event published after the last one's answer, as a single-server log does) and atomic (one batch).
//
//	go test -run '^$' -bench ClusterDecision -benchtime 3s ./events
func BenchmarkClusterDecision(b *testing.B) {
	ctx := context.Background()
	_, js, names := clusterLog(b, ctx)
	stores := map[string]*eventstore.Store{
		"one-by-one": counterStore(js, names),
		"atomic":     counterStore(js, names, eventstore.WithAtomicBatches()),
	}
	var n sync.Mutex
	id := 0
	nextRef := func(kind string) events.Ref {
		n.Lock()
		defer n.Unlock()
		id++
		return events.Ref{Type: "counter", ID: fmt.Sprintf("%s%d", kind, id)}
	}
	run := func(b *testing.B, decide func(ref events.Ref) error, kind string) {
		b.SetParallelism(8) // 16 writers on 2 cores
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := decide(nextRef(kind)); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "decisions/s")
	}
	b.Run("raw", func(b *testing.B) {
		run(b, func(ref events.Ref) error {
			for range 3 {
				if _, err := js.Publish(ctx, names.EventSubject(ref.Type, ref.ID, "incremented"), []byte(`{"by":1}`)); err != nil {
					return err
				}
			}
			return nil
		}, "raw")
	})
	for _, kind := range []string{"one-by-one", "atomic"} {
		st := stores[kind]
		b.Run(kind, func(b *testing.B) {
			run(b, func(ref events.Ref) error {
				_, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decisionOf(events.NewID(), events.NewID(), events.NewID())...)
				return err
			}, kind)
		})
	}
}

// TestAnAtomicAppendToALogThatTakesNoBatchesSaysWhatToDo appends a decision to a stream made without atomic
// batches (an operator changed it, or a server older than 2.12): the error names the setting, and nothing is stored.
func TestAnAtomicAppendToALogThatTakesNoBatchesSaysWhatToDo(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	cfg := layout.EventsConfig()
	cfg.AllowAtomicPublish = false
	if _, err := srv.JS.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	st := eventstore.NewStore(srv.JS, names, reg, eventstore.WithAtomicBatches())
	ref := events.Ref{Type: "counter", ID: "refused"}
	_, err := st.Append(ctx, ref, events.Version{}, events.Meta{}, decisionOf(events.NewID(), events.NewID())...)
	if err == nil || !strings.Contains(err.Error(), "allow_atomic") {
		t.Fatalf("append to a stream without atomic batches: %v, want an error naming allow_atomic", err)
	}
	if history, _, err := st.Load(ctx, ref); err != nil || len(history) != 0 {
		t.Fatalf("after the refused append the history is %d events (%v), want none", len(history), err)
	}
}
