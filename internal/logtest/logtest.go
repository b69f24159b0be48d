// Package logtest is a log that a program's goroutines write while a test reads it: the writer of a slog handler
// (slog.NewJSONHandler(buf, nil)) for tests that check what a part said, not when. It imports nothing of Contrail,
// so that any package's own tests can use it.
package logtest

import (
	"bytes"
	"strings"
	"sync"
)

// Buffer collects what is written to it. OnWrite, when set before the first write, is called with each write
// (outside the lock, so that it may act on the program, e.g. cancel a context once a line is said).
type Buffer struct {
	OnWrite func(string)

	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf.Write(p)
	b.mu.Unlock()
	if b.OnWrite != nil {
		b.OnWrite(string(p))
	}
	return len(p), nil
}

// String is all that was written.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count counts the lines written that hold every one of parts.
func (b *Buffer) Count(parts ...string) int {
	n := 0
	for _, l := range strings.Split(b.String(), "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(l, p)
		}
		if all {
			n++
		}
	}
	return n
}
