// Package projections folds the log into read models: one KV bucket per model, fed by one projection.
//
// The Runner keeps every projection current. For each projection one node at a time (elected by a lease) reads the
// log in order with an ordered consumer from the projection's checkpoint and folds batches of events into the
// bucket. Every document records the stream sequence of the last event applied to it, and writes are
// compare-and-set on the key's revision, so re-reading events after a crash or a change of leader is a no-op and two
// writers can never lose each other's updates. A projection can be rebuilt from sequence 0 into a fresh bucket that
// is then swapped in.
//
// Faces read documents through Get and List, and wait for their own writes with WaitFor. Folds make no calls out.
//
// This package imports events, natsx and the domain packages whose folds it shares (domain/...); it must not
// import handlers or faces.
package projections
