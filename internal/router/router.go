// Package router picks the agents for a query by embedding search, as Fixie's router agent did: every agent is a
// vector (the mean of its sample queries' embeddings, the scoring that routed best on our set), kept in a chromem-go
// collection; a query's embedding is compared with the agents the caller may use (its own and the published ones)
// and the closest win. Below a threshold nobody is close enough and the caller falls back to a general agent.
//
// Vectors are stored in a KV bucket beside the embedder's name and the sample queries they came from, so a restart
// (or another node) does not pay for embeddings again, and a change of embedder recomputes them.
//
// It imports embedding, the agent domain and the log (eventstore), nothing of the faces: it feeds itself from the
// log's agent events (Feed, feed.go), each node its own index, not from the agents read model.
package router

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/philippgille/chromem-go"

	"github.com/contrailhq/contrail/internal/embedding"
)

// Threshold is the similarity below which no agent is taken to fit a query, by embedder: scales differ (lexical
// vectors of unrelated texts share little; neural ones of any two English sentences share some). They are set low:
// the threshold only catches queries no agent is about (they go to the general agent); choosing among agents is the
// ranking's job. On the routing set, right answers score 0.45 and more in 9 cases of 10 with use-lite.
func Threshold(embedderName string) float64 {
	switch embedderName {
	case "local":
		return 0.12
	case "use-lite":
		return 0.30
	default:
		return 0.30
	}
}

// Agent is what the router knows of an agent.
type Agent struct {
	ID          string
	Handle      string
	Account     string // owner; "" for built-ins every account may use
	Published   bool
	Description string
	Queries     []string
}

// Match is an agent a query was routed to.
type Match struct {
	AgentID string  `json:"agent_id"`
	Handle  string  `json:"handle"`
	Score   float64 `json:"score"`
}

// Index is the routing index.
type Index struct {
	emb       embedding.Embedder
	vectors   jetstream.KeyValue // may be nil: vectors are then recomputed on every start
	threshold float64

	mu sync.RWMutex
	db *chromem.DB
	// public holds what every account may use (published agents, built-ins); private holds each account's
	// unpublished agents. Searching the two a caller may see costs one scan of each, with no filtering.
	public  *chromem.Collection
	private map[string]*chromem.Collection
	agents  map[string]Agent
}

// New returns an empty index. vectors is the KV bucket that keeps computed vectors (nil = keep none).
func New(emb embedding.Embedder, vectors jetstream.KeyValue, threshold float64) (*Index, error) {
	if threshold == 0 {
		threshold = Threshold(emb.Name())
	}
	ix := &Index{emb: emb, vectors: vectors, threshold: threshold, db: chromem.NewDB(), private: map[string]*chromem.Collection{},
		agents: map[string]Agent{}}
	var err error
	if ix.public, err = ix.collection("public"); err != nil {
		return nil, err
	}
	return ix, nil
}

// collection creates a collection of the index. Vectors are always given: a collection never calls an embedding
// function (chromem's default would call OpenAI), so it gets one that refuses.
func (ix *Index) collection(name string) (*chromem.Collection, error) {
	c, err := ix.db.CreateCollection(name, nil, func(context.Context, string) ([]float32, error) {
		return nil, errors.New("router: every document comes with its vector")
	})
	if err != nil {
		return nil, fmt.Errorf("router: create collection %s: %w", name, err)
	}
	return c, nil
}

// home is the collection an agent belongs in (creating an account's on its first agent). Call with mu held.
func (ix *Index) home(a Agent) (*chromem.Collection, error) {
	if a.Published || a.Account == "" {
		return ix.public, nil
	}
	if c, ok := ix.private[a.Account]; ok {
		return c, nil
	}
	c, err := ix.collection("account." + a.Account)
	if err != nil {
		return nil, err
	}
	ix.private[a.Account] = c
	return c, nil
}

// Fits reports whether a score passes the index's threshold.
func (ix *Index) Fits(score float64) bool { return score >= ix.threshold }

// Embedder is the embedder the index uses.
func (ix *Index) Embedder() embedding.Embedder { return ix.emb }

// Len is the number of agents in the index.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.agents)
}

// Candidates counts the agents an account may be routed to (its own and the published ones), without embedding
// anything: a front agent with none to choose from answers itself.
func (ix *Index) Candidates(account string) int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := ix.public.Count()
	if c := ix.private[account]; c != nil {
		n += c.Count()
	}
	return n
}

// Agents lists the agents an account may be routed to (its own and the published ones), by handle: what a user
// asking for help is shown.
func (ix *Index) Agents(account string) []Agent {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []Agent
	for _, a := range ix.agents {
		if a.Published || a.Account == "" || a.Account == account {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b Agent) int { return strings.Compare(a.Handle, b.Handle) })
	return out
}

// stored is a vector as the KV bucket keeps it.
type stored struct {
	Embedder string `json:"embedder"`
	Source   string `json:"source"` // hash of what was embedded
	Vector   string `json:"vector"` // float32 little-endian, base64
}

