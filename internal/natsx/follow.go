package natsx

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// followOpen bounds the opening of one FollowKey reader: during an election the request is not answered at all,
// and the next attempt, a moment later, may reach the new leader.
const followOpen = 2 * time.Second

// FollowKey calls fn with the latest value of one key of a KV bucket, then with each value put after it, until ctx
// ends; deletes and purges are skipped. It reads the bucket's stream with an OrderedReader and opens a new one
// from the last value seen whenever the reader ends (its server died, a gap, missed heartbeats).
//
// It is what a KV watch of the key would be, but the library's watch recreates its consumer itself, with pauses
// growing to 10 s while the stream elects a leader: after a kill -9 of the bucket's leader a node's watch of a
// projection's checkpoint came back 14 s after the other node had applied again, and every read on the node that
// waited to see its own write waited as long.
func FollowKey(ctx context.Context, js jetstream.JetStream, bucket, key string, fn func(value []byte)) {
	cfg := OrderedConfig{Stream: "KV_" + bucket, Filters: []string{"$KV." + bucket + "." + key},
		LastPerSubject: true, InactiveThreshold: 10 * time.Second, MaxMessages: 16}
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(min(50*time.Millisecond<<min(attempt-1, 4), 500*time.Millisecond)):
			}
		}
		octx, cancel := context.WithTimeout(ctx, followOpen)
		r, err := OpenOrdered(octx, js, cfg)
		cancel()
		if err != nil {
			continue
		}
		stop := context.AfterFunc(ctx, r.Stop)
		for {
			m, err := r.Next()
			if err != nil {
				break
			}
			attempt = 0
			if md, err := m.Metadata(); err == nil {
				cfg.After = md.Sequence.Stream
			}
			if m.Headers().Get("KV-Operation") != "" { // DEL or PURGE
				continue
			}
			fn(m.Data())
		}
		stop()
		r.Delete()
	}
}
