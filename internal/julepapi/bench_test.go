package julepapi_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The figures of issue 12, as benchmarks (go test -run '^$' -bench Julep ./internal/julepapi/). Each reports p50 and
// p99 in milliseconds as metrics; the embedder is use-lite (the platform's default) where its weights are, which is
// what the figures are about.

// withUseLite runs the node on use-lite, or skips.
func withUseLite(b *testing.B) platformtest.Option {
	dir := filepath.Dir(uselitetest.Dir(b))
	return platformtest.WithConfig(func(c *config.Config) { c.ModelsPath, c.Embeddings = dir, "use-lite" })
}

// unlimited lifts the env's account's rate limit and quota: benchmarks send thousands of requests.
func (e *env) unlimited(b *testing.B) {
	p := principalOf(b, e)
	e.node.SetLimits(b, p.AccountID, 1_000_000, 1_000_000)
}

// percentiles reports the p50 and p99 of durations, in milliseconds.
func percentiles(b *testing.B, name string, ds []time.Duration) {
	slices.Sort(ds)
	at := func(p float64) float64 {
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds()) / 1000
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.99), name+"-p99-ms")
	b.Logf("%s over %d: p50 %.2f ms, p99 %.2f ms", name, len(ds), at(0.50), at(0.99))
}

// BenchmarkJulepDocCreateToSearch: from a doc's create call to the first search that finds it, over HTTP, with
// use-lite embedding the doc in the create.
func BenchmarkJulepDocCreateToSearch(b *testing.B) {
	e := newEnv(b, withUseLite(b))
	e.unlimited(b)
	agent := e.agent(b, map[string]any{"name": "librarian"})
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		word := fmt.Sprintf("zq%dword", i)
		start := time.Now()
		e.must(b, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "doc " + word,
			"content": "A short note about " + word + " and the things around it."})
		for {
			hits := e.must(b, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": word})["docs"].([]any)
			if len(hits) > 0 {
				break
			}
		}
		ds = append(ds, time.Since(start))
	}
	percentiles(b, "create-to-hit", ds)
}

// BenchmarkJulepSearch10k: search latency over HTTP among 10,000 docs of one agent, by text, by vector and both.
func BenchmarkJulepSearch10k(b *testing.B) {
	e := newEnv(b, withUseLite(b))
	e.unlimited(b)
	agent := e.agent(b, map[string]any{"name": "librarian"})
	p, _ := e.node.Julep.Agents.Get(context.Background(), principalOf(b, e), agent)
	const docs = 10_000
	topics := []string{"rivers", "mountains", "bread", "engines", "poetry", "taxes", "stars", "gardens", "chess", "whales"}
	var wg sync.WaitGroup
	var made atomic.Int64
	sem := make(chan struct{}, 8)
	for i := 0; i < docs; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			topic := topics[i%len(topics)]
			_, err := e.node.Julep.Docs.Create(context.Background(), principalOf(b, e), events.NewID(),
				events.DocOwner{Role: "agent", ID: p.ID}, commands.NewDoc{Title: fmt.Sprintf("%s %d", topic, i),
					Content:  jsonString(fmt.Sprintf("Note %d is about %s: %s, and how %s change over the years.", i, topic, topic, topic)),
					Metadata: []byte(fmt.Sprintf(`{"topic":%q}`, topic))})
			if err != nil {
				b.Error(err)
			}
			made.Add(1)
		}()
	}
	wg.Wait()
	vec := e.must(b, http.StatusOK, "POST", "/embed", map[string]any{"text": "how mountains change"})["vectors"].([]any)[0]
	queries := map[string]map[string]any{
		"text":   {"text": "mountains years", "limit": 10},
		"vector": {"vector": vec, "limit": 10, "confidence": 0},
		"hybrid": {"text": "mountains years", "vector": vec, "alpha": 0.5, "limit": 10, "confidence": 0},
		"hybrid-filtered": {"text": "mountains years", "vector": vec, "alpha": 0.5, "limit": 10, "confidence": 0,
			"metadata_filter": map[string]any{"topic": "mountains"}},
	}
	// Sub-benchmarks: the 10,000 docs are made once, whatever b.N the searches run for.
	for _, mode := range []string{"text", "vector", "hybrid", "hybrid-filtered"} {
		b.Run(mode, func(b *testing.B) {
			var ds []time.Duration
			for range b.N {
				start := time.Now()
				hits := e.must(b, http.StatusOK, "POST", "/agents/"+agent+"/search", queries[mode])["docs"].([]any)
				ds = append(ds, time.Since(start))
				if len(hits) == 0 {
					b.Fatalf("%s search found nothing among %d docs", mode, made.Load())
				}
			}
			percentiles(b, mode, ds)
		})
	}
}

