// Package domain is the root of Contrail's aggregates, one package each (domain/session, domain/thread, ...). An
// aggregate's package holds its state, the one fold of its events (Apply), the decisions commands and handlers make
// on it (pure functions from state and input to events, or an error a user can read), and the one mapping from its
// events to what faces show (a chat message, a run's status).
//
// These packages are pure: they import events and errs and nothing that does I/O. Commands (internal/commands) load
// an aggregate through an eventstore.Repo, decide with these functions and append; projections, handlers, the faces and
// replay use the same folds and mappings, so a field added to one is seen by all.
package domain
