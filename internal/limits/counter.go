package limits

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// maxAttempts bounds the compare-and-set loop of one increment. Each failed attempt means another request took
// the counter in between, so even a busy key on many nodes gets through in a few.
const maxAttempts = 32

// counter is a set of bounded counters in one KV bucket, one key per (subject, window). An increment is a KV
// Update with the revision last seen, so it is exact across nodes: two increments cannot both win the same
// revision.
//
// The node remembers the value and revision it last saw of each key of the current window. In the common case
// (this node was the last to count) an increment is then a single round trip; when another node counted in
// between, the update is refused, the key is read again and the increment retried. A remembered value at the limit
// is proof enough to refuse without a round trip: counters only grow within a window.
type counter struct {
	kv jetstream.KeyValue

	mu     sync.Mutex
	window string
	seen   map[string]seen
}

type seen struct{ n, rev uint64 }

func newCounter(kv jetstream.KeyValue) *counter { return &counter{kv: kv, seen: map[string]seen{}} }

// remembered returns what the node last saw of key, forgetting every key of an earlier window.
func (c *counter) remembered(window, key string) (seen, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window != window {
		c.window, c.seen = window, map[string]seen{}
	}
	s, ok := c.seen[key]
	return s, ok
}

func (c *counter) remember(window, key string, s seen) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.window == window {
		c.seen[key] = s
	}
}

// take adds one to key unless it has reached max. It returns the count after the increment and true, or the
// count found and false when the limit was already reached.
func (c *counter) take(ctx context.Context, window, key string, max uint64) (uint64, bool, error) {
	s, known := c.remembered(window, key)
	if known && s.n >= max {
		return s.n, false, nil
	}
	for range maxAttempts {
		if !known {
			var found bool
			var err error
			s, found, err = c.read(ctx, key)
			if err != nil {
				return 0, false, err
			}
			if !found {
				rev, err := c.kv.Create(ctx, key, []byte("1"))
				if errors.Is(err, jetstream.ErrKeyExists) {
					continue // another request created it first
				}
				if err != nil {
					return 0, false, fmt.Errorf("counter %s: create: %w", key, err)
				}
				c.remember(window, key, seen{1, rev})
				return 1, true, nil
			}
		}
		if s.n >= max {
			c.remember(window, key, s)
			return s.n, false, nil
		}
		rev, err := c.kv.Update(ctx, key, strconv.AppendUint(nil, s.n+1, 10), s.rev)
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			known = false // someone else counted (or the key expired): read it again
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("counter %s: update: %w", key, err)
		}
		c.remember(window, key, seen{s.n + 1, rev})
		return s.n + 1, true, nil
	}
	return 0, false, fmt.Errorf("counter %s: still contended after %d attempts", key, maxAttempts)
}

// read returns the stored count of key.
func (c *counter) read(ctx context.Context, key string) (seen, bool, error) {
	e, err := c.kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return seen{}, false, nil
	}
	if err != nil {
		return seen{}, false, fmt.Errorf("counter %s: read: %w", key, err)
	}
	n, err := strconv.ParseUint(string(e.Value()), 10, 64)
	if err != nil {
		return seen{}, false, fmt.Errorf("counter %s: value %q is not a count", key, e.Value())
	}
	return seen{n, e.Revision()}, true, nil
}
