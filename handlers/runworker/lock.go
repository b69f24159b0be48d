package runworker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/lease"
)

// lock is a run's lock held by this worker: a key in a KV bucket whose values expire, renewed while the worker
// drives the run. A worker that dies stops renewing and the key expires, so another can take the run over.
type lock struct {
	ctx    context.Context // ends when the lock is lost (or released)
	cancel context.CancelFunc
	stop   chan struct{}
	done   chan uint64 // the renewing goroutine hands back the last revision it wrote
	kv     jetstream.KeyValue
	key    string
	// holder is the key's value while this taking holds it: the node's name and a token of its own (takingHolder).
	holder string
}

// takingHolder is the value of a run's lock for one taking of it by node: the node's name, which whoever reads the
// lock looks for (LockNode), and a random token. A renewal or a release whose revision is behind the key takes the
// key for its own when it names its holder (lease.Renew, lease.Release); a node's name alone would not tell its
// takings apart, and a node may take a run again while the driver that lost the run's lock still unwinds (driving).
// The token is random, not counted, so that a node restarted under the same name does not repeat it.
func takingHolder(node string) string { return node + "/" + events.RandomToken(8) }

// LockNode returns the node that holds a run's lock, from the lock key's value.
func LockNode(value []byte) string {
	if i := strings.LastIndexByte(string(value), '/'); i >= 0 {
		return string(value[:i])
	}
	return string(value)
}

// tryLock takes the run's lock for node unless someone holds it. It never waits: a holder drives the run until it
// has nothing left to do, and looks again once it lets go.
func tryLock(ctx context.Context, kv jetstream.KeyValue, runID, node string, ttl time.Duration) (*lock, bool, error) {
	key := "run." + runID
	holder := takingHolder(node)
	rev, err := kv.Create(ctx, key, []byte(holder))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lock run %s: %w", runID, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &lock{ctx: lctx, cancel: cancel, stop: make(chan struct{}), done: make(chan uint64, 1), kv: kv, key: key,
		holder: holder}
	go l.renew(rev, ttl/3, ttl)
	return l, true, nil
}

// renew keeps the lock while the worker drives the run. A renewal that gets no answer in time (a slow or busy
// server) is not a lost lock: the key expires only ttl after the last renewal that went in, and until then nobody else
// can take it, so the worker goes on and tries again soon; given up at the first slow answer, the run was taken again
// and its turn asked of the model twice. The lock is lost when the key is not this taking's (it expired, or another
// worker took it) or when no renewal went in for ttl: by then the key may have expired and another worker may hold
// it. A renewal is a compare-and-set at the last revision, so one that goes in late never overwrites another worker's
// key; refused, it is written at the key's own revision if the key still names this taking (lease.Renew): a renewal
// that went in but whose answer came too late left the revision behind the key, which is still this taking's.
func (l *lock) renew(rev uint64, every, ttl time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	renewed := time.Now() // before the write that took the lock: its key expires no sooner than ttl after this
	lost := func() {
		// Another worker may take the run now; this one must stop writing to it.
		l.cancel()
		l.done <- 0
	}
	for {
		select {
		case <-l.stop:
			l.done <- rev
			return
		case <-l.ctx.Done():
			l.done <- rev
			return
		case <-t.C:
		}
		left := ttl - time.Since(renewed)
		if left <= 0 {
			lost()
			return
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(l.ctx, min(every, left))
		// A key that is gone is not taken again: it expired, and another worker may have driven the run and let go
		// since.
		next, err := lease.Renew(rctx, l.kv, l.key, l.holder, rev)
		cancel()
		switch {
		case err == nil:
			rev, renewed = next, sent
			t.Reset(every)
		case l.ctx.Err() != nil:
			t.Reset(0) // stopping: the next select hands the revision back
		case lease.IsWrongRevision(err):
			lost()
			return
		default:
			t.Reset(every / 5)
		}
	}
}

// release lets go of the lock at once, so that another worker need not wait for it to expire. The key is deleted at
// its own revision if it is ahead of the last one written but still names this taking (lease.Release).
func (l *lock) release() {
	rev := l.leave()
	if rev == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = lease.Release(ctx, l.kv, l.key, l.holder, rev)
}

// leave stops renewing the lock and leaves it to expire; it returns the last revision written (0: lost).
func (l *lock) leave() uint64 {
	close(l.stop)
	rev := <-l.done
	l.cancel()
	return rev
}
