package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

func TestMemoryLimitIsHalfOfTheCgroupsOrTheMachines(t *testing.T) {
	meminfo := "MemTotal:       24731708 kB\nMemFree:        22756492 kB\n"
	for _, c := range []struct {
		name, cgroup, meminfo string
		want                  int64
	}{
		{"cgroup limit", "2147483648\n", meminfo, 1 << 30},
		{"cgroup without a limit", "max\n", meminfo, 24731708 * 1024 / 2},
		{"no cgroup file", "", meminfo, 24731708 * 1024 / 2},
		{"nothing known", "", "", 0},
		{"meminfo in another unit", "", "MemTotal: 24 GB\n", 0},
	} {
		if got := memoryLimit(c.cgroup, c.meminfo); got != c.want {
			t.Errorf("%s: memoryLimit = %d, want %d", c.name, got, c.want)
		}
	}
}

// A node is busy while it allocates fast, and comes to rest (Go's default GOGC, its heap handed back once) only after
// quietWindows quiet windows in a row: a pause between bursts does not shrink the heap.
func TestGCGovernorRestsAfterQuietWindowsOnly(t *testing.T) {
	const quiet, busy = 0.8e6, 50e6 // bytes a second: an idle node's, and a working one's
	var g gcGovernor
	step := func(rate float64, wantPercent int, wantRest bool) {
		t.Helper()
		if p, rest := g.observe(rate); p != wantPercent || rest != wantRest {
			t.Fatalf("observe(%.0f) = %d, %v; want %d, %v", rate, p, rest, wantPercent, wantRest)
		}
	}
	step(busy, busyGCPercent, false) // the start allocates fast
	for range quietWindows - 1 {
		step(quiet, busyGCPercent, false)
	}
	step(busy, busyGCPercent, false) // work again before the node came to rest: still busy, the count starts over
	for range quietWindows - 1 {
		step(quiet, busyGCPercent, false)
	}
	step(quiet, idleGCPercent, true) // at rest: the heap is handed back once
	step(quiet, idleGCPercent, false)
	step(busyAllocRate, busyGCPercent, false) // work wakes it at once
	for range quietWindows - 1 {
		step(quiet, busyGCPercent, false)
	}
	step(quiet, idleGCPercent, true)
}

// The governor sets the process's GOGC: the idle one while the test allocates little, the busy one while it allocates
// fast. Not parallel: it sets the whole test process's GOGC, and another test allocating beside it would keep the
// governor from ever seeing the process idle.
func TestGCGovernorSetsGOGC(t *testing.T) {
	prev := debug.SetGCPercent(busyGCPercent)
	defer debug.SetGCPercent(prev)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		governGC(ctx, 20*time.Millisecond)
	}()
	defer func() { cancel(); <-done }()
	gogc := func() int64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return int64(s[0].Value.Uint64())
	}
	waitFor := func(want int64, work func()) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); gogc() != want; {
			if time.Now().After(deadline) {
				t.Fatalf("GOGC = %d, want %d", gogc(), want)
			}
			work()
		}
	}
	waitFor(idleGCPercent, func() { time.Sleep(10 * time.Millisecond) })
	var sink [][]byte
	waitFor(busyGCPercent, func() {
		for range 64 {
			sink = append(sink, make([]byte, 64<<10))
		}
		sink = sink[len(sink)/2:]
	})
	_ = sink
}
