package natsx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Progress is a long-lived reader's record of when it last received a message. A Watchdog reads it.
type Progress struct{ last atomic.Int64 }

// Mark records that a message arrived now.
func (p *Progress) Mark() { p.last.Store(time.Now().UnixNano()) }

func (p *Progress) idle() time.Duration { return time.Since(time.Unix(0, p.last.Load())) }

// Watchdog watches a reader of a consumer (an ordered consumer behind a projection or a subscription) and calls
// stalled once when the reader stopped making progress while the log moved on: for `after`, no message arrived
// although the consumer reports messages pending for it, or the consumer could not be asked at all (its server
// died). A reader parked in Next after a server of the cluster was killed can wait for minutes for the client
// library to notice; the caller recreates its consumer instead. It returns when ctx ends or after calling stalled.
//
// It asks the server only while the reader is idle, so a busy reader costs nothing. With a tip (of the stream the
// consumer reads), an idle reader whose consumer last reported nothing pending is not asked again until the stream
// has moved on: pending events can only come with new ones. An idle node's readers (a score of them) otherwise each
// asked their consumer every second, which was most of what an idle node allocated and did.
func Watchdog(ctx context.Context, cons jetstream.Consumer, p *Progress, after time.Duration, tip *Tip, stalled func()) {
	if p.last.Load() == 0 {
		p.Mark()
	}
	tick := time.NewTicker(after / 2)
	defer tick.Stop()
	var failingSince time.Time
	verified, isVerified := uint64(0), false // the tip when the consumer last reported nothing pending
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if p.idle() < after {
			failingSince = time.Time{}
			continue
		}
		ictx, cancel := context.WithTimeout(ctx, after)
		last, tipErr := tip.Last(ictx)
		if tipErr == nil && isVerified && last == verified {
			cancel()
			failingSince = time.Time{}
			continue
		}
		info, err := cons.Info(ictx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			if failingSince.IsZero() {
				failingSince = time.Now()
			}
			if time.Since(failingSince) >= after {
				stalled()
				return
			}
		case info.NumPending > 0 && p.idle() >= after:
			stalled()
			return
		default:
			failingSince = time.Time{}
			// The tip was read before the consumer answered: the consumer had read at least that far.
			verified, isVerified = last, tipErr == nil && info.NumPending == 0
		}
	}
}

// Tip is a stream's last sequence as its server last told it, asked at most once per `every` however many
// watchdogs want it. A nil Tip asks nothing and knows nothing.
type Tip struct {
	js     jetstream.JetStream
	stream string
	every  time.Duration

	mu    sync.Mutex // held while asking: the watchdogs that want the tip meanwhile share the answer
	asked time.Time
	seq   uint64
	err   error
}

// NewTip is the tip of the stream, asked at most once per every.
func NewTip(js jetstream.JetStream, stream string, every time.Duration) *Tip {
	return &Tip{js: js, stream: stream, every: every}
}

// Last returns the stream's last sequence, as last asked.
func (t *Tip) Last(ctx context.Context) (uint64, error) {
	if t == nil {
		return 0, errNoTip
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.asked.IsZero() && time.Since(t.asked) < t.every {
		return t.seq, t.err
	}
	st, err := t.js.Stream(ctx, t.stream)
	t.asked, t.seq, t.err = time.Now(), 0, err
	if err == nil {
		t.seq = st.CachedInfo().State.LastSeq
	}
	return t.seq, t.err
}

var errNoTip = errors.New("no stream tip")
