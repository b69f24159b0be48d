package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/embeddingtest"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/internal/router"
)

type routingSet struct {
	Agents []struct {
		Handle        string   `json:"handle"`
		Description   string   `json:"description"`
		SampleQueries []string `json:"sample_queries"`
	} `json:"agents"`
	Queries []struct {
		Text  string `json:"text"`
		Agent string `json:"agent"`
	} `json:"queries"`
}

func loadSet(t testing.TB) routingSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "embedding", "testdata", "routing", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s routingSet
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func indexSet(t testing.TB, emb embedding.Embedder, set routingSet, kv jetstream.KeyValue) *router.Index {
	t.Helper()
	ix, err := router.New(emb, kv, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range set.Agents {
		if err := ix.Upsert(context.Background(), router.Agent{ID: "agt_" + a.Handle, Handle: a.Handle, Published: true,
			Account: "acct_owner", Description: a.Description, Queries: a.SampleQueries}); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

type quality struct {
	top1, top3        float64
	rightMin, wrongP9 float64
}

func measure(t testing.TB, ix *router.Index, set routingSet) quality {
	t.Helper()
	var top1, top3 int
	var right, wrong []float64
	for _, q := range set.Queries {
		ms, err := ix.Rank(context.Background(), "acct_user", q.Text, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			if m.Handle == q.Agent {
				if i == 0 {
					top1++
				}
				top3++
			}
		}
		if ms[0].Handle == q.Agent {
			right = append(right, ms[0].Score)
		} else {
			wrong = append(wrong, ms[0].Score)
		}
	}
	n := float64(len(set.Queries))
	slices.Sort(right)
	slices.Sort(wrong)
	qq := quality{top1: float64(top1) / n, top3: float64(top3) / n}
	if len(right) > 0 {
		qq.rightMin = right[len(right)/10] // the 10th percentile of right answers' scores
	}
	if len(wrong) > 0 {
		qq.wrongP9 = wrong[len(wrong)*9/10]
	}
	return qq
}

// TestRoutingQuality routes the routing set's paraphrased queries (none reuses a sample's wording) through the index
// and reports top-1 and top-3 accuracy per embedder. The floors are far below what is measured: they catch a broken
// router, not a slightly worse one.
func TestRoutingQuality(t *testing.T) {
	t.Parallel()
	set := loadSet(t)
	if len(set.Agents) < 20 || len(set.Queries) < 100 {
		t.Fatalf("routing set too small: %d agents, %d queries", len(set.Agents), len(set.Queries))
	}
	local := measure(t, indexSet(t, embedding.NewLocal(embedding.DefaultLocalDim), set, nil), set)
	t.Logf("local    (%d agents, %d queries): top-1 %.1f%%, top-3 %.1f%%", len(set.Agents), len(set.Queries), 100*local.top1, 100*local.top3)
	if local.top1 < 0.10 || local.top3 < 0.25 {
		t.Errorf("local routing collapsed: %+v", local)
	}
	if testing.Short() {
		return
	}
	model := uselitetest.Model(t)
	use := measure(t, indexSet(t, model, set, nil), set)
	t.Logf("use-lite (%d agents, %d queries): top-1 %.1f%%, top-3 %.1f%%; score of right answers p10 %.2f, of wrong ones p90 %.2f",
		len(set.Agents), len(set.Queries), 100*use.top1, 100*use.top3, use.rightMin, use.wrongP9)
	if use.top1 < 0.60 || use.top3 < 0.85 {
		t.Errorf("use-lite routing below its floor: %+v", use)
	}
}

func TestAccountsSeeTheirOwnAndPublishedAgentsOnly(t *testing.T) {
	t.Parallel()
	ix, err := router.New(embedding.NewLocal(embedding.DefaultLocalDim), nil, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, a := range []router.Agent{
		{ID: "agt_a", Handle: "weather", Account: "acct_a", Queries: []string{"What is the weather in Paris?"}},
		{ID: "agt_b", Handle: "forecast", Account: "acct_b", Queries: []string{"Weather forecast for London tomorrow"}},
		{ID: "agt_p", Handle: "climate", Account: "acct_c", Published: true, Queries: []string{"Is it raining in Rome?"}},
		{ID: "fixie", Handle: "fixie", Queries: []string{"What can you do?"}},
	} {
		if err := ix.Upsert(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	handles := func(account string) []string {
		ms, err := ix.Rank(ctx, account, "weather in Paris today", 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Handle)
		}
		slices.Sort(out)
		return out
	}
	if got := handles("acct_a"); !slices.Equal(got, []string{"climate", "fixie", "weather"}) {
		t.Errorf("account a sees %v", got)
	}
	if got := handles("acct_b"); !slices.Equal(got, []string{"climate", "fixie", "forecast"}) {
		t.Errorf("account b sees %v", got)
	}
	ix.Remove("agt_p")
	if got := handles("acct_b"); !slices.Equal(got, []string{"fixie", "forecast"}) {
		t.Errorf("after removing the published agent, account b sees %v", got)
	}
}

func TestStoredVectorsSpareTheEmbedderAfterARestart(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	kv, err := srv.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "vectors"})
	if err != nil {
		t.Fatal(err)
	}
	set := loadSet(t)
	first := &embeddingtest.Counting{Embedder: embedding.NewLocal(embedding.DefaultLocalDim)}
	a := indexSet(t, first, set, kv)
	if first.Texts() == 0 {
		t.Fatal("nothing was embedded the first time")
	}
	second := &embeddingtest.Counting{Embedder: embedding.NewLocal(embedding.DefaultLocalDim)}
	b := indexSet(t, second, set, kv)
	if second.Texts() != 0 {
		t.Fatalf("a restart embedded %d texts again", second.Texts())
	}
	q := set.Queries[0].Text
	ma, _ := a.Rank(ctx, "x", q, 3)
	mb, _ := b.Rank(ctx, "x", q, 3)
	if fmt.Sprint(ma) != fmt.Sprint(mb) {
		t.Fatalf("routing differs after a restart: %v vs %v", ma, mb)
	}
	// New sample queries make a new vector.
	before := second.Texts()
	ag := set.Agents[0]
	if err := b.Upsert(ctx, router.Agent{ID: "agt_" + ag.Handle, Handle: ag.Handle, Published: true, Queries: []string{"something else entirely"}}); err != nil {
		t.Fatal(err)
	}
	if n := second.Texts() - before; n != 1 {
		t.Fatalf("changed sample queries embedded %d texts, want 1", n)
	}
}

func TestNothingCloseEnoughRoutesNowhere(t *testing.T) {
	t.Parallel()
	ix, _ := router.New(embedding.NewLocal(embedding.DefaultLocalDim), nil, 0.5)
	_ = ix.Upsert(context.Background(), router.Agent{ID: "agt_1", Handle: "genrand", Published: true, Queries: []string{"Generate a random number between 0 and 19."}})
	ms, err := ix.Route(context.Background(), "x", "zqxj vlorp", 3)
	if err != nil || len(ms) != 0 {
		t.Fatalf("a query like nothing routed to %v (%v)", ms, err)
	}
	ms, _ = ix.Route(context.Background(), "x", "Generate a random number between 0 and 19.", 3)
	if len(ms) != 1 || ms[0].Handle != "genrand" {
		t.Fatalf("the sample query itself routed to %v", ms)
	}
}
