// Package ids checks the identifiers that come from outside (URL parameters, request fields, GraphQL arguments)
// before they name anything inside: a NATS subject token, a KV key, an object name. Every face calls it first, so
// that `*`, `>`, `.`, a space, a NUL or a 4 kB string is a 400 naming the parameter, never a wildcard read of
// other accounts' events or a subject so long that the server drops the connection.
//
// Object IDs (Check) are what the platform hands out: a kind's prefix and then letters, digits, '_' and '-', at
// most MaxLen bytes. Names a client chooses and the platform only compares or hashes (agent handles, agent
// references, storage keys) are checked by CheckName: bounded, valid UTF-8, no control characters.
//
// It imports errs and natsx (whose ValidToken is the subject-token rule) and nothing else of Contrail's.
package ids
