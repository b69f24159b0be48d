package projections_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/metrics"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/projections"
)

type added struct {
	N int `json:"n"`
}

func (added) EventType() string { return "tally.added" }

type renamed struct {
	Name string `json:"name"`
}

func (renamed) EventType() string { return "tally.renamed" }

type removed struct{}

func (removed) EventType() string { return "tally.removed" }

// tallies keeps a document per tally and one grand total: a fold that is not idempotent by itself (it adds), so
// a replayed event would show as a wrong sum.
type tallies struct{ applied *atomic.Int64 }

type tallyView struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Sum   int    `json:"sum"`
	Count int    `json:"count"`
}

func (tallies) Name() string         { return "tallies" }
func (tallies) EventTypes() []string { return []string{"tally.*"} }
func (t tallies) Apply(tx *projections.Tx, e events.Envelope) error {
	if t.applied != nil {
		t.applied.Add(1)
	}
	switch d := e.Event.(type) {
	case added:
		if err := projections.Modify(tx, "tally."+e.AggregateID, func(v *tallyView, _ bool) error {
			v.ID, v.Sum, v.Count = e.AggregateID, v.Sum+d.N, v.Count+1
			return nil
		}); err != nil {
			return err
		}
		return projections.Modify(tx, "total", func(v *tallyView, _ bool) error {
			v.Sum += d.N
			v.Count++
			return nil
		})
	case renamed:
		return projections.Modify(tx, "tally."+e.AggregateID, func(v *tallyView, _ bool) error {
			v.Name = d.Name
			return nil
		})
	case removed:
		return tx.Delete("tally." + e.AggregateID)
	}
	return nil
}

type node struct {
	store  *eventstore.Store
	runner *projections.Runner
}

func layout() natsx.Layout {
	names, _ := natsx.NewNames("")
	return natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
}

func startNode(t testing.TB, srv *natstest.Server, holder string, p projections.Projection) *node {
	t.Helper()
	return startNodeLogging(t, srv, holder, p, slog.New(slog.DiscardHandler))
}

func startNodeLogging(t testing.TB, srv *natstest.Server, holder string, p projections.Projection, logger *slog.Logger) *node {
	t.Helper()
	return startNodeWith(t, srv, holder, p, logger, nil)
}

func startNodeWith(t testing.TB, srv *natstest.Server, holder string, p projections.Projection, logger *slog.Logger, m *metrics.Metrics) *node {
	t.Helper()
	return startNodeTuned(t, srv, holder, p, func(c *projections.Config) { c.Logger, c.Metrics = logger, m })
}

// startNodeTuned starts a node whose runner's config tune changes.
func startNodeTuned(t testing.TB, srv *natstest.Server, holder string, p projections.Projection, tune func(*projections.Config)) *node {
	t.Helper()
	ctx := context.Background()
	l := layout()
	if err := natsx.Provision(ctx, srv.JS, l, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(added{}, renamed{}, removed{}, noise{})
	st := eventstore.NewStore(srv.JS, l.Names, reg)
	cfg := projections.Config{JS: srv.JS, Store: st, Layout: l, Holder: holder, LeaseTTL: 600 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)}
	tune(&cfg)
	r := projections.NewRunner(cfg, p)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	return &node{store: st, runner: r}
}

// appendTallies writes n events over k tallies and returns the last sequence and the expected sums.
func appendTallies(t *testing.T, st *eventstore.Store, n, k int, prefix string) (uint64, map[string]int) {
	t.Helper()
	ctx := context.Background()
	versions := map[string]events.Version{}
	sums := map[string]int{}
	var last uint64
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s%d", prefix, i%k)
		res, err := st.Append(ctx, events.Ref{Type: "tally", ID: id}, versions[id], events.Meta{}, added{N: i})
		if err != nil {
			t.Fatal(err)
		}
		versions[id] = res.Version
		sums[id] += i
		last = res.LastSeq()
	}
	return last, sums
}

func waitFor(t *testing.T, r *projections.Runner, seq uint64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := r.WaitFor(ctx, "tallies", seq); err != nil {
		t.Fatal(err)
	}
}

