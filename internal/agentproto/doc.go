// Package agentproto is the platform's side of Fixie's agent HTTP protocol: fetching an agent's metadata
// (GET /, answered in JSON or, by the Python SDK, in YAML), calling a Code Shot agent's funcs (POST /{func}) and
// querying a standalone agent (POST /, answered with one JSON object or a stream of JSON lines). Every call carries
// a bearer token from a TokenSource, is bounded in time and size, retries only what is safe to repeat, and fails
// with an *Error whose Kind says what went wrong in a way a session can show.
//
// The server side (serving an agent, verifying the platform's tokens) is in the agentkit subpackage.
//
// It must not import the event log, the read models or any face; it knows agents only by URL.
package agentproto
