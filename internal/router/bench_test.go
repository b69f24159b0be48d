package router_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/embeddingtest"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/router"
)

// BenchmarkRoute10k routes the routing set's queries through an index of 10,000 agents: the set's 31 agents and
// 9,969 others whose vectors are random unit vectors (what a search costs does not depend on what the vectors say).
// It reports the whole route (embedding the query and searching) and the search alone, p50 and p99.
func BenchmarkRoute10k(b *testing.B) {
	for _, name := range []string{"local", "use-lite"} {
		b.Run(name, func(b *testing.B) {
			var emb embedding.Embedder = embedding.NewLocal(embedding.DefaultLocalDim)
			if name == "use-lite" {
				emb = uselitetest.Model(b)
			}
			set := loadSet(b)
			ix := indexSet(b, emb, set, nil)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(1, 2))
			for i := ix.Len(); i < 10000; i++ {
				if err := ix.UpsertVector(ctx, router.Agent{ID: fmt.Sprintf("agt_%05d", i), Handle: fmt.Sprintf("a%05d", i),
					Published: i%2 == 0, Account: fmt.Sprintf("acct_%d", i%50)}, embeddingtest.RandomUnit(rng, emb.Dim())); err != nil {
					b.Fatal(err)
				}
			}
			var route, search []time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				q := set.Queries[i%len(set.Queries)].Text
				t0 := time.Now()
				vecs, err := emb.Embed(ctx, []string{q})
				if err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := ix.RankVector(ctx, "acct_7", vecs[0], 3); err != nil {
					b.Fatal(err)
				}
				route = append(route, time.Since(t0))
				search = append(search, time.Since(t1))
			}
			b.ReportMetric(float64(pct(route, 50).Microseconds())/1000, "route-p50-ms")
			b.ReportMetric(float64(pct(route, 99).Microseconds())/1000, "route-p99-ms")
			b.ReportMetric(float64(pct(search, 50).Microseconds())/1000, "search-p50-ms")
			b.ReportMetric(float64(pct(search, 99).Microseconds())/1000, "search-p99-ms")
		})
	}
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}
