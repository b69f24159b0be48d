// Package livejoin joins the pieces of a streamed answer that come close together before they go out live. A model
// streams a token or a few words at a time, and each piece a live subject carries is a message to every subscriber
// and an event or frame to every client watching; a piece that comes within Every of the last one sent waits,
// joined with what follows, for at most that long.
package livejoin

import (
	"strings"
	"sync"
	"time"
)

// Every is the least time between two pieces sent.
const Every = 25 * time.Millisecond

// Joiner passes pieces of text on to send. The first goes at once; later ones are joined until Every has passed
// since the last sent, and a timer sends what waits when nothing follows. send is called with the joiner's lock
// held, so calls to it never overlap. The caller flushes before it records the whole answer, so that no piece
// follows it.
type Joiner struct {
	send func(text string)

	mu      sync.Mutex
	waiting strings.Builder
	last    time.Time
	timer   *time.Timer
}

// New returns a joiner that sends through send.
func New(send func(text string)) *Joiner { return &Joiner{send: send} }

// Write passes a piece on, or keeps it to join the next.
func (j *Joiner) Write(text string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.waiting.WriteString(text)
	if wait := Every - time.Since(j.last); wait > 0 {
		if j.timer == nil {
			j.timer = time.AfterFunc(wait, j.Flush)
		}
		return
	}
	j.sendLocked()
}

// Flush sends what waits. A nil joiner (an answer nobody sees come) has nothing to send.
func (j *Joiner) Flush() {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.timer != nil {
		j.timer.Stop()
		j.timer = nil
	}
	j.sendLocked()
}

func (j *Joiner) sendLocked() {
	if j.waiting.Len() == 0 {
		return
	}
	j.send(j.waiting.String())
	j.waiting.Reset()
	j.last = time.Now()
}
