// Package julepapi is the /julep face: Julep's REST API (agents and their tools, users, sessions with chat, render
// and history, docs with search, embed) in the shapes Julep's SDKs send and expect, so that a program written for
// Julep runs against Contrail by changing only its base URL (npm @julep/sdk: baseURL <contrail>/julep).
//
// Writes go through the Julep commands (internal/commands), which return what they appended; reads of one object
// read its aggregate, lists read the Julep read models. A chat is appended and its answer awaited on the session's
// subjects (streamed as Julep's SSE from the session's live subject). Julep's SDKs retry a POST up to five times,
// without an idempotency key, on 408, 409, 429 and 5xx: every POST is given a request ID that a retry of it (an
// x-stainless-retry-count, or the same Idempotency-Key) gets back, and the IDs of what it creates derive from it,
// so a retry never makes a second object or a second turn.
//
// It imports commands, the domain, projections (reads), the prompt maker (render); never a handler.
package julepapi
