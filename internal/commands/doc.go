// Package commands is the write side: each command loads its aggregate from the log, decides with a pure function,
// and appends the resulting events with the version it loaded (eventstore.Update retries on conflict). Commands check the
// caller's account on every aggregate they touch. They return the stream sequence they appended so that the caller
// can wait for its read model before answering.
//
// Faces call commands for every write; they never append events themselves. This package must not import faces.
package commands
