package runworker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// lockTTL is short so that a lost lock shows within a test; the worker renews every lockTTL/3.
const lockTTL = 3 * time.Second

// silentKV is the real bucket, but the renewals it is told to drop get no answer in time: the server's answer to a
// write is what a busy or failing-over server delays. Everything else goes to the bucket.
type silentKV struct {
	jetstream.KeyValue
	mu      sync.Mutex
	drop    int // renewals still to drop; -1: all of them
	dropped int
	renewed int
}

func (k *silentKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	k.mu.Lock()
	if k.drop != 0 {
		if k.drop > 0 {
			k.drop--
		}
		k.dropped++
		k.mu.Unlock()
		// A request no server answers ends at its deadline, or at the client's default timeout without one.
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Second):
			return 0, context.DeadlineExceeded
		}
	}
	k.mu.Unlock()
	rev, err := k.KeyValue.Update(ctx, key, value, last)
	if err == nil {
		k.mu.Lock()
		k.renewed++
		k.mu.Unlock()
	}
	return rev, err
}

func (k *silentKV) counts() (dropped, renewed int) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.dropped, k.renewed
}

func lockBucket(t *testing.T) (jetstream.KeyValue, *silentKV) {
	t.Helper()
	srv := natstest.Start(t)
	kv, err := srv.JS.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: "locks", TTL: lockTTL})
	if err != nil {
		t.Fatal(err)
	}
	return kv, &silentKV{KeyValue: kv}
}

func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 20s", what)
		}
	}
}

// A renewal that gets no answer in time is not a lost lock: the key is the worker's until it expires, and the next
// renewal keeps it. Given up at once, the run was driven again by another worker and its turn asked twice.
func TestALockOutlivesARenewalWithoutAnswer(t *testing.T) {
	t.Parallel()
	kv, silent := lockBucket(t)
	silent.drop = 1
	l, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	defer l.release()
	waitUntil(t, "a renewal after the one without answer", func() bool {
		dropped, renewed := silent.counts()
		return dropped == 1 && renewed >= 1
	})
	if l.ctx.Err() != nil {
		t.Fatal("the lock was given up at a renewal without answer, though nobody else could take it before it expired")
	}
	if e, err := kv.Get(t.Context(), "run.run_1"); err != nil || string(e.Value()) != "node-a" {
		t.Fatalf("the lock's key: %v, %v; want node-a's", e, err)
	}
}

// A lock whose renewals get no answer for its whole time is given up: its key may have expired and another worker
// may hold the run.
func TestALockWithoutAnswersIsGivenUp(t *testing.T) {
	t.Parallel()
	_, silent := lockBucket(t)
	silent.drop = -1
	l, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	defer l.release()
	waitUntil(t, "the lock given up", func() bool { return l.ctx.Err() != nil })
}

// A lock whose key another worker wrote is given up at the next renewal.
func TestALockTakenByAnotherIsGivenUp(t *testing.T) {
	t.Parallel()
	kv, silent := lockBucket(t)
	l, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	defer l.release()
	if _, err := kv.Put(t.Context(), "run.run_1", []byte("node-b")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the lock given up", func() bool { return l.ctx.Err() != nil })
	if e, err := kv.Get(t.Context(), "run.run_1"); err != nil || string(e.Value()) != "node-b" {
		t.Fatalf("the lock's key: %v, %v; want node-b's, untouched", e, err)
	}
}