// source is what an agent's vector is computed from; its hash tells a stored vector still fits.
func source(a Agent) []string {
	texts := slices.Clone(a.Queries)
	if len(texts) == 0 && a.Description != "" {
		texts = []string{a.Description} // an agent without sample queries is routed by what it says it does
	}
	return texts
}

func sourceHash(emb string, texts []string) string {
	h := sha256.New()
	h.Write([]byte(emb))
	for _, t := range texts {
		h.Write([]byte{0})
		h.Write([]byte(t))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// Upsert adds an agent or updates it; its vector is read from the bucket when it is still current, otherwise
// computed and stored.
func (ix *Index) Upsert(ctx context.Context, a Agent) error {
	texts := source(a)
	if len(texts) == 0 {
		ix.Remove(a.ID) // nothing to route by
		return nil
	}
	vec, err := ix.vector(ctx, a.ID, texts)
	if err != nil {
		return fmt.Errorf("router: vector of agent %s: %w", a.Handle, err)
	}
	return ix.UpsertVector(ctx, a, vec)
}

// UpsertVector adds or updates an agent with a vector already computed (benchmarks, imports).
func (ix *Index) UpsertVector(ctx context.Context, a Agent, vec []float32) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(a.ID) // it may move between collections (published, unpublished)
	c, err := ix.home(a)
	if err != nil {
		return err
	}
	if err := c.AddDocument(ctx, chromem.Document{ID: a.ID, Metadata: map[string]string{"handle": a.Handle}, Embedding: vec,
		Content: a.Handle}); err != nil {
		return fmt.Errorf("router: index agent %s: %w", a.Handle, err)
	}
	ix.agents[a.ID] = a
	return nil
}

// Remove takes an agent out of the index.
func (ix *Index) Remove(id string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.removeLocked(id)
}

func (ix *Index) removeLocked(id string) {
	a, ok := ix.agents[id]
	if !ok {
		return
	}
	if c, err := ix.home(a); err == nil {
		_ = c.Delete(context.Background(), nil, nil, id)
	}
	delete(ix.agents, id)
}

func (ix *Index) vector(ctx context.Context, id string, texts []string) ([]float32, error) {
	hash := sourceHash(ix.emb.Name(), texts)
	if ix.vectors != nil {
		if e, err := ix.vectors.Get(ctx, id); err == nil {
			var s stored
			if json.Unmarshal(e.Value(), &s) == nil && s.Embedder == ix.emb.Name() && s.Source == hash {
				if v, err := decodeVector(s.Vector); err == nil && len(v) == ix.emb.Dim() {
					return v, nil
				}
			}
		}
	}
	vecs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	v := mean(vecs)
	if ix.vectors != nil {
		body, _ := json.Marshal(stored{Embedder: ix.emb.Name(), Source: hash, Vector: encodeVector(v)})
		if _, err := ix.vectors.Put(ctx, id, body); err != nil {
			return nil, fmt.Errorf("store vector: %w", err)
		}
	}
	return v, nil
}

// mean is the normalised mean of unit vectors.
func mean(vecs [][]float32) []float32 {
	out := make([]float32, len(vecs[0]))
	for _, v := range vecs {
		for i, x := range v {
			out[i] += x
		}
	}
	var norm float64
	for _, x := range out {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return out
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range out {
		out[i] *= inv
	}
	return out
}

func encodeVector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeVector(s string) ([]float32, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 {
		return nil, errors.New("malformed vector")
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Route returns up to k agents the account may use, best first, that fit the query at or above the threshold.
// None fitting is not an error: the caller falls back to a general agent.
func (ix *Index) Route(ctx context.Context, account, query string, k int) ([]Match, error) {
	all, err := ix.Rank(ctx, account, query, k)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, m := range all {
		if m.Score >= ix.threshold {
			out = append(out, m)
		}
	}
	return out, nil
}

// Rank is Route without the threshold: the k closest agents whatever their scores.
func (ix *Index) Rank(ctx context.Context, account, query string, k int) ([]Match, error) {
	if strings.TrimSpace(query) == "" || k <= 0 {
		return nil, nil
	}
	vecs, err := ix.emb.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("router: embed query: %w", err)
	}
	return ix.RankVector(ctx, account, vecs[0], k)
}

// RankVector ranks agents for a query vector already computed.
func (ix *Index) RankVector(ctx context.Context, account string, vec []float32, k int) ([]Match, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var out []Match
	for _, c := range []*chromem.Collection{ix.public, ix.private[account]} {
		if c == nil || c.Count() == 0 {
			continue
		}
		res, err := c.QueryEmbedding(ctx, vec, min(k, c.Count()), nil, nil)
		if err != nil {
			return nil, fmt.Errorf("router: search: %w", err)
		}
		for _, r := range res {
			out = append(out, Match{AgentID: r.ID, Handle: r.Metadata["handle"], Score: float64(r.Similarity)})
		}
	}
	slices.SortFunc(out, func(a, b Match) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Handle, b.Handle)
	})
	if len(out) > k {
		out = out[:k]
	}
	return out, nil
}
