package main

import (
	"bufio"
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// busyGCPercent is the garbage collector's GOGC of a busy node that sets none. A node's live heap is small (76-81 MB
// after each collection under `contrail bench sessions` at 100 sessions, by GODEBUG=gctrace=1) and turned over fast:
// every event is decoded, folded and encoded again, so at Go's default of 100 the collector ran every 0.2 s and took
// 11-14% of the CPU (background marking and assists). 400 lets the heap grow to five times the live data between
// collections.
const busyGCPercent = 400

// idleGCPercent is the GOGC of a node at rest. An idle node still allocates (lease renewals, pull heartbeats,
// sweeps: about 0.3 MB/s), and its garbage piles up to GOGC percent of the live heap (8-10 MB) before a collection:
// at 400 it grew from 22 to 54 MB resident in the first minute without a request; at Go's default of 100 it held
// 26-30 MB. At 25 it holds 20-23 MB; the collector runs every 5-6 s at 5-7 ms of CPU each time (GODEBUG=gctrace=1):
// what a larger heap would save is nothing while nothing is asked of the node.
const idleGCPercent = 25

// busyAllocRate is the allocation rate, in bytes a second over one window, at or above which a node counts as busy.
const busyAllocRate = 8 << 20

// quietWindows is how many windows in a row under busyAllocRate make a busy node idle (15 s): a pause between two
// bursts of work does not shrink the heap only for it to grow again at once.
const quietWindows = 15

// gcWindow is how often the governor reads the allocation rate: work wakes a resting node's collector within it.
// A read is one runtime/metrics sample, a few microseconds.
const gcWindow = time.Second

// tuneGC sets the collector for a long-running node (serve, bench), unless the operator set GOGC or GOMEMLIMIT,
// which Go reads itself and which then win. Without GOGC it governs the collector until ctx ends: busyGCPercent
// while the node works, idleGCPercent while it rests.
func tuneGC(ctx context.Context) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(busyGCPercent)
		go governGC(ctx, gcWindow)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit := memoryLimit(readFile("/sys/fs/cgroup/memory.max"), readFile("/proc/meminfo")); limit > 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}

// gcGovernor decides, window by window, between the busy and the idle collector. A node starts busy: its start
// allocates fast.
type gcGovernor struct {
	idle  bool
	quiet int // windows in a row under busyAllocRate
}

// observe takes one window's allocation rate (bytes a second) and says the GOGC to set, and whether the node has just
// come to rest (its heap is then worth handing back to the system at once rather than over minutes).
func (g *gcGovernor) observe(rate float64) (percent int, cameToRest bool) {
	if rate >= busyAllocRate {
		g.quiet, g.idle = 0, false
		return busyGCPercent, false
	}
	g.quiet++
	if !g.idle && g.quiet >= quietWindows {
		g.idle = true
		return idleGCPercent, true
	}
	if g.idle {
		return idleGCPercent, false
	}
	return busyGCPercent, false
}

// governGC reads the heap's allocations every window and sets GOGC as gcGovernor says, until ctx ends.
func governGC(ctx context.Context, window time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return sample[0].Value.Uint64()
	}
	var g gcGovernor
	last, at := read(), time.Now()
	tick := time.NewTicker(window)
	defer tick.Stop()
	set := busyGCPercent
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			allocs := read()
			rate := float64(allocs-last) / now.Sub(at).Seconds()
			last, at = allocs, now
			percent, cameToRest := g.observe(rate)
			if percent != set {
				debug.SetGCPercent(percent)
				set = percent
			}
			if cameToRest {
				// Collect and return the freed heap now: the scavenger alone gives it back over minutes.
				debug.FreeOSMemory()
			}
		}
	}
}

// memoryShare is the share of the memory a node may use that its heap is kept under: past it the collector runs
// more often than its GOGC says, so that a node with a large live heap (vector indexes, many sessions) does not
// grow to five times it.
const memoryShare = 0.5

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// memoryLimit is memoryShare of what the node may use: its cgroup's memory.max when it has one, else the
// machine's MemTotal (from /proc/meminfo). It is 0 when neither says.
func memoryLimit(cgroupMax, meminfo string) int64 {
	if n, err := strconv.ParseInt(strings.TrimSpace(cgroupMax), 10, 64); err == nil && n > 0 {
		return int64(float64(n) * memoryShare)
	}
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 3 && f[0] == "MemTotal:" && f[2] == "kB" {
			if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
				return int64(float64(kb*1024) * memoryShare)
			}
		}
	}
	return 0
}
