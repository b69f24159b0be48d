package docindex_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/chunk/chunktest"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/embeddingtest"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
)

// corpora are the two shapes of 10,000 chunks measured: Julep-like snippets of about 60 words, and chunks of
// OpenAI's auto size (800 tokens, about 600 words). Ten chunks make a document.
var corpora = []struct {
	name  string
	words int
}{{"snippets", 60}, {"chunks800", 600}}

const (
	corpusChunks = 10000
	chunksPerDoc = 10
)

// storedCorpus is what a restart reads back from storage: documents whose chunks carry their vectors (random unit
// vectors of 512 dimensions: what a search costs does not depend on what the vectors say).
func storedCorpus(words int) []docindex.Doc {
	rng := rand.New(rand.NewPCG(7, 8))
	docs := make([]docindex.Doc, 0, corpusChunks/chunksPerDoc)
	for d := 0; d < corpusChunks/chunksPerDoc; d++ {
		doc := docindex.Doc{ID: fmt.Sprintf("doc%05d", d), Attributes: map[string]any{"n": d, "kind": []string{"a", "b", "c"}[d%3]}}
		for i := 0; i < chunksPerDoc; i++ {
			text := chunktest.Prose(uint64(d*chunksPerDoc+i), words)
			doc.Chunks = append(doc.Chunks, docindex.Chunk{Chunk: chunk.Chunk{Index: i, Text: text, End: int64(len(text))},
				Vector: embeddingtest.RandomUnit(rng, embedding.DefaultLocalDim)})
		}
		docs = append(docs, doc)
	}
	return docs
}

func build(b *testing.B, emb embedding.Embedder, docs []docindex.Doc) *docindex.Index {
	ix, err := docindex.New(emb, docindex.Options{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ix.Close() })
	if _, err := ix.AddMany(context.Background(), "c", docs); err != nil {
		b.Fatal(err)
	}
	return ix
}

// BenchmarkRebuild10k rebuilds a collection of 10,000 chunks from stored chunks and vectors, as a node does at
// start: nothing is embedded; the keyword index analyses every text. It reports the seconds and the heap the index
// holds afterwards.
func BenchmarkRebuild10k(b *testing.B) {
	for _, c := range corpora {
		b.Run(c.name, func(b *testing.B) {
			docs := storedCorpus(c.words)
			emb := embedding.NewLocal(embedding.DefaultLocalDim)
			var heap uint64
			for b.Loop() {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				ix, err := docindex.New(emb, docindex.Options{Dir: b.TempDir()})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := ix.AddMany(context.Background(), "c", docs); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				heap = after.HeapInuse - min(after.HeapInuse, before.HeapInuse)
				if s := ix.Stats("c"); s.Chunks != corpusChunks {
					b.Fatalf("rebuilt %d chunks", s.Chunks)
				}
				b.StopTimer()
				_ = ix.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)/1000, "s/rebuild")
			b.ReportMetric(float64(heap)/(1<<20), "heap-MB")
		})
	}
}

// BenchmarkSearch10k searches a collection of 10,000 chunks in each mode, with the query's vector given (the
// search alone), and with a filter that keeps a third of the documents. It reports p50 and p99.
func BenchmarkSearch10k(b *testing.B) {
	for _, c := range corpora {
		b.Run(c.name, func(b *testing.B) {
			ix := build(b, embedding.NewLocal(embedding.DefaultLocalDim), storedCorpus(c.words))
			rng := rand.New(rand.NewPCG(3, 4))
			kindB := docindex.MetadataFilter(map[string]any{"kind": "b"})
			for _, mode := range []docindex.Mode{docindex.Text, docindex.Vector, docindex.Hybrid} {
				for _, filtered := range []bool{false, true} {
					name := string(mode)
					if filtered {
						name += "-filtered"
					}
					b.Run(name, func(b *testing.B) {
						var took []time.Duration
						for b.Loop() {
							q := docindex.Query{Collections: []string{"c"}, Mode: mode, Limit: 10, Alpha: 0.5, Confidence: -1,
								Text: strings.Join(pick(rng, 4), " "), Vector: embeddingtest.RandomUnit(rng, embedding.DefaultLocalDim)}
							if filtered {
								q.Filter = kindB
							}
							t0 := time.Now()
							hits, err := ix.Search(context.Background(), q)
							took = append(took, time.Since(t0))
							if err != nil || len(hits) == 0 {
								b.Fatalf("%d hits, %v", len(hits), err)
							}
						}
						reportPercentiles(b, took, "search")
					})
				}
			}
		})
	}
}

// pick picks n words of the vocabulary long enough not to be stop words, which match nothing.
func pick(rng *rand.Rand, n int) []string {
	var words []string
	for _, w := range chunktest.Vocabulary {
		if len(w) > 4 {
			words = append(words, w)
		}
	}
	out := make([]string, n)
	for i := range out {
		out[i] = words[rng.IntN(len(words))]
	}
	return out
}

// BenchmarkAddAndFind adds one document (embedded by the index's embedder) to a collection of 10,000 snippets and
// searches for it right away, as a Julep client does after creating a doc. It reports p50 and p99 of the two
// together, with the local embedder and, when its weights are present, use-lite.
func BenchmarkAddAndFind(b *testing.B) {
	withEmbedders(b, func(b *testing.B, emb embedding.Embedder) {
		ix := build(b, emb, storedCorpus(60))
		ctx := context.Background()
		var took []time.Duration
		for i := 0; b.Loop(); i++ {
			marker := fmt.Sprintf("zq%dxv", i)
			text := "The warranty of the " + marker + " espresso machine covers the pump for three years."
			t0 := time.Now()
			if _, err := ix.Add(ctx, "c", textDoc(fmt.Sprintf("new%d", i), nil, text)); err != nil {
				b.Fatal(err)
			}
			hits, err := ix.Search(ctx, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Alpha: 0.5,
				Text: "warranty of the " + marker + " machine", Limit: 3})
			took = append(took, time.Since(t0))
			if err != nil || len(hits) == 0 || !slices.ContainsFunc(hits, func(h docindex.Hit) bool { return h.Chunk.Text == text }) {
				b.Fatalf("the new doc was not found: %v", err)
			}
		}
		reportPercentiles(b, took, "add+find")
	})
}

// withEmbedders runs a benchmark with the local embedder and, when its weights are present, use-lite.
func withEmbedders(b *testing.B, run func(*testing.B, embedding.Embedder)) {
	b.Run("local", func(b *testing.B) { run(b, embedding.NewLocal(embedding.DefaultLocalDim)) })
	b.Run("use-lite", func(b *testing.B) { run(b, uselitetest.Model(b)) })
}

func reportPercentiles(b *testing.B, d []time.Duration, what string) {
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p int) float64 { return float64(s[(len(s)-1)*p/100].Microseconds()) / 1000 }
	b.ReportMetric(at(50), what+"-p50-ms")
	b.ReportMetric(at(99), what+"-p99-ms")
}
