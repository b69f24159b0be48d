// Package handlers holds the reactors of the log: each reacts to events and appends new ones through the command
// side, idempotently (the IDs of what it appends derive from the cause). They run on the runtime in
// handlers/runtime. Handlers never import the faces.
package handlers
