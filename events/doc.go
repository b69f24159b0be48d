// Package events is the log's vocabulary: the envelope every event travels in, the typed events of each aggregate
// (a file per aggregate), the registry that maps a type name to its Go struct, and the codec that writes and reads
// an envelope's JSON.
//
// An event's JSON is a contract with every log ever written: add fields, never rename or repurpose one.
//
// It holds no store and imports no NATS: the domain imports this package alone, so `go list -deps ./domain/...`
// shows no NATS. The store on JetStream is package eventstore.
package events
