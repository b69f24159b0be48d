package platform

import (
	"log/slog"
	"runtime"
	"time"

	"github.com/contrailhq/contrail/internal/procmem"
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
	if r, err := procmem.Of(0); err == nil {
		s.attrs = append(s.attrs, slog.Float64("begin_rss_mib", r.RSS/1024), slog.Float64("begin_anon_mib", r.Anon/1024),
			slog.Float64("begin_file_mib", r.File/1024))
	}
	return s
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
