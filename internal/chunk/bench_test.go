package chunk_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/chunk/chunktest"
	"github.com/contrailhq/contrail/internal/extract"
)

// BenchmarkExtractAndChunk50MB extracts a 50 MB text file and cuts it into auto chunks, throwing each chunk away
// as a caller that embeds and stores them would, and reports the peak of the heap in use beyond what it was
// before (sampled every 5 ms), the bytes allocated in all, and the throughput.
func BenchmarkExtractAndChunk50MB(b *testing.B) {
	const size = 50 << 20
	path := filepath.Join(b.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	if err := chunktest.Write(bw, 1, 0, size); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	if _, err := chunk.Split("warm the tokenizer's vocabulary up", chunk.Auto()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
		n := 0
		w, err := chunk.NewWriter(chunk.Auto(), func(chunk.Chunk) error { n++; return nil })
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := extract.Extract(context.Background(), "big.txt", f, st.Size(), w, extract.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		close(stop)
		wg.Wait()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(peak.Load()-min(peak.Load(), before.HeapInuse))/(1<<20), "peak-heap-MB")
		b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MB")
		b.ReportMetric(float64(st.Size())/(1<<20)/elapsed.Seconds(), "MB/s")
		b.ReportMetric(float64(n), "chunks")
	}
	_ = f.Close()
}
