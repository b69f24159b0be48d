package chunk_test

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/extract"
)

// englishish writes size bytes of text made of common English words, sentences and paragraphs to w: what
// tokenizes like prose without shipping a corpus.
func englishish(w *bufio.Writer, size int) error {
	words := strings.Fields(`the of and to in is you that it he was for on are as with his they at be this have from
		or one had by word but not what all were we when your can said there use an each which she do how their if
		will up other about out many then them these so some her would make like him into time has look two more
		write go see number no way could people my than first water been call who oil its now find long down day did
		get come made may part search index vector store file chunk token embedding query result score citation
		assistant thread message run step password login account billing invoice refund shipping order delivery`)
	r := rand.New(rand.NewPCG(1, 2))
	n := 0
	for n < size {
		sentence := 5 + r.IntN(15)
		for i := 0; i < sentence; i++ {
			word := words[r.IntN(len(words))]
			if i == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			k, _ := w.WriteString(word)
			n += k
			sep := " "
			if i == sentence-1 {
				sep = ". "
				if r.IntN(6) == 0 {
					sep = ".\n\n"
				}
			}
			k, _ = w.WriteString(sep)
			n += k
		}
	}
	return w.Flush()
}

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
	if err := englishish(bufio.NewWriter(f), size); err != nil {
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
