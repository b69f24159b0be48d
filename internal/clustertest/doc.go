// Package clustertest runs the topology of docker-compose.yml as real processes on loopback, for tests of what
// happens to Contrail on a real NATS cluster: three nats-server processes built from the version go.mod requires,
// routed into one JetStream cluster, and two `contrail serve` nodes built from ./cmd/contrail pointing at all three.
// A test can kill -9, SIGTERM and restart any of them, find the server leading the EVENTS stream and the node holding
// the run sweeper's lease, read each node's readiness and projections, read the log, and sees every process's log
// when it fails.
//
// Nothing in it fakes NATS or HTTP. It imports events (to read the log's envelopes), natsx (for the names of
// streams and buckets) and auth (to make keys); never the platform itself: the nodes under test are other processes.
package clustertest
