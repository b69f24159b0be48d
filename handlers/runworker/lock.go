package runworker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
}

// tryLock takes the run's lock unless someone holds it. It never waits: a holder drives the run until it has
// nothing left to do, and looks again once it lets go.
func tryLock(ctx context.Context, kv jetstream.KeyValue, runID, holder string, ttl time.Duration) (*lock, bool, error) {
	key := "run." + runID
	rev, err := kv.Create(ctx, key, []byte(holder))
	if errors.Is(err, jetstream.ErrKeyExists) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lock run %s: %w", runID, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &lock{ctx: lctx, cancel: cancel, stop: make(chan struct{}), done: make(chan uint64, 1), kv: kv, key: key}
	go l.renew(holder, rev, ttl/3, ttl)
	return l, true, nil
}

// renew keeps the lock while the worker drives the run. A renewal that gets no answer in time (a slow or busy
// server) is not a lost lock: the key expires only ttl after the last renewal that went in, and until then nobody else
// can take it, so the worker goes on and tries again soon; given up at the first slow answer, the run was taken again
// and its turn asked of the model twice. The lock is lost when the key is not at the revision last written (it
// expired, or another worker took it) or when no renewal went in for ttl: by then the key may have expired and another
// worker may hold it. A renewal is a compare-and-set at the last revision, so one that goes in late never overwrites
// another worker's key.
func (l *lock) renew(holder string, rev uint64, every, ttl time.Duration) {
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
		next, err := l.kv.Update(rctx, l.key, []byte(holder), rev)
		cancel()
		switch {
		case err == nil:
			rev, renewed = next, sent
			t.Reset(every)
		case l.ctx.Err() != nil:
			t.Reset(0) // stopping: the next select hands the revision back
		case wrongRevision(err):
			lost()
			return
		default:
			t.Reset(every / 5)
		}
	}
}

// wrongRevision says the key is not at the revision this worker last wrote: it expired, or another worker took it.
func wrongRevision(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) ||
		errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

// release lets go of the lock at once, so that another worker need not wait for it to expire.
func (l *lock) release() {
	rev := l.leave()
	if rev == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.kv.Delete(ctx, l.key, jetstream.LastRevision(rev))
}

// leave stops renewing the lock and leaves it to expire; it returns the last revision written (0: lost).
func (l *lock) leave() uint64 {
	close(l.stop)
	rev := <-l.done
	l.cancel()
	return rev
}
