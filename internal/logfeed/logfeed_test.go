package logfeed

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWaitNeedsTheHistoryAndTheSequence(t *testing.T) {
	c := NewCursor()
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	c.Advance(5)
	if err := c.Wait(short(), 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a wait before the history is read returned %v", err)
	}
	c.SetLoaded(7)
	if c.Next() != 8 || !c.Loaded() {
		t.Fatalf("after the history: next %d, loaded %v", c.Next(), c.Loaded())
	}
	if err := c.Wait(short(), 7); err != nil {
		t.Fatalf("a wait for what was read: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait(context.Background(), 9) }()
	c.Advance(8)
	c.Advance(3) // never backwards
	select {
	case err := <-done:
		t.Fatalf("a wait for 9 returned at 8: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	c.Advance(9)
	if err := <-done; err != nil || c.Next() != 10 {
		t.Fatalf("wait for 9: %v, next %d", err, c.Next())
	}
}
