// Package logfeed holds what an in-memory index fed from the log needs besides its data: how far it has read the
// log, whether it has read the history yet, a wait for it to reach a sequence (so that a read sees a write that
// returned before it, whichever node made it), and the loop that reads the log again after a failure.
package logfeed

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Cursor is how far a feed has read the log.
type Cursor struct {
	mu      sync.Mutex
	seen    uint64        // the stream sequence of the last event applied
	changed chan struct{} // closed and replaced whenever seen moves
	loaded  chan struct{} // closed once the history is read
}

// NewCursor returns a cursor at the log's beginning.
func NewCursor() *Cursor {
	return &Cursor{changed: make(chan struct{}), loaded: make(chan struct{})}
}

// Next is the sequence to read from.
func (c *Cursor) Next() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seen + 1
}

// Loaded reports whether the history has been read.
func (c *Cursor) Loaded() bool {
	select {
	case <-c.loaded:
		return true
	default:
		return false
	}
}

// SetLoaded records that the history has been read, up to last.
func (c *Cursor) SetLoaded(last uint64) {
	c.Advance(last)
	close(c.loaded)
}

// Advance records that the feed has applied the log up to seq.
func (c *Cursor) Advance(seq uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if seq > c.seen {
		c.seen = seq
		close(c.changed)
		c.changed = make(chan struct{})
	}
}

// Wait waits until the history is read and the feed has applied the log up to seq.
func (c *Cursor) Wait(ctx context.Context, seq uint64) error {
	select {
	case <-c.loaded:
	case <-ctx.Done():
		return ctx.Err()
	}
	for {
		c.mu.Lock()
		seen, changed := c.seen, c.changed
		c.mu.Unlock()
		if seen >= seq {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Run calls run until ctx ends, again a second after each time it stops: a feed that lost its connection to the
// log reads on from where its cursor is.
func Run(ctx context.Context, logger *slog.Logger, what string, run func(context.Context) error) {
	for ctx.Err() == nil {
		err := run(ctx)
		if ctx.Err() != nil {
			return
		}
		logger.Warn(what+"'s feed stopped; reading the log again", "err", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}
