package main

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the garbage collector's GOGC of a node that sets none. A node's live heap is small (76-81 MB after
// each collection under `contrail bench sessions` at 100 sessions, by GODEBUG=gctrace=1) and turned over fast:
// every event is decoded, folded and encoded again, so at Go's default of 100 the collector ran every 0.2 s and took
// 11-14% of the CPU (background marking and assists). 400 lets the heap grow to five times the live data between
// collections.
const gcPercent = 400

// memoryShare is the share of the memory a node may use that its heap is kept under: past it the collector runs
// more often than gcPercent says, so that a node with a large live heap (vector indexes, many sessions) does not
// grow to five times it.
const memoryShare = 0.5

// tuneGC sets the collector for a long-running node (serve, bench), unless the operator set GOGC or GOMEMLIMIT,
// which Go reads itself and which then win.
func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if limit := memoryLimit(readFile("/sys/fs/cgroup/memory.max"), readFile("/proc/meminfo")); limit > 0 {
			debug.SetMemoryLimit(limit)
		}
	}
}

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
