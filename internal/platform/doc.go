// Package platform assembles a Contrail node: NATS (embedded or external), the provisioned streams and buckets,
// the event store, the projections, the command side, the handlers and the HTTP faces. `contrail serve` and the
// end-to-end tests start the same Platform, so tests exercise exactly what runs.
package platform
