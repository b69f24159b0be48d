package natsx

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
)

// registerWait bounds Registered: a live connection answers in well under a millisecond.
const registerWait = 2 * time.Second

// Registered returns once the server holds every subscription made so far on nc: a subscription is sent to the
// server in the background, and a message published from another connection before the server reads it is not
// delivered to it. A face that listens for what its own request will cause (the deltas of the reply it asks for, the
// answer to the query it posts) calls it after subscribing and before making the request; under load the server
// read a subscription after the model's first deltas, and the stream waited for text that had gone by.
//
// It is best effort and reports nothing: while the connection moves to another server (its server was killed) the
// round trip fails, the subscription is registered when the connection is back, and a caller must already cope with
// missing what comes in between (from the log). Failing the request for it answered an error to a query that had
// been posted.
func Registered(ctx context.Context, nc *nats.Conn) {
	ctx, cancel := context.WithTimeout(ctx, registerWait)
	defer cancel()
	_ = nc.FlushWithContext(ctx)
}
