package main

import (
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/procmem"
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

// What the node held before its parts is read from the same line, apart from the parts.
func TestResidentBeforeThePartsFromTheLogLine(t *testing.T) {
	logs := `{"msg":"other"}` + "\n" +
		`{"msg":"startup steps","begin_rss_mib":38.5,"begin_anon_mib":6.5,"begin_file_mib":32,"connect":{"ms":9.5,"heap_mib":0.5}}` + "\n"
	out := make(chan startupLog, 2)
	readStartupLog(strings.NewReader(logs), out)
	got := <-out
	if want := (procmem.Resident{RSS: 38.5 * 1024, Anon: 6.5 * 1024, File: 32 * 1024}); got.begin != want {
		t.Errorf("begin = %+v, want %+v", got.begin, want)
	}
	if len(got.steps) != 1 || got.steps[0].name != "connect" {
		t.Errorf("steps = %+v, want connect alone", got.steps)
	}
}
