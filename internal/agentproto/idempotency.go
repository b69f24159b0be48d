package agentproto

import "context"

// IdempotencyHeader carries a func call's idempotency key: the platform sends the same key when it repeats a call
// (after a crash), so that an agent which remembers keys can answer without running the func twice.
const IdempotencyHeader = "Idempotency-Key"

type idempotencyKey struct{}

// WithIdempotencyKey makes the calls made with ctx carry key in the Idempotency-Key header.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKey{}, key)
}

func idempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKey{}).(string)
	return k
}
