// Package events holds the log's vocabulary and its store: the envelope every event travels in, the typed events of
// each aggregate (a file per aggregate), the registry that maps a type name to its Go struct, and the Store that
// appends with optimistic concurrency, loads one aggregate, and reads or follows the log from a sequence.
//
// An event's JSON is a contract with every log ever written: add fields, never rename or repurpose one.
//
// This package imports natsx for names and errs for the codes of what it refuses (an invalid reference, an event
// too large, contention past its retries), and nothing of the faces, projections or handlers.
package events
