package natsx

import (
	"context"
	"fmt"
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
func Registered(ctx context.Context, nc *nats.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, registerWait)
	defer cancel()
	if err := nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("register a subscription with the server: %w", err)
	}
	return nil
}
