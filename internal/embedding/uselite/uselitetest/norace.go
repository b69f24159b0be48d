//go:build !race

package uselitetest

// Race reports whether the race detector is on; see race.go.
const Race = false
