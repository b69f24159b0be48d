// Package runtime runs handlers: each handler is a watermill router handler over a durable JetStream consumer of the
// EVENTS stream, filtered to the event types it reacts to and shared by every node (so work spreads across nodes and
// survives the loss of one). Around every handler: correlation IDs, retry with backoff, panic recovery, metrics,
// ack-wait heartbeats for long work, and a poison queue on <prefix>.dlq.<handler> after the last attempt, from which
// an event can be listed and re-driven.
//
// It imports events, natsx and metrics; never a face.
package runtime
