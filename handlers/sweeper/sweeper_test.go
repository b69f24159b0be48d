package sweeper_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
	const ttl = 500 * time.Millisecond
	n := startRunsNode(ctx, t, ttl)
	srv, names, logger, store, views, cmds := n.srv, n.names, n.logger, n.store, n.views, n.cmds

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

// runsNode is what the sweeper's tests stand on: an embedded server provisioned as a node's, with the lease bucket
// (its values expiring after the tests' ttl), the log, the runs read model and the commands.
type runsNode struct {
	srv    *natstest.Server
	names  natsx.Names
	layout natsx.Layout
	logger *slog.Logger
	store  *eventstore.Store
	views  *projections.Runner
	cmds   commands.Set
}

func startRunsNode(ctx context.Context, t *testing.T, ttl time.Duration) runsNode {
	t.Helper()
	n := runsNode{srv: natstest.Start(t), logger: slog.New(slog.DiscardHandler)}
	n.names, _ = natsx.NewNames("")
	n.layout = natsx.Layout{Names: n.names, Replicas: 1, DuplicateWindow: time.Minute}
	if err := natsx.Provision(ctx, n.srv.JS, n.layout, n.logger); err != nil {
		t.Fatal(err)
	}
	if err := natsx.EnsureBucket(ctx, n.srv.JS, n.layout, natsx.BucketSpec{Name: lease.Bucket, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	n.store = eventstore.NewStore(n.srv.JS, n.names, events.NewRegistry())
	n.views = projections.NewRunner(projections.Config{JS: n.srv.JS, Store: n.store, Layout: n.layout, Holder: "views",
		LeaseTTL: ttl}, projections.Runs{})
	if err := n.views.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(n.views.Stop)
	n.cmds = commands.New(commands.Config{Store: n.store, Views: n.views})
	return n
}
