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
	go l.renew(holder, rev, ttl/3)
	return l, true, nil
}

func (l *lock) renew(holder string, rev uint64, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			l.done <- rev
			return
		case <-l.ctx.Done():
			l.done <- rev
			return
		case <-t.C:
			next, err := l.kv.Update(l.ctx, l.key, []byte(holder), rev)
			if err != nil {
				// Lost: another worker may take the run now; this one must stop writing to it.
				l.cancel()
				l.done <- 0
				return
			}
			rev = next
		}
	}
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
