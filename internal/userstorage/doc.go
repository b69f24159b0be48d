// Package userstorage is Fixie's user storage: a small key-value store per (user, agent), which agents use to keep
// state about a user between queries (seed 000), and its HTTP face at /api/userstorage. Values are JSON of up to
// 1 MiB, kept in a NATS KV bucket.
//
// The face is authenticated by httpapi like every other; it also accepts the tokens the platform gives agents,
// limited to the agent each was issued for. It must not import other faces.
package userstorage
