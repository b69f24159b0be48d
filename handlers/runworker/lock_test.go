package runworker

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// lockTTL is short so that a lost lock shows within a test; the worker renews every lockTTL/3.
const lockTTL = 3 * time.Second

// silentKV is the real bucket, but the renewals it is told to drop get no answer in time: the server's answer to a
// write is what a busy or failing-over server delays. The renewals it is told to lose go in, but their answer comes
// after the caller's deadline: the caller sees the deadline, and the key is at a revision it does not know.
// Everything else goes to the bucket.
type silentKV struct {
	jetstream.KeyValue
	mu      sync.Mutex
	drop    int // renewals still to drop; -1: all of them
	dropped int
	renewed int
	lose    int    // renewals still to write whose answer is lost; -1: all of them
	onLose  func() // called once each such renewal went in, before its caller hears of its deadline
	lost    int
}

func (k *silentKV) Update(ctx context.Context, key string, value []byte, last uint64) (uint64, error) {
	k.mu.Lock()
	if k.lose != 0 {
		if k.lose > 0 {
			k.lose--
		}
		onLose := k.onLose
		k.mu.Unlock()
		if _, err := k.KeyValue.Update(ctx, key, value, last); err != nil {
			return 0, err
		}
		k.mu.Lock()
		k.lost++
		k.mu.Unlock()
		if onLose != nil {
			onLose()
		}
		<-ctx.Done()
		return 0, ctx.Err()
	}
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

// answersLost is how many renewals went in without their answer reaching the caller.
func (k *silentKV) answersLost() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lost
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
	if e, err := kv.Get(t.Context(), "run.run_1"); err != nil || string(e.Value()) != l.holder || LockNode(e.Value()) != "node-a" {
		t.Fatalf("the lock's key: %v, %v; want node-a's", e, err)
	}
}

// A renewal that went in but whose answer came after its deadline is not a lost lock either: the key is at a revision
// the worker does not know, but it is still this taking's, and the next renewal writes it at its own revision. Given
// up there, the run's driver was stopped and the run driven again although nobody else could have taken it.
func TestALockOutlivesARenewalWhoseAnswerIsLost(t *testing.T) {
	t.Parallel()
	kv, silent := lockBucket(t)
	silent.lose = 1
	l, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	defer l.release()
	waitUntil(t, "two renewals after the one whose answer was lost, or the lock given up", func() bool {
		_, renewed := silent.counts()
		return l.ctx.Err() != nil || (silent.answersLost() == 1 && renewed >= 2)
	})
	if l.ctx.Err() != nil {
		t.Fatal("the lock was given up after a renewal whose answer was lost, though the key was still its own")
	}
	if e, err := kv.Get(t.Context(), "run.run_1"); err != nil || string(e.Value()) != l.holder {
		t.Fatalf("the lock's key: %v, %v; want this taking's, %s", e, err, l.holder)
	}
}

// Two takings of a run's lock by one node are told apart: a driver whose lock was lost (the key expired while its
// renewal's answer was lost) and the node's next driver of the run, which took the key since. The first driver's next
// renewal finds the key at another revision; it gives the lock up rather than renew the second's key as its own, and
// the second keeps it. With the node's name alone in the key, both would renew it and drive the run at once.
func TestALockLostAndTakenAgainByItsNodeIsNotReclaimed(t *testing.T) {
	t.Parallel()
	kv, silent := lockBucket(t)
	second := &silentKV{KeyValue: kv}
	var (
		l2   *lock
		err2 error
	)
	silent.lose = 1
	silent.onLose = func() {
		// The key is gone (expired) before the first driver hears of its renewal, and the node takes the run again.
		if err := kv.Delete(t.Context(), "run.run_1"); err != nil {
			err2 = err
			return
		}
		var ok bool
		if l2, ok, err2 = tryLock(t.Context(), second, "run_1", "node-a", lockTTL); err2 == nil && !ok {
			err2 = errors.New("the second taking found the key held")
		}
	}
	l1, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	defer l1.release()
	waitUntil(t, "the first taking gives the lock up", func() bool { return l1.ctx.Err() != nil })
	// onLose ran before the first taking's renewal returned, and so before it gave the lock up.
	if err2 != nil {
		t.Fatal(err2)
	}
	defer l2.release()
	waitUntil(t, "a renewal of the second taking", func() bool {
		_, renewed := second.counts()
		return l2.ctx.Err() != nil || renewed >= 1
	})
	if l2.ctx.Err() != nil {
		t.Fatal("the second taking lost the lock: the first took its key")
	}
	if e, err := kv.Get(t.Context(), "run.run_1"); err != nil || string(e.Value()) != l2.holder {
		t.Fatalf("the lock's key: %v, %v; want the second taking's, %s", e, err, l2.holder)
	}
	if l1.holder == l2.holder || LockNode([]byte(l1.holder)) != "node-a" || LockNode([]byte(l2.holder)) != "node-a" {
		t.Fatalf("the takings' holders %q and %q: want two, each naming node-a", l1.holder, l2.holder)
	}
}

// A lock let go of while its last renewal's answer was lost is deleted all the same: the key is this taking's at a
// revision it does not know. Deleted at the revision it knew only, the key stayed until it expired, and the worker
// looking at the run again (or another) could not take it for a whole TTL.
func TestALockReleasedAfterALostAnswerIsDeleted(t *testing.T) {
	t.Parallel()
	kv, silent := lockBucket(t)
	locked := make(chan *lock, 1)
	released := make(chan struct{})
	silent.lose = 1
	silent.onLose = func() {
		// The driver lets go while this renewal's answer is on its way; the lock hands back the revision it knows.
		l := <-locked
		go func() {
			defer close(released)
			l.release()
		}()
	}
	l, ok, err := tryLock(t.Context(), silent, "run_1", "node-a", lockTTL)
	if err != nil || !ok {
		t.Fatalf("tryLock = %v, %v", ok, err)
	}
	locked <- l
	select {
	case <-released:
	case <-time.After(20 * time.Second):
		t.Fatal("the lock not released within 20s")
	}
	if silent.answersLost() != 1 {
		t.Fatalf("%d renewals went in without an answer; want the release to follow one", silent.answersLost())
	}
	other, ok, err := tryLock(t.Context(), kv, "run_1", "node-b", lockTTL)
	if err != nil || !ok {
		e, gerr := kv.Get(t.Context(), "run.run_1")
		t.Fatalf("another worker's tryLock after the release = %v, %v; the key: %v, %v", ok, err, e, gerr)
	}
	other.release()
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
