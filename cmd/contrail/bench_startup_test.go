package main

import (
	"testing"
	"time"
)

// The parts of a start are read from the node's own log line, in the order the node logged them.
func TestStartStepsFromTheLogLine(t *testing.T) {
	line := `{"time":"2026-11-28T00:00:00Z","level":"INFO","msg":"startup steps","connect":{"ms":9.5,"heap_mib":0.5},` +
		`"provision":{"ms":55.25,"heap_mib":1.4},"handlers":{"ms":22,"heap_mib":-3.5},"node":"n1"}`
	got := startSteps([]byte(line))
	want := []startStep{
		{name: "connect", took: 9500 * time.Microsecond, heapMiB: 0.5},
		{name: "provision", took: 55250 * time.Microsecond, heapMiB: 1.4},
		{name: "handlers", took: 22 * time.Millisecond, heapMiB: -3.5},
	}
	if len(got) != len(want) {
		t.Fatalf("steps = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("step %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}
