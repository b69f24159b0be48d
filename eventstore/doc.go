// Package eventstore keeps the log on JetStream: the Store that appends with optimistic concurrency (alone or as
// one atomic batch), loads one aggregate, reads or follows the log from a sequence, and watches an aggregate; the
// Repo that holds aggregates folded in memory and updates them through a decide function; and the history cache.
//
// It imports events for the vocabulary, internal/natsx for names and subjects, internal/errs for the codes of what
// it refuses (an invalid reference, an event too large, contention past its retries) and internal/metrics; nothing
// of the domain, the faces, projections or handlers.
package eventstore
