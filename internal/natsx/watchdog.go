package natsx

import (
	"context"
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
// It asks the server only while the reader is idle, so a busy reader costs nothing.
func Watchdog(ctx context.Context, cons jetstream.Consumer, p *Progress, after time.Duration, stalled func()) {
	if p.last.Load() == 0 {
		p.Mark()
	}
	tick := time.NewTicker(after / 2)
	defer tick.Stop()
	var failingSince time.Time
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
		}
	}
}
