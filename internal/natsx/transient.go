package natsx

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Transient reports whether err is what JetStream answers while a stream elects a leader or a connection moves to
// another server: the same request, sent again a moment later, will be answered.
func Transient(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		// 503 "JetStream system temporarily unavailable" and the like.
		return apiErr.Code == 503
	}
	return errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrConnectionDraining) ||
		// What an asynchronous publish waiting for its answer gets when its connection drops (nats.go fails every
		// pending one at once): the request may or may not have gone in, as with a timeout.
		errors.Is(err, nats.ErrDisconnected)
}

// kvGetAttempt bounds one read of a bucket: a live replica answers in milliseconds, and a request that went to a
// server as it died is never answered.
const kvGetAttempt = 1500 * time.Millisecond

// kvGetWait bounds the retries of a read through a failover (a stream's election takes up to about ten seconds).
const kvGetWait = 15 * time.Second

// noRespondersWait bounds the retries of a read that meets "no responders": a server stopping (SIGTERM) leaves its
// clients' requests with no responder for a moment while its interest moves to the other servers, but a bucket
// that no server serves at all (one being made) should fail fast, for its caller's own retry.
const noRespondersWait = 2 * time.Second

// KVGet reads a key of a bucket, each attempt bounded and sent again while NATS is between leaders or a server
// died with the request, until ctx ends or kvGetWait passes (noRespondersWait for "no responders").
// jetstream.ErrKeyNotFound and other answers return at once.
func KVGet(ctx context.Context, kv jetstream.KeyValue, key string) (jetstream.KeyValueEntry, error) {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, kvGetAttempt)
		e, err := kv.Get(actx, key)
		cancel()
		wait := kvGetWait
		if errors.Is(err, nats.ErrNoResponders) {
			wait = noRespondersWait
		}
		if err == nil || !Transient(err) || ctx.Err() != nil || time.Since(start) > wait {
			return e, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(50*time.Millisecond<<min(attempt, 4), 500*time.Millisecond)):
		}
	}
}
