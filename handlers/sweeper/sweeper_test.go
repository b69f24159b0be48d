package sweeper_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/sweeper"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/projections"
)

// TestOneSweeperLeadsAndAnotherTakesOver: of two sweepers only one expires runs; when its node dies (its
// connection goes, no clean release) the other takes the lease once it expires, and expires the next run.
func TestOneSweeperLeadsAndAnotherTakesOver(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	logger := slog.New(slog.DiscardHandler)
	if err := natsx.Provision(ctx, srv.JS, layout, logger); err != nil {
		t.Fatal(err)
	}
	const ttl = 500 * time.Millisecond
	if err := natsx.EnsureBucket(ctx, srv.JS, layout, natsx.BucketSpec{Name: lease.Bucket, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewStore(srv.JS, names, events.NewRegistry())
	views := projections.NewRunner(projections.Config{JS: srv.JS, Store: store, Layout: layout, Holder: "views", LeaseTTL: ttl}, projections.Runs{})
	if err := views.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(views.Stop)
	cmds := commands.New(commands.Config{Store: store, Views: views})

	start := func(holder string) (jetstream.KeyValue, context.CancelFunc, func()) {
		nc := srv.Connect(t)
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		kv, err := js.KeyValue(ctx, names.Bucket(lease.Bucket))
		if err != nil {
			t.Fatal(err)
		}
		s := sweeper.New(sweeper.Config{Runs: cmds.Turns, Active: projections.ActiveRuns{Views: views}, Leases: kv, LeaseTTL: ttl, Holder: holder,
			Interval: 100 * time.Millisecond, Logger: logger})
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); s.Run(sctx) }()
		t.Cleanup(func() { stop(); <-done })
		return kv, stop, nc.Close
	}
	kvA, _, dieA := start("node-a")
	kvB, _, dieB := start("node-b")

	expiredRun := func(thread string) {
		t.Helper()
		_, err := store.Append(ctx, events.Ref{Type: "thread", ID: thread}, events.Version{}, events.Meta{Account: "acct_1"},
			events.ThreadCreated{}, events.RunCreated{RunID: "run_" + thread, ExpiresAt: time.Now().Add(-time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			th, err := cmds.Threads.Load(ctx, thread)
			if err != nil {
				t.Fatal(err)
			}
			if th.Runs["run_"+thread].Status == events.RunStatusExpired {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("run of %s not expired", thread)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	expiredRun("t1")
	leader, err := lease.Holder(ctx, kvA, sweeper.LeaseName)
	if err != nil || (leader != "node-a" && leader != "node-b") {
		t.Fatalf("lease holder %q: %v", leader, err)
	}

	// The leader dies: no release, its key must expire before the other node sweeps.
	survivorKV, die := kvB, dieA
	if leader == "node-b" {
		survivorKV, die = kvA, dieB
	}
	die()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := lease.Holder(ctx, survivorKV, sweeper.LeaseName)
		if err == nil && h != "" && h != leader {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no takeover: holder still %q (%v)", h, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	expiredRun("t2")
}

// TestARunExpiresThroughItsScheduledMessage: with no sweeper ticking (no lease, no sweep), a run expires at its
// expires_at because its creation set a message schedule that fires then, and the expiry consumer acts on it.
func TestARunExpiresThroughItsScheduledMessage(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	logger := slog.New(slog.DiscardHandler)
	if err := natsx.Provision(ctx, srv.JS, layout, logger); err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewStore(srv.JS, names, events.NewRegistry())
	cmds := commands.New(commands.Config{Store: store})
	s := sweeper.New(sweeper.Config{Runs: cmds.Turns, JS: srv.JS, Names: names, Logger: logger})

	rt, err := runtime.New(runtime.Config{
		Connect: func() (*nats.Conn, error) { return natsx.ConnectEmbedded(srv.NS, "handlers") },
		JS:      srv.JS, Store: store, Names: names, CloseTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Add(s.Scheduler()); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() {
		if err := rt.Run(rctx, nil); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if err := s.RunExpiries(rctx, nil); err != nil {
			t.Error(err)
		}
	})

	const thread, run = "thread_x", "run_x"
	if _, err := store.Append(ctx, events.Ref{Type: "thread", ID: thread}, events.Version{}, events.Meta{Account: "acct_1"},
		events.ThreadCreated{}, events.RunCreated{RunID: run, ExpiresAt: time.Now().Add(time.Second)}); err != nil {
		t.Fatal(err)
	}
	for {
		th, err := cmds.Threads.Load(ctx, thread)
		if err != nil {
			t.Fatal(err)
		}
		if th.Runs[run].Status == events.RunStatusExpired {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the run is %s, not expired", th.Runs[run].Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The expiry came as the run's scheduled message.
	stream, err := srv.JS.Stream(ctx, names.TimersStream())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.GetLastMsgForSubject(ctx, names.RunExpirySubject(run)); err != nil {
		t.Fatalf("the run's expiry message: %v", err)
	}
}

// TestAStalledRunIsKickedOncePerStall: a run unchanged for Stalled is kicked once, not again on the sweeps that
// follow (a live worker on a long model call holds its lock: each kick would be one more refused lock), then again
// once it has stayed unchanged for another Stalled; a run that changed and stalled anew is kicked at once.
func TestAStalledRunIsKickedOncePerStall(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	if err := natsx.Provision(ctx, srv.JS, layout, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewStore(srv.JS, names, events.NewRegistry())
	views := projections.NewRunner(projections.Config{JS: srv.JS, Store: store, Layout: layout, Holder: "views"}, projections.Runs{})
	if err := views.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(views.Stop)
	cmds := commands.New(commands.Config{Store: store, Views: views})
	active := projections.ActiveRuns{Views: views}
	// waitActive waits until the index of active runs shows the run changed at or after since.
	waitActive := func(since time.Time) time.Time {
		t.Helper()
		for {
			runs, err := active.ActiveRuns(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) == 1 && !runs[0].Changed.Before(since) {
				return runs[0].Changed
			}
			if ctx.Err() != nil {
				t.Fatalf("the run is not in the index: %+v", runs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	threadRef := events.Ref{Type: "thread", ID: "thread_k"}
	app, err := store.Append(ctx, threadRef, events.Version{}, events.Meta{Account: "acct_1"},
		events.ThreadCreated{}, events.RunCreated{RunID: "run_k", ExpiresAt: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	changed := waitActive(time.Time{})

	const stalled = time.Minute
	var now time.Time
	kicks := 0
	s := sweeper.New(sweeper.Config{Runs: cmds.Turns, Active: active, Stalled: stalled, Now: func() time.Time { return now },
		Kick: func(thread.RunRef) bool { kicks++; return true }})
	sweepAt := func(at time.Time) {
		t.Helper()
		now = at
		if _, err := s.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sweepAt(changed.Add(stalled / 2))
	if kicks != 0 {
		t.Fatalf("a run that has not stalled was kicked %d times", kicks)
	}
	// Sweeps every third of Stalled, as the sweeper's own ticks.
	for i := range 3 {
		sweepAt(changed.Add(stalled + time.Duration(i)*stalled/3))
	}
	if kicks != 1 {
		t.Fatalf("over one stall the run was kicked %d times, want once", kicks)
	}
	sweepAt(changed.Add(2*stalled + time.Second))
	if kicks != 2 {
		t.Fatalf("after another stall the run was kicked %d times, want twice", kicks)
	}
	// The run changes (a worker started it) and stalls again: a new stall, kicked at once.
	if _, err := store.Append(ctx, threadRef, app.Version, events.Meta{Account: "acct_1"}, events.RunStarted{RunID: "run_k"}); err != nil {
		t.Fatal(err)
	}
	changed = waitActive(changed.Add(time.Nanosecond))
	sweepAt(changed.Add(stalled))
	sweepAt(changed.Add(stalled + stalled/3))
	if kicks != 3 {
		t.Fatalf("after it changed and stalled again the run was kicked %d times in all, want 3", kicks)
	}
}
