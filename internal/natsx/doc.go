// Package natsx starts the embedded nats-server or connects to an external one, names every stream, subject,
// consumer and bucket Contrail uses, and provisions them idempotently.
//
// It knows nothing of events or read models; the events and projections packages build on the names it gives.
package natsx
