package tasks_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/tasks"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// sweeps records which node looked for due timers.
type sweeps struct {
	mu     sync.Mutex
	by     map[string]int
	total  int
	enough chan struct{}
}

type dueOf struct {
	s    *sweeps
	node string
}

func (d dueOf) DueTimers(context.Context, time.Time) ([]tasks.Due, error) {
	d.s.mu.Lock()
	defer d.s.mu.Unlock()
	d.s.by[d.node]++
	d.s.total++
	if d.s.total == 20 {
		close(d.s.enough)
	}
	return nil, nil
}

// TestOneNodeAtATimeSweepsTheTaskTimers: two nodes run the task timers on one log; both consume fired timers, but
// only the holder of the timers' lease looks for due sleeps, so the nodes do not race to wake the same ones.
func TestOneNodeAtATimeSweepsTheTaskTimers(t *testing.T) {
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
	const ttl = 3 * time.Second
	if err := natsx.EnsureBucket(ctx, srv.JS, layout, natsx.BucketSpec{Name: lease.Bucket, TTL: ttl}); err != nil {
		t.Fatal(err)
	}
	leases, err := srv.JS.KeyValue(ctx, names.Bucket(lease.Bucket))
	if err != nil {
		t.Fatal(err)
	}
	store := eventstore.NewStore(srv.JS, names, events.NewRegistry())
	s := &sweeps{by: map[string]int{}, enough: make(chan struct{})}
	var wg sync.WaitGroup
	rctx, stop := context.WithCancel(ctx)
	for _, node := range []string{"node-a", "node-b"} {
		g := tasks.New(tasks.Config{Executions: eventstore.NewRepo[execution.State](store, execution.Aggregate, 0),
			JS: srv.JS, Names: names, Logger: logger, SweepEvery: 10 * time.Millisecond})
		wg.Go(func() {
			if err := g.RunTimers(rctx, dueOf{s, node}, tasks.Owner{Leases: leases, TTL: ttl, Holder: node}, nil); err != nil {
				t.Error(err)
			}
		})
	}
	select {
	case <-s.enough:
	case <-ctx.Done():
		t.Fatal("the timers were not swept")
	}
	stop()
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.by) != 1 {
		t.Fatalf("sweeps by node: %v; want every one by the lease's holder", s.by)
	}
	holder, err := lease.Holder(ctx, leases, tasks.TimersLease)
	if err != nil {
		t.Fatal(err)
	}
	if holder != "" {
		t.Fatalf("the timers' lease is still held by %q after its node stopped", holder)
	}
}
