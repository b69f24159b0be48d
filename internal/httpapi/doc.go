// Package httpapi is the one HTTP port: chi with request IDs, logs, recovery and metrics; the open endpoints
// (/healthz, /readyz, /metrics); and the faces, each mounted at its prefix behind authentication and answering
// errors in its own shape. Faces call commands for writes and read models for reads; they never append events.
package httpapi
