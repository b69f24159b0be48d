package uselite_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding/uselite"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/procmem"
)

// The benchmarks measure what testdata/reference/bench.js measures for the JavaScript runtime, on the same
// sentences; `make bench-embeddings` runs both.

func benchSentence(b *testing.B) string {
	var bench struct{ Single string }
	raw, err := os.ReadFile(filepath.Join("testdata", "reference", "bench.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, &bench); err != nil {
		b.Fatal(err)
	}
	return bench.Single
}

func routingQueries(b *testing.B) []string {
	var set struct{ Queries []struct{ Text string } }
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "routing", "routing.json"))
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		b.Fatal(err)
	}
	var texts []string
	for _, q := range set.Queries {
		texts = append(texts, q.Text)
	}
	return texts
}

// BenchmarkLoad measures loading the model, and reports the memory it holds: the Go heap it adds, and the
// process's resident memory with it loaded (garbage from loading returned to the OS) and without it.
func BenchmarkLoad(b *testing.B) {
	dir := uselitetest.Dir(b)
	var before, after runtime.MemStats
	debug.FreeOSMemory()
	runtime.ReadMemStats(&before)
	rssBefore, _ := procmem.Of(0)
	var m *uselite.Model
	for b.Loop() {
		var err error
		if m, err = uselite.Load(dir); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	debug.FreeOSMemory()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MiB")
	if rss, err := procmem.Of(0); err == nil {
		b.ReportMetric(rss.RSS/1024, "rss-MiB")
		b.ReportMetric(rssBefore.RSS/1024, "rss-before-MiB")
	}
	runtime.KeepAlive(m)
}

// BenchmarkEmbedSentence is the latency of one 20-word sentence on one goroutine.
func BenchmarkEmbedSentence(b *testing.B) {
	m, err := uselite.Load(uselitetest.Dir(b), uselite.WithWorkers(1))
	if err != nil {
		b.Fatal(err)
	}
	text := []string{benchSentence(b)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := m.Embed(context.Background(), text); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedBatch is the throughput over the routing set's queries in one call, on every core
// (GOMAXPROCS workers) and on one.
func BenchmarkEmbedBatch(b *testing.B) {
	texts := routingQueries(b)
	for _, bc := range []struct {
		name    string
		workers int
	}{{"all-cores", runtime.GOMAXPROCS(0)}, {"one-core", 1}} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := uselite.Load(uselitetest.Dir(b), uselite.WithWorkers(bc.workers))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := m.Embed(context.Background(), texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "sentences/s")
		})
	}
}

func BenchmarkTokenize(b *testing.B) {
	tok, err := uselite.LoadTokenizer(filepath.Join(uselitetest.Dir(b), "vocab.json"))
	if err != nil {
		b.Fatal(err)
	}
	text := benchSentence(b)
	for b.Loop() {
		tok.Encode(text)
	}
}
