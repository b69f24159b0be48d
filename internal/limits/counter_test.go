package limits

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/internal/waittest"
)

func testBucket(t *testing.T) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(natstest.Start(t).Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: "counts", History: 64})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// holdRound makes the test the leader of key's rounds, so that every take waits, as it would behind a round in
// flight; release hands the lead to the first of them.
func holdRound(c *counter, key string) (waiting func() int, release func()) {
	s := c.slot("w", key)
	s.mu.Lock()
	s.leading = true
	s.mu.Unlock()
	waiting = func() int {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.asks)
	}
	release = func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.passLead()
	}
	return waiting, release
}

func stored(t *testing.T, kv jetstream.KeyValue, key string) string {
	t.Helper()
	e, err := kv.Get(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return string(e.Value())
}

// TestIncrementsThatWaitGoInOneWrite: 30 increments of one key that wait behind a round are counted by one
// write, and exactly the limit's worth of them are granted.
func TestIncrementsThatWaitGoInOneWrite(t *testing.T) {
	kv := testBucket(t)
	c := newCounter(kv)
	if _, err := kv.Create(t.Context(), "k", []byte("5")); err != nil {
		t.Fatal(err)
	}
	waiting, release := holdRound(c, "k")
	type result struct {
		n   uint64
		ok  bool
		err error
	}
	results := make(chan result, 30)
	var wg sync.WaitGroup
	for range 30 {
		wg.Go(func() {
			n, ok, err := c.take(t.Context(), "w", "k", 25)
			results <- result{n, ok, err}
		})
	}
	waittest.Until(t, "30 waiting increments", func() bool { return waiting() == 30 })
	release()
	wg.Wait()
	close(results)

	granted, refused := map[uint64]bool{}, 0
	for r := range results {
		switch {
		case r.err != nil:
			t.Fatalf("take: %v", r.err)
		case r.ok:
			if granted[r.n] {
				t.Errorf("two increments both made the count %d", r.n)
			}
			granted[r.n] = true
		default:
			refused++
			if r.n != 25 {
				t.Errorf("a refused increment saw the count %d, want 25", r.n)
			}
		}
	}
	if len(granted) != 20 || refused != 10 {
		t.Errorf("granted %d and refused %d, want 20 (from 5 to the limit of 25) and 10", len(granted), refused)
	}
	for n := uint64(6); n <= 25; n++ {
		if !granted[n] {
			t.Errorf("no increment made the count %d", n)
		}
	}
	if got := stored(t, kv, "k"); got != "25" {
		t.Errorf("stored count %q, want 25", got)
	}
	hist, err := kv.History(t.Context(), "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 2 {
		t.Errorf("the key was written %d times after its creation, want once for all 30 increments", len(hist)-1)
	}
}

// TestAnIncrementGivenUpBeforeItsRoundIsNotCounted: a caller whose context ends while it waits leaves the queue
// uncounted, and one handed the lead as it gives up passes the lead on; the others are still counted.
func TestAnIncrementGivenUpBeforeItsRoundIsNotCounted(t *testing.T) {
	kv := testBucket(t)
	c := newCounter(kv)
	waiting, release := holdRound(c, "k")

	// first stands for a caller that is first in line and gives up just as the lead reaches it.
	s := c.slot("w", "k")
	first := &ask{max: 100, done: make(chan verdict, 1)}
	s.mu.Lock()
	s.asks = append(s.asks, first)
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error, 1)
	go func() {
		_, _, err := c.take(ctx, "w", "k", 100)
		gaveUp <- err
	}()
	waittest.Until(t, "the second increment to wait", func() bool { return waiting() == 2 })
	done := make(chan error, 3)
	for range 3 {
		go func() {
			_, ok, err := c.take(t.Context(), "w", "k", 100)
			if err == nil && !ok {
				err = errors.New("refused under the limit")
			}
			done <- err
		}()
	}
	waittest.Until(t, "five waiting increments", func() bool { return waiting() == 5 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("the increment given up returned %v, want context.Canceled", err)
	}
	if n := waiting(); n != 4 {
		t.Fatalf("%d increments wait after one gave up, want 4", n)
	}
	release() // the lead goes to first ...
	if _, answered := s.leave(first); answered {
		t.Fatal("an increment that left before its round got a verdict")
	}
	// ... which passed it on: the three others are counted without it.
	for range 3 {
		if err := <-done; err != nil {
			t.Fatalf("take: %v", err)
		}
	}
	if got := stored(t, kv, "k"); got != "3" {
		t.Errorf("stored count %q, want 3: the increments given up are not counted", got)
	}
}
