package limits

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxAttempts bounds the compare-and-set loop of one increment. A failed attempt means another node counted in
// between; with one attempt in flight per key and node (below), a key contended by every node of a deployment
// still gets through in a few.
const maxAttempts = 64

// counter is a set of bounded counters in one KV bucket, one key per (subject, window). An increment is a KV
// Update with the revision last seen, so it is exact across nodes: two increments cannot both win the same
// revision.
//
// Within a node, increments of one key take turns, so that the node's own requests never contend with each
// other, and the node remembers the value and revision it last saw. In the common case (this node counted last)
// an increment is then a single round trip; when another node counted in between, the update is refused, the key
// is read again and the increment retried. A remembered value at the limit is proof enough to refuse without a
// round trip: counters only grow within a window.
type counter struct {
	kv jetstream.KeyValue

	mu     sync.Mutex
	window string
	keys   map[string]*slot // the keys of the current window
}

// slot is one key as this node last saw it. Its lock is held for the whole of an increment.
type slot struct {
	mu    sync.Mutex
	known bool
	n     uint64
	rev   uint64
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
	defer s.mu.Unlock()
	if s.known && s.n >= max {
		return s.n, false, nil
	}
	for attempt := range maxAttempts {
		if attempt > 0 {
			// Another node won the last round: step aside for a moment, randomly, so that the nodes stop
			// colliding.
			if err := sleep(ctx, time.Duration(rand.Int64N(int64(attempt)*int64(200*time.Microsecond)))); err != nil {
				return 0, false, err
			}
		}
		if !s.known {
			n, rev, found, err := c.read(ctx, key)
			if err != nil {
				return 0, false, err
			}
			if !found {
				rev, err := c.kv.Create(ctx, key, []byte("1"))
				if errors.Is(err, jetstream.ErrKeyExists) {
					continue // another node created it first
				}
				if err != nil {
					return 0, false, fmt.Errorf("counter %s: create: %w", key, err)
				}
				s.known, s.n, s.rev = true, 1, rev
				return 1, true, nil
			}
			s.known, s.n, s.rev = true, n, rev
		}
		if s.n >= max {
			return s.n, false, nil
		}
		rev, err := c.kv.Update(ctx, key, strconv.AppendUint(nil, s.n+1, 10), s.rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			s.known = false // another node counted (or the key expired): read it again
			continue
		}
		if err != nil {
			s.known = false
			return 0, false, fmt.Errorf("counter %s: update: %w", key, err)
		}
		s.n, s.rev = s.n+1, rev
		return s.n, true, nil
	}
	return 0, false, fmt.Errorf("counter %s: still contended after %d attempts", key, maxAttempts)
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