func checkSums(t *testing.T, r *projections.Runner, want map[string]int) {
	t.Helper()
	ctx := context.Background()
	total := 0
	for id, sum := range want {
		v, ok, err := projections.Get[tallyView](ctx, r, "tallies", "tally."+id)
		if err != nil || !ok {
			t.Fatalf("read %s: ok=%v err=%v", id, ok, err)
		}
		if v.Sum != sum {
			t.Fatalf("tally %s sum = %d, want %d", id, v.Sum, sum)
		}
		total += sum
	}
	v, _, _ := projections.Get[tallyView](ctx, r, "tallies", "total")
	if v.Sum != total {
		t.Fatalf("grand total = %d, want %d (an event was applied twice or not at all)", v.Sum, total)
	}
}

func TestProjectionFoldsTheLogAndServesReads(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	n := startNode(t, srv, "n1", tallies{})
	last, sums := appendTallies(t, n.store, 300, 7, "t")
	waitFor(t, n.runner, last)
	checkSums(t, n.runner, sums)

	// Rename and delete: a deleted document is gone from reads and lists.
	ctx := context.Background()
	_, v, _ := n.store.Load(ctx, events.Ref{Type: "tally", ID: "t1"})
	res, err := n.store.Append(ctx, events.Ref{Type: "tally", ID: "t1"}, v, events.Meta{}, renamed{Name: "one"}, removed{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, n.runner, res.LastSeq())
	if _, ok, _ := projections.Get[tallyView](ctx, n.runner, "tallies", "tally.t1"); ok {
		t.Fatal("a removed tally is still readable")
	}
	list, err := projections.ListAll[tallyView](ctx, n.runner, "tallies", "tally.>")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 6 {
		t.Fatalf("listed %d tallies, want 6", len(list))
	}
	ok, _, err := n.runner.CaughtUp(ctx)
	if err != nil || !ok {
		t.Fatalf("caught up = %v, %v", ok, err)
	}
}

func TestRebuiltProjectionEqualsLive(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	n := startNode(t, srv, "n1", tallies{})
	last, _ := appendTallies(t, n.store, 500, 13, "t")
	waitFor(t, n.runner, last)
	ctx := context.Background()
	live, err := n.runner.Dump(ctx, "tallies")
	if err != nil {
		t.Fatal(err)
	}
	var progressCalls int
	var lastDone, lastTotal uint64
	st, err := n.runner.Rebuild(ctx, "tallies", func(done, total uint64) {
		progressCalls++
		lastDone, lastTotal = done, total
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Generation != 2 || lastDone != 500 || lastTotal != 500 || progressCalls == 0 {
		t.Fatalf("rebuild status %+v, progress %d/%d in %d calls", st, lastDone, lastTotal, progressCalls)
	}
	rebuilt, err := n.runner.Dump(ctx, "tallies")
	if err != nil {
		t.Fatal(err)
	}
	if len(rebuilt) != len(live) || len(live) != 14 {
		t.Fatalf("rebuilt has %d documents, live had %d (want 14)", len(rebuilt), len(live))
	}
	for k, v := range live {
		if !jsonEqual(v, rebuilt[k]) {
			t.Fatalf("document %s: live %s, rebuilt %s", k, v, rebuilt[k])
		}
	}
	// The new generation keeps folding new events.
	res, err := n.store.Append(ctx, events.Ref{Type: "tally", ID: "fresh"}, events.Version{}, events.Meta{}, added{N: 42})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, n.runner, res.LastSeq())
	if v, ok, _ := projections.Get[tallyView](ctx, n.runner, "tallies", "tally.fresh"); !ok || v.Sum != 42 {
		t.Fatalf("after the swap a new event was not applied: %+v %v", v, ok)
	}
}

type noise struct {
	N int `json:"n"`
}

func (noise) EventType() string { return "noise.made" }

// A projection far behind reads the whole log and passes over the events it does not fold; near the end it
// switches to its filtered reader. Nothing it folds is missed or folded twice across the switch, also when the
// log ends in events it does not fold.
func TestAProjectionFarBehindReadsTheWholeLogAndMissesNothing(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	l := layout()
	if err := natsx.Provision(ctx, srv.JS, l, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(added{}, noise{})
	writer := eventstore.NewStore(srv.JS, l.Names, reg)
	sums := map[string]int{}
	versions := map[string]events.Version{}
	var lastTally uint64
	tallied := 0
	// write appends n noise events with a tally event after every fifth of the first `tallies` of them.
	write := func(n, tallies int) {
		t.Helper()
		for i := 0; i < n; i++ {
			if _, err := writer.Append(ctx, events.Ref{Type: "noise", ID: events.NewID()}, events.Version{}, events.Meta{}, noise{N: i}); err != nil {
				t.Fatal(err)
			}
			if i%5 != 0 || i >= tallies {
				continue
			}
			id := fmt.Sprint("t", i%11)
			res, err := writer.Append(ctx, events.Ref{Type: "tally", ID: id}, versions[id], events.Meta{}, added{N: i})
			if err != nil {
				t.Fatal(err)
			}
			versions[id], sums[id], lastTally = res.Version, sums[id]+i, res.LastSeq()
			tallied++
		}
	}
	catchUp := func(holder string) {
		t.Helper()
		var logs syncBuffer
		var applied atomic.Int64
		n := startNodeLogging(t, srv, holder, tallies{applied: &applied}, slog.New(slog.NewTextHandler(&logs, nil)))
		waitFor(t, n.runner, lastTally)
		checkSums(t, n.runner, sums)
		if !strings.Contains(logs.String(), "reads the whole log") {
			t.Fatalf("the projection did not read the whole log to catch up; its log:\n%s", logs.String())
		}
		// Live again: the filtered reader folds what comes next.
		write(20, 20)
		waitFor(t, n.runner, lastTally)
		checkSums(t, n.runner, sums)
		if int(applied.Load()) != tallied {
			t.Fatalf("%s folded %d events, the log holds %d tallies", holder, applied.Load(), tallied)
		}
		n.runner.Stop()
	}
	// The log ends in 400 events the projection does not fold: the reader switches on one it passes over.
	write(3400, 3000)
	catchUp("n1")
	// The log ends in tallies: the reader switches on one it folds, which must be folded first.
	tallied = 0
	write(3000, 3000)
	catchUp("n2")

	// A rebuild meets the same log and ends although the log ends in events it does not fold.
	write(400, 0)
	n := startNode(t, srv, "n3", tallies{})
	var lastDone, lastTotal, maxTotal uint64
	if _, err := n.runner.Rebuild(ctx, "tallies", func(done, total uint64) {
		lastDone, lastTotal, maxTotal = done, total, max(maxTotal, total)
	}); err != nil {
		t.Fatal(err)
	}
	checkSums(t, n.runner, sums)
	// Its progress counts tallies, not the events it passed over.
	if lastDone != 1208 || lastTotal != 1208 || maxTotal != 1208 {
		t.Fatalf("rebuild progress ended at %d of %d (at most %d), the log holds 1208 tallies", lastDone, lastTotal, maxTotal)
	}
}

// tenfold is tallies version 2, whose documents read differently: every sum ten times the old one.
type tenfold struct{ tallies }

func (tenfold) Version() int { return 2 }
func (t tenfold) Apply(tx *projections.Tx, e events.Envelope) error {
	if d, ok := e.Event.(added); ok {
		e.Event = added{N: 10 * d.N}
	}
	return t.tallies.Apply(tx, e)
}

// A new version of a projection folds the whole log into buckets of its own; nodes of the old version, as in a
// rolling upgrade, keep theirs, and both keep folding what comes next.
func TestANewVersionOfAProjectionFoldsTheLogApartFromTheOld(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	old := startNode(t, srv, "old", tallies{})
	last, sums := appendTallies(t, old.store, 60, 4, "t")
	waitFor(t, old.runner, last)

	updated := startNode(t, srv, "new", tenfold{})
	waitFor(t, updated.runner, last)
	tenfoldSums := func() map[string]int {
		out := map[string]int{}
		for id, sum := range sums {
			out[id] = 10 * sum
		}
		return out
	}
	checkSums(t, updated.runner, tenfoldSums())
	checkSums(t, old.runner, sums)

	last, more := appendTallies(t, old.store, 20, 4, "u")
	for id, s := range more {
		sums[id] = s
	}
	waitFor(t, old.runner, last)
	waitFor(t, updated.runner, last)
	checkSums(t, old.runner, sums)
	checkSums(t, updated.runner, tenfoldSums())

	ctx := context.Background()
	for _, c := range []struct {
		n      *node
		bucket string
	}{{old, "rm_tallies_g1"}, {updated, "rm_tallies_v2_g1"}} {
		st, err := c.n.runner.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(st[0].Bucket, c.bucket) || st[0].Name != "tallies" {
			t.Fatalf("status %+v, want bucket ...%s", st[0], c.bucket)
		}
	}
}

// syncBuffer is a log sink the runner's goroutines write while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func TestSecondNodeTakesOverAndNothingIsAppliedTwice(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	var appliedA, appliedB atomic.Int64
	a := startNode(t, srv, "a", tallies{applied: &appliedA})
	b := startNode(t, srv, "b", tallies{applied: &appliedB})
	last, sums := appendTallies(t, a.store, 200, 5, "t")
	waitFor(t, a.runner, last)
	waitFor(t, b.runner, last) // b learns progress from the checkpoint even when it does not lead
	if appliedA.Load() > 0 && appliedB.Load() > 0 {
		t.Fatalf("both nodes applied events (a %d, b %d): one leader expected", appliedA.Load(), appliedB.Load())
	}
	leader, follower := a, b
	if appliedB.Load() > 0 {
		leader, follower = b, a
	}
	leader.runner.Stop()
	last2, sums2 := appendTallies(t, follower.store, 100, 5, "u")
	waitFor(t, follower.runner, last2)
	for id, s := range sums2 {
		sums[id] = s
	}
	checkSums(t, follower.runner, sums)
	if got := sumsFromLog(t, follower.store); !reflect.DeepEqual(got, sums) {
		t.Fatalf("the log says %v, the test appended %v", got, sums)
	}
}

// TestOnlyANodeThatDoesNotLeadFollowsTheCheckpoint: the leader knows how far it applied; a consumer following its
// own checkpoint (one per projection, with goroutines and heartbeats) is kept only by the nodes that do not lead.
func TestOnlyANodeThatDoesNotLeadFollowsTheCheckpoint(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	a := startNode(t, srv, "a", tallies{})
	last, _ := appendTallies(t, a.store, 20, 2, "t")
	waitFor(t, a.runner, last)
	followers := func() int {
		t.Helper()
		ctx := context.Background()
		n := 0
		for name := range srv.JS.StreamNames(ctx).Name() {
			if !strings.HasPrefix(name, "KV_") || !strings.Contains(name, "tallies") {
				continue
			}
			stream, err := srv.JS.Stream(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			for range stream.ConsumerNames(ctx).Name() {
				n++
			}
		}
		return n
	}
	eventually := func(what string, want int) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for followers() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d consumers of the read model's bucket, want %d", what, followers(), want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	eventually("a alone, leading", 0)

	b := startNode(t, srv, "b", tallies{})
	last, _ = appendTallies(t, a.store, 20, 2, "u")
	waitFor(t, b.runner, last) // b learns a's progress from the checkpoint
	eventually("b beside a, not leading", 1)

	a.runner.Stop()
	last, _ = appendTallies(t, b.store, 20, 2, "v")
	waitFor(t, b.runner, last)
	eventually("b leading once a stopped", 0)
}

func sumsFromLog(t *testing.T, st *eventstore.Store) map[string]int {
	t.Helper()
	out := map[string]int{}
	_, err := st.Read(context.Background(), 0, func(e events.Envelope) error {
		if d, ok := e.Event.(added); ok {
			out[e.AggregateID] += d.N
		}
		return nil
	}, st.Names().TypeFilter("tally.added"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReplayAfterLostCheckpointChangesNothing(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	var applied atomic.Int64
	n := startNode(t, srv, "n1", tallies{applied: &applied})
	last, sums := appendTallies(t, n.store, 120, 4, "t")
	waitFor(t, n.runner, last)
	n.runner.Stop()
	// A crash after the documents were written and before the checkpoint: the next leader re-reads every event.
	ctx := context.Background()
	st, _ := n.runner.Status(ctx)
	kv, err := srv.JS.KeyValue(ctx, st[0].Bucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "_checkpoint", []byte("0")); err != nil {
		t.Fatal(err)
	}
	before := applied.Load()
	again := startNode(t, srv, "n2", tallies{applied: &applied})
	waitFor(t, again.runner, last)
	if applied.Load()-before != 120 {
		t.Fatalf("re-read %d events, want all 120", applied.Load()-before)
	}
	checkSums(t, again.runner, sums)
}

// slowTallies folds as tallies does, a millisecond an event: slower than the log takes events.
type slowTallies struct{ tallies }

func (s slowTallies) Apply(tx *projections.Tx, e events.Envelope) error {
	time.Sleep(time.Millisecond)
	return s.tallies.Apply(tx, e)
}

// TestAProjectionBehindLiveEventsBatchesWhatItHolds: events appended one by one, faster than the projection folds
// them, are each the log's last when the server hands them over (nothing pending behind them), yet the projection
// holds many of them: it writes what it holds as one batch rather than one round of writes each, and so keeps up.
func TestAProjectionBehindLiveEventsBatchesWhatItHolds(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	m := metrics.New()
	node := startNodeWith(t, srv, "n1", slowTallies{}, slog.New(slog.DiscardHandler), m)
	st, r := node.store, node.runner

	const n = 300
	last, sums := appendTallies(t, st, n, 7, "t")
	waitFor(t, r, last)
	checkSums(t, r, sums)
	applied := counted(t, m.ProjectionApply.WithLabelValues("tallies"))
	batches := counted(t, m.ProjectionBatches.WithLabelValues("tallies"))
	if applied != n {
		t.Fatalf("applied %v events, want %d", applied, n)
	}
	if batches > n/10 {
		t.Fatalf("%d events applied in %v batches, want at least 10 a batch on average", n, batches)
	}
}

func counted(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// renames folds two types, so that it reads the log through two filters.
type renames struct{}

func (renames) Name() string         { return "renames" }
func (renames) EventTypes() []string { return []string{"noise.made", "tally.renamed"} }
func (renames) Apply(tx *projections.Tx, e events.Envelope) error {
	if d, ok := e.Event.(renamed); ok {
		return tx.Put("name."+e.AggregateID, d)
	}
	return nil
}

// TestShowsLatestWaitsForWhatTheModelFoldsAlone: a list's check waits for the events its model folds, on any of
// its filters, and passes over the log's other events; once the model stands still, an event it folds left
// unapplied makes the list say so (a 503) and readiness say which model is behind.
func TestShowsLatestWaitsForWhatTheModelFoldsAlone(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	n := startNodeTuned(t, srv, "a", renames{}, func(c *projections.Config) { c.ReadWait = 300 * time.Millisecond })
	r, st := n.runner, n.store
	shows := func(what string, want bool) {
		t.Helper()
		got, err := r.ShowsLatest(ctx, renames{})
		if err != nil || got != want {
			t.Fatalf("%s: ShowsLatest = %v, %v; want %v", what, got, err, want)
		}
	}
	appendOne := func(id string, e events.Event) {
		t.Helper()
		if _, err := st.Append(ctx, events.Ref{Type: strings.Split(e.EventType(), ".")[0], ID: id}, events.Version{}, events.Meta{}, e); err != nil {
			t.Fatal(err)
		}
	}
	shows("an empty log", true)
	appendOne("n1", noise{N: 1})
	appendOne("t1", renamed{Name: "one"}) // on the second filter, after an event on the first
	// A write from elsewhere: the check waits for the model to apply it (up to ReadWait, ample for one event).
	deadline := time.Now().Add(20 * time.Second)
	for ok, _ := r.ShowsLatest(ctx, renames{}); !ok; ok, _ = r.ShowsLatest(ctx, renames{}) {
		if time.Now().After(deadline) {
			t.Fatal("the model never showed the rename")
		}
	}
	if _, ok, _ := projections.Get[renamed](ctx, r, "renames", "name.t1"); !ok {
		t.Fatal("ShowsLatest said shown before the model held the rename")
	}
	for i := range 5 {
		appendOne(fmt.Sprintf("t%d", i+2), added{N: i}) // the log's other events
	}
	shows("events the model does not fold after what it applied", true)
	if ok, name, err := r.CaughtUp(ctx); !ok || err != nil {
		t.Fatalf("CaughtUp = %v (%s), %v", ok, name, err)
	}

	r.Stop() // the model stands still from here
	appendOne("t9", added{N: 9})
	appendOne("t10", renamed{Name: "ten"}) // the second filter's, behind the model
	appendOne("t11", added{N: 11})
	shows("a rename the model has not applied", false)
	var e *errs.Error
	if err := r.ListCaughtUp(ctx, renames{}); !errors.As(err, &e) || e.Code != errs.Unavailable {
		t.Fatalf("ListCaughtUp = %v, want Unavailable", err)
	}
	if ok, name, err := r.CaughtUp(ctx); ok || name != "renames" || err != nil {
		t.Fatalf("CaughtUp = %v (%s), %v; want renames behind", ok, name, err)
	}
}
