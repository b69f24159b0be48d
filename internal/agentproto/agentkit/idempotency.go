package agentkit

import (
	"context"
	"sync"
	"time"

	"github.com/contrailhq/contrail/internal/agentproto"
)

// remembered bounds how many answers a server keeps for repeated calls, and for how long.
const (
	rememberedCalls = 10_000
	rememberFor     = 15 * time.Minute
)

// calls remembers func answers by idempotency key: a call repeated with the same key (the platform resuming a query
// after a crash) gets the first answer instead of running the func again. A repeat that arrives while the first
// call still runs waits for it.
type calls struct {
	mu      sync.Mutex
	entries map[string]*call
}

type call struct {
	done  chan struct{}
	msg   agentproto.Message
	err   error
	until time.Time
}

// do runs f once per key (within rememberFor); with no key it just runs f.
func (c *calls) do(ctx context.Context, key string, f func() (agentproto.Message, error)) (agentproto.Message, error) {
	if key == "" {
		return f()
	}
	c.mu.Lock()
	if c.entries == nil {
		c.entries = map[string]*call{}
	}
	now := time.Now()
	if e, ok := c.entries[key]; ok && (e.until.IsZero() || now.Before(e.until)) {
		c.mu.Unlock()
		select {
		case <-e.done:
			return e.msg, e.err
		case <-ctx.Done():
			return agentproto.Message{}, ctx.Err()
		}
	}
	if len(c.entries) >= rememberedCalls {
		for k, e := range c.entries {
			if !e.until.IsZero() && now.After(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= rememberedCalls {
			c.entries = map[string]*call{} // a flood of keys: forget them all rather than grow without bound
		}
	}
	e := &call{done: make(chan struct{})}
	c.entries[key] = e
	c.mu.Unlock()

	e.msg, e.err = f()
	c.mu.Lock()
	if e.err != nil {
		delete(c.entries, key) // a failure is not an answer to remember: a repeat may succeed
	} else {
		e.until = time.Now().Add(rememberFor)
	}
	c.mu.Unlock()
	close(e.done)
	return e.msg, e.err
}
