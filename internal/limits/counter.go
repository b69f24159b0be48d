package limits

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxAttempts bounds the compare-and-set loop of one round. A failed attempt means another node counted in
// between; with one round in flight per key and node (below), a key contended by every node of a deployment
// still gets through in a few.
const maxAttempts = 64

// counter is a set of bounded counters in one KV bucket, one key per (subject, window). A count is written as a
// KV Update with the revision last seen, so it is exact across nodes: two writes cannot both win the same
// revision.
//
// Within a node, the increments of one key are counted in rounds, one round in flight at a time. The increments
// that arrive while a round is in flight wait and go together in the next: one write adds all of them (as many
// as the limit allows), so a hundred requests of one key at once cost a few writes, not a hundred round trips
// one after the other. Each round is led by one of the callers waiting, in its own goroutine; when it has
// answered its round it hands the lead to the first caller still waiting.
//
// The node remembers the value and revision it last saw. In the common case (this node counted last) a round is
// then a single round trip; when another node counted in between, the update is refused, the key is read again
// and the round retried. A remembered value at the limit is proof enough to refuse without a round trip:
// counters only grow within a window.
type counter struct {
	kv jetstream.KeyValue

	mu     sync.Mutex
	window string
	keys   map[string]*slot // the keys of the current window
}

// slot is one key as this node last saw it, and the increments waiting for its next round.
type slot struct {
	mu      sync.Mutex
	known   bool
	n       uint64
	rev     uint64
	leading bool   // a caller leads the rounds: a new ask waits to be taken into one
	asks    []*ask // waiting for the next round, in arrival order
}

// ask is one increment waiting for its round.
type ask struct {
	max uint64
	// done receives the ask's verdict, or the lead of the next round (which then includes the ask itself).
	done chan verdict
}

type verdict struct {
	n    uint64 // the count after this increment, or the count found when refused
	ok   bool
	err  error
	lead bool // not a verdict: the ask's caller leads the next round
}

func newCounter(kv jetstream.KeyValue) *counter { return &counter{kv: kv, keys: map[string]*slot{}} }

// slot returns the key's slot, forgetting every key of an earlier window.
func (c *counter) slot(window, key string) *slot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window != window {
		c.window, c.keys = window, map[string]*slot{}
	}
	s := c.keys[key]
	if s == nil {
		s = &slot{}
		c.keys[key] = s
	}
	return s
}

// take adds one to key unless it has reached max. It returns the count after the increment and true, or the
// count found and false when the limit was already reached.
func (c *counter) take(ctx context.Context, window, key string, max uint64) (uint64, bool, error) {
	s := c.slot(window, key)
	s.mu.Lock()
	if s.known && s.n >= max {
		n := s.n
		s.mu.Unlock()
		return n, false, nil
	}
	a := &ask{max: max, done: make(chan verdict, 1)}
	s.asks = append(s.asks, a)
	lead := !s.leading
	s.leading = true
	s.mu.Unlock()
	for {
		if lead {
			c.round(ctx, key, s)
		}
		select {
		case v := <-a.done:
			if v.lead {
				lead = true
				continue
			}
			return v.n, v.ok, v.err
		case <-ctx.Done():
			if v, answered := s.leave(a); answered {
				return v.n, v.ok, v.err
			}
			return 0, false, ctx.Err()
		}
	}
}

// leave withdraws an ask whose caller stopped waiting. An ask already taken into a round stays in it: its
// verdict is waited for (a round is bounded) and returned, so that a count made is never reported as not made.
// An ask handed the lead passes it on.
func (s *slot) leave(a *ask) (verdict, bool) {
	s.mu.Lock()
	i := slices.Index(s.asks, a)
	if i < 0 {
		s.mu.Unlock()
		v := <-a.done
		return v, true
	}
	s.asks = slices.Delete(s.asks, i, i+1)
	select {
	case <-a.done: // an ask not yet in a round can only have been handed the lead: pass it on
		s.passLead()
	default:
	}
	s.mu.Unlock()
	return verdict{}, false
}

// passLead hands the lead to the first waiting ask, or ends it when none waits. s.mu is held.
func (s *slot) passLead() {
	if len(s.asks) == 0 {
		s.leading = false
		return
	}
	s.asks[0].done <- verdict{lead: true}
}

// round counts every waiting ask with one write, answers each, and passes the lead on.
func (c *counter) round(ctx context.Context, key string, s *slot) {
	s.mu.Lock()
	batch := s.asks
	s.asks = nil
	known, n, rev := s.known, s.n, s.rev
	s.mu.Unlock()

	// Other callers' asks ride on this round: it is bounded on its own, not by its leader's cancellation.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), countWait)
	w, err := c.add(rctx, key, known, n, rev, batch)
	cancel()

	s.mu.Lock()
	defer s.mu.Unlock()
	s.known, s.n, s.rev = err == nil, w.after, w.rev
	count := w.before
	for i, a := range batch {
		switch {
		case err != nil:
			a.done <- verdict{err: err}
		case w.granted[i]:
			count++
			a.done <- verdict{n: count, ok: true}
		default:
			a.done <- verdict{n: w.after}
		}
	}
	s.passLead()
}

// written is what a round wrote: the count it found, the count it left and its revision, and which asks it
// granted.
type written struct {
	before, after, rev uint64
	granted            []bool
}

// add writes the count plus as many of asks as their limits allow, in order.
func (c *counter) add(ctx context.Context, key string, known bool, n, rev uint64, asks []*ask) (written, error) {
	for attempt := range maxAttempts {
		if attempt > 0 {
			// Another node won the last round: step aside for a moment, randomly, so that the nodes stop
			// colliding.
			if err := sleep(ctx, time.Duration(rand.Int64N(int64(attempt)*int64(200*time.Microsecond)))); err != nil {
				return written{}, err
			}
		}
		found := true
		if !known {
			var err error
			n, rev, found, err = c.read(ctx, key)
			if err != nil {
				return written{}, err
			}
			known = true
		}
		granted, total := grant(n, asks)
		if total == n {
			return written{before: n, after: n, rev: rev, granted: granted}, nil // every ask is over its limit
		}
		var err error
		value := strconv.AppendUint(nil, total, 10)
		if found {
			rev, err = c.kv.Update(ctx, key, value, rev)
		} else {
			rev, err = c.kv.Create(ctx, key, value)
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			known = false // another node counted (or created the key, or it expired): read it again
			continue
		}
		if err != nil {
			return written{}, fmt.Errorf("counter %s: write: %w", key, err)
		}
		return written{before: n, after: total, rev: rev, granted: granted}, nil
	}
	return written{}, fmt.Errorf("counter %s: still contended after %d attempts", key, maxAttempts)
}

// grant decides, in order, which asks fit under their limits from a count of n, and the count after them.
func grant(n uint64, asks []*ask) ([]bool, uint64) {
	granted := make([]bool, len(asks))
	for i, a := range asks {
		if n < a.max {
			granted[i] = true
			n++
		}
	}
	return granted, n
}

// read returns the stored count of key and its revision.
func (c *counter) read(ctx context.Context, key string) (n, rev uint64, found bool, err error) {
	e, err := c.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("counter %s: read: %w", key, err)
	}
	n, err = strconv.ParseUint(string(e.Value()), 10, 64)
	if err != nil {
		return 0, 0, false, fmt.Errorf("counter %s: value %q is not a count", key, e.Value())
	}
	return n, e.Revision(), true, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
