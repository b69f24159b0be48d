package platform

import (
	"bufio"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// startSteps times the parts of a node's start and what each adds to the heap, for one log line ("startup steps")
// that `contrail bench startup` reads: the start is as fast as its slowest parts, and this says which they are.
type startSteps struct {
	last  time.Time
	heap  uint64
	attrs []any
}

func newStartSteps() *startSteps {
	s := &startSteps{last: time.Now()}
	s.heap = heapAlloc()
	// What the process holds before any part: the pages of the binary that loading and package initialization
	// touched, and what the packages' initialization allocated. No part of the start can take it back.
	if rss, anon, file, ok := resident(); ok {
		s.attrs = append(s.attrs, slog.Float64("begin_rss_mib", rss), slog.Float64("begin_anon_mib", anon),
			slog.Float64("begin_file_mib", file))
	}
	return s
}

// resident reads this process's resident memory and its anonymous and file-backed parts, in MiB, from /proc
// (Linux; false elsewhere).
func resident() (rss, anon, file float64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, 0, false
	}
	defer f.Close()
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, _ := strings.Cut(sc.Text(), ":")
		var into *float64
		switch key {
		case "VmRSS":
			into = &rss
		case "RssAnon":
			into = &anon
		case "RssFile":
			into = &file
		default:
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, 0, 0, false
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return 0, 0, 0, false
		}
		*into = kb / 1024
		found++
	}
	return rss, anon, file, found == 3
}

// done records the part that just ended.
func (s *startSteps) done(name string) {
	now, heap := time.Now(), heapAlloc()
	s.attrs = append(s.attrs, slog.Group(name,
		slog.Float64("ms", float64(now.Sub(s.last).Microseconds())/1000),
		slog.Float64("heap_mib", (float64(heap)-float64(s.heap))/(1<<20))))
	s.last, s.heap = now, heap
}

func (s *startSteps) log(logger *slog.Logger) { logger.Info("startup steps", s.attrs...) }

func heapAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
