package lease_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// ttl is short so that a lease expires within a test, and long enough that a loaded machine still renews in time
// (a holder renews every ttl/3).
const ttl = 2 * time.Second

// wait bounds every wait for an outcome; it is not what the tests check. It is shorter than the 30 s a holder keeps
// a lease through a silent bucket (maxSilence), so that a holder which goes on through silence fails.
const wait = 20 * time.Second

const name = "projection.runs"

// TestStopDuringRenewalReleases: a holder stopped while its renewal is on its way to the bucket still releases the
// lease, though the renewal's answer never reaches it. The test stops the holder the moment the renewal reaches the
// server (a plain subscriber on the key's subject sees it before the stream answers), round after round.
func TestStopDuringRenewalReleases(t *testing.T) {
	t.Parallel()
	const short = 300 * time.Millisecond
	srv := natstest.Start(t)
	b := newBoard()
	kv := bucketTTL(t, srv, short)
	const rounds = 20
	held := 0
	for round := range rounds {
		// A lease of its own each round: its first write, the take, is over no revision, as no earlier round's
		// release left a marker in its key.
		key := fmt.Sprintf("round%d", round)
		writes, err := srv.NC.SubscribeSync("$KV." + lease.Bucket + "." + key)
		if err != nil {
			t.Fatal(err)
		}
		stop := compete(t, srv, "node-a", b, func(c *contender) { c.ttl, c.lease = short, key })
		b.waitFor(t, "node-a holds the lease", func(in map[string]bool) (string, bool) { return "", in["node-a"] })
		for {
			m, err := writes.NextMsg(wait)
			if err != nil {
				t.Fatalf("round %d: no renewal: %v", round, err)
			}
			// A renewal: node-a's value, written over a revision (a take writes over none, a release deletes).
			if string(m.Data) == "node-a" && m.Header.Get(jetstream.ExpectedLastSubjSeqHeader) != "0" {
				break
			}
		}
		stop()
		_ = writes.Unsubscribe()
		if got, err := lease.Holder(t.Context(), kv, key); err != nil || got == "node-a" {
			held++
			t.Logf("round %d: after node-a stopped, the lease is held by %q (err %v)", round, got, err)
		}
	}
	if held > 0 {
		t.Errorf("%d rounds of %d left the lease held by the stopped node; a stopped holder releases it", held, rounds)
	}
}

// bucketTTL makes the lease bucket on srv, its values expiring after ttl, and opens it on srv's connection.
func bucketTTL(t *testing.T, srv *natstest.Server, ttl time.Duration) jetstream.KeyValue {
	t.Helper()
	kv, err := srv.JS.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: lease.Bucket, TTL: ttl, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// kvOn opens the lease bucket on nc.
func kvOn(t *testing.T, nc *nats.Conn) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), lease.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// contender is one node competing for the lease.
type contender struct {
	nc     *nats.Conn // its node's connection; a fresh one unless set
	logger *slog.Logger
	ttl    time.Duration // the bucket's TTL; ttl unless set
	lease  string        // the lease's name; name unless set
}

// compete runs lease.Run for holder on its own connection to srv, its work marking holder in b while it holds the
// lease. The returned stop ends Run and waits for it to return.
func compete(t *testing.T, srv *natstest.Server, holder string, b *board, opt func(*contender)) (stop func()) {
	t.Helper()
	c := &contender{logger: slog.New(slog.DiscardHandler), ttl: ttl, lease: name}
	if opt != nil {
		opt(c)
	}
	if c.nc == nil {
		c.nc = srv.Connect(t)
	}
	kv := kvOn(t, c.nc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		lease.Run(ctx, kv, c.lease, holder, c.ttl, c.logger, func(ctx context.Context) {
			b.enter(holder)
			defer b.leave(holder)
			<-ctx.Done()
		})
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// board records which holders are at work, how often each started, and every moment two worked at once.
type board struct {
	mu      sync.Mutex
	in      map[string]bool
	started map[string]int
	both    []string
	changed chan struct{} // closed at each change
}

func newBoard() *board {
	return &board{in: map[string]bool{}, started: map[string]int{}, changed: make(chan struct{})}
}

func (b *board) enter(h string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for o := range b.in {
		b.both = append(b.both, o+" and "+h)
	}
	b.in[h] = true
	b.started[h]++
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *board) leave(h string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.in, h)
	close(b.changed)
	b.changed = make(chan struct{})
}

// waitFor waits until ok says the holders at work are as wanted, and returns what it found.
func (b *board) waitFor(t *testing.T, what string, ok func(in map[string]bool) (string, bool)) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		b.mu.Lock()
		found, done := ok(b.in)
		changed := b.changed
		b.mu.Unlock()
		if done {
			return found
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: not after %v", what, wait)
		}
	}
}
