package embedding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
)

// routingSet is testdata/routing/routing.json.
type routingSet struct {
	Agents []struct {
		Handle        string   `json:"handle"`
		Name          string   `json:"name"`
		Description   string   `json:"description"`
		BasePrompt    string   `json:"base_prompt"`
		SampleQueries []string `json:"sample_queries"`
	} `json:"agents"`
	Queries []struct {
		Text  string `json:"text"`
		Agent string `json:"agent"`
	} `json:"queries"`
}

func loadRoutingSet(t *testing.T) routingSet {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "routing", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var set routingSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("parse routing.json: %v", err)
	}
	return set
}

func TestRoutingSetIsWellFormed(t *testing.T) {
	t.Parallel()
	set := loadRoutingSet(t)
	if len(set.Agents) < 20 || len(set.Queries) < 100 {
		t.Errorf("%d agents and %d queries; want at least 20 and 100", len(set.Agents), len(set.Queries))
	}
	handles := make(map[string]bool)
	samples := make(map[string]string)
	for _, a := range set.Agents {
		if a.Handle == "" || a.Description == "" || a.BasePrompt == "" || len(a.SampleQueries) < 3 || handles[a.Handle] {
			t.Errorf("agent %q: want a unique handle, a description, a base prompt and at least 3 sample queries", a.Handle)
		}
		handles[a.Handle] = true
		for _, s := range a.SampleQueries {
			samples[strings.ToLower(s)] = a.Handle
		}
	}
	for _, q := range set.Queries {
		if !handles[q.Agent] {
			t.Errorf("query %q: agent %q is not in the set", q.Text, q.Agent)
		}
		if _, ok := samples[strings.ToLower(q.Text)]; ok {
			t.Errorf("query %q repeats a sample query", q.Text)
		}
	}
}

// routingVectors holds one embedder's vectors for the whole set.
type routingVectors struct {
	samples      [][][]float32 // per agent, per sample query
	descriptions [][]float32   // per agent: name, description and base prompt as one text
	queries      [][]float32
}

func embedRoutingSet(t *testing.T, e embedding.Embedder, set routingSet) routingVectors {
	t.Helper()
	var texts []string
	for _, a := range set.Agents {
		texts = append(texts, a.SampleQueries...)
	}
	for _, a := range set.Agents {
		texts = append(texts, a.Name+". "+a.Description+" "+a.BasePrompt)
	}
	for _, q := range set.Queries {
		texts = append(texts, q.Text)
	}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatalf("%s: %v", e.Name(), err)
	}
	var rv routingVectors
	for _, a := range set.Agents {
		rv.samples = append(rv.samples, vecs[:len(a.SampleQueries)])
		vecs = vecs[len(a.SampleQueries):]
	}
	rv.descriptions, rv.queries = vecs[:len(set.Agents)], vecs[len(set.Agents):]
	return rv
}

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// agentScore scores agent a for query q from one embedder's vectors.
type agentScore func(v routingVectors, a, q int) float64

// The aggregates tried. Sample queries are what Fixie's router compared against; the description and base
// prompt are extra text every agent has.
var aggregates = []struct {
	name  string
	score agentScore
}{
	{"max over samples", func(v routingVectors, a, q int) float64 {
		best := -1.0
		for _, s := range v.samples[a] {
			best = max(best, dot(v.queries[q], s))
		}
		return best
	}},
	{"mean over samples", meanOverSamples},
	{"centroid of samples", centroidOfSamples},
	{"max over samples and description", func(v routingVectors, a, q int) float64 {
		best := dot(v.queries[q], v.descriptions[a])
		for _, s := range v.samples[a] {
			best = max(best, dot(v.queries[q], s))
		}
		return best
	}},
	{"mean over samples + 0.5 description", func(v routingVectors, a, q int) float64 {
		return meanOverSamples(v, a, q) + 0.5*dot(v.queries[q], v.descriptions[a])
	}},
	{"centroid + 0.5 description", func(v routingVectors, a, q int) float64 {
		return centroidOfSamples(v, a, q) + 0.5*dot(v.queries[q], v.descriptions[a])
	}},
}

func meanOverSamples(v routingVectors, a, q int) float64 {
	var sum float64
	for _, s := range v.samples[a] {
		sum += dot(v.queries[q], s)
	}
	return sum / float64(len(v.samples[a]))
}

// centroidOfSamples is the cosine between the query and the mean of the agent's sample vectors: unlike the mean
// of the cosines, it does not reward an agent whose samples are spread out.
func centroidOfSamples(v routingVectors, a, q int) float64 {
	c := make([]float32, len(v.queries[q]))
	for _, s := range v.samples[a] {
		for i, x := range s {
			c[i] += x
		}
	}
	return dot(v.queries[q], c) / math.Sqrt(dot(c, c))
}

