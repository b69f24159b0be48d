package natsx_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// askCounting is a consumer that counts how often its info is asked of the server.
type askCounting struct {
	jetstream.Consumer
	asked atomic.Int32
}

func (c *askCounting) Info(ctx context.Context) (*jetstream.ConsumerInfo, error) {
	c.asked.Add(1)
	return c.Consumer.Info(ctx)
}

// TestWatchdogsOfIdleReadersAskOnlyOnceTheLogMoves: readers with nothing pending, watched, cost their server nothing
// while the log stands still: their watchdogs share the log's tip and ask a consumer again only once the tip moved.
// Once events wait that no reader receives, every watchdog still finds its reader stalled.
func TestWatchdogsOfIdleReadersAskOnlyOnceTheLogMoves(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	if _, err := srv.JS.CreateStream(ctx, jetstream.StreamConfig{Name: "LOG", Subjects: []string{"log.>"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.JS.Publish(ctx, "log.a", []byte("before")); err != nil {
		t.Fatal(err)
	}
	const readers = 6
	const after = 100 * time.Millisecond
	tip := natsx.NewTip(srv.JS, "LOG", after/2)
	var stalled atomic.Int32
	conses := make([]*askCounting, readers)
	for i := range conses {
		// Nothing pending: each starts at the log's end.
		c, err := srv.JS.CreateConsumer(ctx, "LOG", jetstream.ConsumerConfig{DeliverPolicy: jetstream.DeliverNewPolicy})
		if err != nil {
			t.Fatal(err)
		}
		conses[i] = &askCounting{Consumer: c}
		go natsx.Watchdog(ctx, conses[i], new(natsx.Progress), after, tip, func() { stalled.Add(1) })
	}
	asked := func() (n int32) {
		for _, c := range conses {
			n += c.asked.Load()
		}
		return n
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Each watchdog asks its consumer once, finds nothing pending, and then waits for the log to move.
	waitFor("every watchdog to ask once", func() bool {
		for _, c := range conses {
			if c.asked.Load() == 0 {
				return false
			}
		}
		return true
	})
	before := asked()
	time.Sleep(20 * after) // the log stands still: some forty looks of each watchdog
	if n := asked() - before; n != 0 {
		t.Fatalf("watchdogs of idle readers asked their consumers %d times while the log stood still, want 0", n)
	}
	if stalled.Load() != 0 {
		t.Fatalf("%d readers found stalled with nothing pending", stalled.Load())
	}
	// An event waits that no reader receives: each watchdog asks again, and finds its reader stalled.
	if _, err := srv.JS.Publish(ctx, "log.a", []byte("after")); err != nil {
		t.Fatal(err)
	}
	waitFor("every reader found stalled", func() bool { return stalled.Load() == readers })
}
