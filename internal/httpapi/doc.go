// Package httpapi is the one HTTP port: chi with request IDs, logs (never a header, never a query string),
// recovery and metrics; the open endpoints (/healthz, /readyz, /.well-known/jwks.json) and open pages (the web
// console at /); /metrics for admin keys; and the faces, each mounted at its prefix behind Admit —
// authentication (API key or agent token), agent tokens only into faces that accept them (AgentFace), the rate
// limit — and answering errors in its own shape. Faces may nest (/api and /api/userstorage): the longest prefix
// takes a request. Faces call commands for writes and read models for reads; they never append events.
package httpapi