func jsonString(s string) []byte { return []byte(fmt.Sprintf("%q", s)) }

func principalOf(b testing.TB, e *env) auth.Principal {
	p, err := e.node.Auth.Authenticate(context.Background(), e.key)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// timedModels measures the time a node spends in its models.
type timedModels struct {
	llm.Provider
	mu    sync.Mutex
	spent time.Duration
}

func (m *timedModels) Complete(ctx context.Context, req llm.Request, onDelta func(llm.Delta)) (llm.Response, error) {
	start := time.Now()
	resp, err := m.Provider.Complete(ctx, req, onDelta)
	m.mu.Lock()
	m.spent += time.Since(start)
	m.mu.Unlock()
	return resp, err
}

func (m *timedModels) take() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := m.spent
	m.spent = 0
	return d
}

// BenchmarkJulepChatOverhead: what a chat costs beyond its model call, over HTTP, on the offline model, in a
// session with a user and Julep's default template (no recall: docs are the search figures' business).
func BenchmarkJulepChatOverhead(b *testing.B) {
	models := &timedModels{}
	n := platformtest.Start(b, func(_ *config.Config, o *platform.Options) {
		o.WrapModels = func(p llm.Provider) llm.Provider { models.Provider = p; return models }
	})
	_, key := n.NewAccount(b, "bench")
	e := &env{node: n, key: key}
	e.unlimited(b)
	agent, user := e.persona(b)
	sid := e.session(b, map[string]any{"agent": agent, "user": user})
	var overhead, total []time.Duration
	b.ResetTimer()
	for i := 0; i < max(b.N, 200); i++ {
		models.take()
		start := time.Now()
		body := userMsg(fmt.Sprintf("question %d: what can you do?", i))
		body["recall"] = false
		e.must(b, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body)
		d := time.Since(start)
		total = append(total, d)
		overhead = append(overhead, d-models.take())
	}
	percentiles(b, "overhead", overhead)
	percentiles(b, "total", total)
}

// BenchmarkJulepAdaptivePromptSize: the prompt sizes of a 200-turn session (each question about 60 tokens, each
// answer about 25) with no budget, with truncate, and with adaptive, on a scripted model whose summaries are about
// 100 tokens. It reports the prompt tokens of turns 50, 100 and 200, and the largest. The figures are of one session
// per mode, whatever b.N (a session of 200 turns is the unit measured).
func BenchmarkJulepAdaptivePromptSize(b *testing.B) {
	const budget, turns = 2000, 200
	for _, mode := range []string{"none", "truncate", "adaptive"} {
		b.Run(mode, func(b *testing.B) {
			e := newEnv(b)
			e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
				if strings.HasPrefix(req.Messages[0].Content, "You compress a conversation") {
					return llmtest.Text(strings.TrimSpace(strings.Repeat("The user asked numbered questions about words; ", 10)))
				}
				return llmtest.Text("Noted: " + strings.Repeat("an answer of words ", 5))
			})
			agent, _ := e.persona(b)
			spec := map[string]any{"agent": agent}
			if mode != "none" {
				spec["token_budget"], spec["context_overflow"] = budget, mode
			}
			sid := e.session(b, spec)
			var sizes []int
			for i := 0; i < turns; i++ {
				e.must(b, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg(words(i, 55)))
				var last llmtest.Request
				for _, r := range e.model.Requests() {
					if !strings.HasPrefix(r.Messages[0].Content, "You compress") {
						last = r
					}
				}
				sizes = append(sizes, promptTokens(last))
				if mode == "adaptive" && i%20 == 19 {
					time.Sleep(50 * time.Millisecond) // let the background summarizer keep up, as a client's pace would
				}
			}
			for _, at := range []int{50, 100, 200} {
				b.ReportMetric(float64(sizes[at-1]), fmt.Sprintf("tokens@%d", at))
			}
			b.ReportMetric(float64(slices.Max(sizes)), "tokens-max")
			summaries := strings.Count(strings.Join(timeline(b, e, sid), "\n"), "summarized the first")
			b.ReportMetric(float64(summaries), "summaries")
			b.Logf("%s: prompt tokens at turns 1, 50, 100, 200: %d, %d, %d, %d (max %d); %d summaries",
				mode, sizes[0], sizes[49], sizes[99], sizes[199], slices.Max(sizes), summaries)
		})
	}
}