// rankOf returns where the right agent comes (0 = first) when agents are ordered by score.
func rankOf(scores []float64, right int) int {
	rank := 0
	for a, s := range scores {
		// Ties count against the right agent: a router cannot pick it from a tie.
		if a != right && s >= scores[right] {
			rank++
		}
	}
	return rank
}

type routingResult struct {
	name       string
	top1, top3 float64
}

func evaluate(set routingSet, name string, score func(a, q int) float64) routingResult {
	index := make(map[string]int)
	for i, a := range set.Agents {
		index[a.Handle] = i
	}
	var top1, top3 int
	scores := make([]float64, len(set.Agents))
	for q, query := range set.Queries {
		for a := range set.Agents {
			scores[a] = score(a, q)
		}
		switch r := rankOf(scores, index[query.Agent]); {
		case r == 0:
			top1++
			top3++
		case r < 3:
			top3++
		}
	}
	n := float64(len(set.Queries))
	return routingResult{name: name, top1: float64(top1) / n, top3: float64(top3) / n}
}

// TestRoutingQuality routes every query of the set to an agent and reports how often the right agent comes
// first (top-1) and among the first three (top-3), for each embedder, each way of scoring an agent, and
// combinations of the neural and lexical scores. Run with -v to see the table.
func TestRoutingQuality(t *testing.T) {
	if uselitetest.Race {
		t.Skip("a measurement of routing quality, not of concurrency: run it without -race")
	}
	set := loadRoutingSet(t)
	local := embedRoutingSet(t, embedding.NewLocal(embedding.DefaultLocalDim), set)
	var results []routingResult
	for _, agg := range aggregates {
		results = append(results, evaluate(set, "local, "+agg.name, func(a, q int) float64 { return agg.score(local, a, q) }))
	}

	var neural routingVectors
	haveNeural := false
	t.Run("use-lite", func(t *testing.T) {
		neural = embedRoutingSet(t, uselitetest.Model(t), set)
		haveNeural = true
	})
	if haveNeural {
		for _, agg := range aggregates {
			results = append(results, evaluate(set, "use-lite, "+agg.name, func(a, q int) float64 { return agg.score(neural, a, q) }))
		}
		// Neural plus lexical: the lexical score rewards shared rare words (names, symbols) that the neural
		// model may weigh little.
		for _, agg := range aggregates[2:] {
			for _, w := range []float64{0.15, 0.3} {
				results = append(results, evaluate(set, fmt.Sprintf("use-lite + %.2f local, %s", w, agg.name), func(a, q int) float64 {
					return (1-w)*agg.score(neural, a, q) + w*agg.score(local, a, q)
				}))
			}
		}
	}

	var table strings.Builder
	fmt.Fprintf(&table, "routing %d queries over %d agents:\n%-60s %6s %6s\n", len(set.Queries), len(set.Agents), "embedder, scoring", "top-1", "top-3")
	for _, r := range results {
		fmt.Fprintf(&table, "%-60s %5.1f%% %5.1f%%\n", r.name, 100*r.top1, 100*r.top3)
	}
	t.Log(table.String())

	// Floors under what was measured (see the table), so that a broken embedder or tokenizer fails here. Random
	// choice would be right 1 time in 31.
	localFixie := results[0]
	if localFixie.top1 < 0.10 || localFixie.top3 < 0.25 {
		t.Errorf("local: top-1 %.2f, top-3 %.2f; want at least 0.10 and 0.25", localFixie.top1, localFixie.top3)
	}
	if haveNeural {
		useLite := results[len(aggregates)]
		if useLite.top1 < 0.55 || useLite.top3 < 0.85 {
			t.Errorf("use-lite: top-1 %.2f, top-3 %.2f; want at least 0.55 and 0.85", useLite.top1, useLite.top3)
		}
		if useLite.top1 < 2*localFixie.top1 {
			t.Errorf("use-lite routes not much better than local (top-1 %.2f vs %.2f)", useLite.top1, localFixie.top1)
		}
	}
}

// The worst-routed queries, for a human reading -v output when tuning the set or the scoring.
func TestRoutingMisses(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("only useful with -v")
	}
	set := loadRoutingSet(t)
	v := embedRoutingSet(t, uselitetest.Model(t), set)
	for q, query := range set.Queries {
		scores := make([]float64, len(set.Agents))
		right := 0
		for a, agent := range set.Agents {
			scores[a] = aggregates[0].score(v, a, q)
			if agent.Handle == query.Agent {
				right = a
			}
		}
		if rankOf(scores, right) > 0 {
			best := slices.Index(scores, slices.Max(scores))
			t.Logf("%-70q want %-12s got %-12s (%.2f vs %.2f)", query.Text, query.Agent, set.Agents[best].Handle, scores[right], scores[best])
		}
	}
}
