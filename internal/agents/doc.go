// Package agents is the agent registry's core and the dispatch path: the agent record (folded from the log), the
// built-in agents every account has without registering them, and the Agent interface the session runner calls to
// get a reply. A Registry resolves an agent ID to something that can answer: a built-in, or an agent of a kind whose
// dispatcher was plugged in (Code Shot and standalone HTTP agents add theirs with Registry.Handle).
//
// It imports events (to fold agent records), auth, errs and llm; never a face, a handler or the read models.
package agents
