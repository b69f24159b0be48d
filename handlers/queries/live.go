package queries

import (
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/internal/agents"
)

// liveEvery is the least time between two pieces of one reply on the session's live subject. A model streams a
// token or a few words at a time, and each piece the subject carries is a message to every subscriber and a
// websocket frame to every client; what comes sooner waits, joined with what follows, for at most this long.
const liveEvery = 25 * time.Millisecond

// liveStream passes a streamed answer's pieces on to the session's live subject. The first piece goes at once;
// later ones are joined until liveEvery has passed since the last sent. Indexes count the pieces sent, so a
// client sees them in order with none missing. Flush sends what waits; the caller flushes before it records the
// answer, so that no piece follows the reply.
type liveStream struct {
	publish func(text string, index int)

	mu      sync.Mutex
	waiting strings.Builder
	index   int
	last    time.Time
	timer   *time.Timer
}

// live returns the stream of one path's answer to the session's live subject.
func (h *Handlers) live(snap snapshot) *liveStream {
	subject := h.cfg.Names.LiveSubject(session.Aggregate, snap.session)
	return &liveStream{publish: func(text string, index int) {
		b, err := json.Marshal(agents.LiveDelta{Type: "delta", MessageID: snap.query.ReplyID, InReplyTo: snap.query.MessageID,
			Index: index, Text: text})
		if err != nil {
			return
		}
		if err := h.cfg.NC.Publish(subject, b); err != nil {
			h.cfg.Logger.Debug("publish delta", "subject", subject, "err", err)
		}
	}}
}

// Write passes a piece on, or keeps it to join the next.
func (l *liveStream) Write(text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waiting.WriteString(text)
	if wait := liveEvery - time.Since(l.last); wait > 0 {
		if l.timer == nil {
			l.timer = time.AfterFunc(wait, l.Flush)
		}
		return
	}
	l.send()
}

// Flush sends what waits. A nil stream (an answer nobody sees come) has nothing to send.
func (l *liveStream) Flush() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.send()
}

func (l *liveStream) send() {
	if l.waiting.Len() == 0 {
		return
	}
	l.publish(l.waiting.String(), l.index)
	l.index++
	l.waiting.Reset()
	l.last = time.Now()
}
