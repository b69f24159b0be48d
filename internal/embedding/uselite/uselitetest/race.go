//go:build race

package uselitetest

// Race reports whether the race detector is on. It makes the encoder some twenty times slower, so the tests
// that push hundreds of sentences through it check a sample instead: the concurrency they would exercise is the
// same for a few sentences as for all.
const Race = true
