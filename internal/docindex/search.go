package docindex

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/blevesearch/bleve/v2"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/errs"
)

// Mode is how a query is matched.
type Mode string

// The modes.
const (
	Text   Mode = "text"   // keyword match, BM25
	Vector Mode = "vector" // cosine similarity of embeddings
	Hybrid Mode = "hybrid" // both, weighted by Alpha
)

// MaxLimit is the most hits a query may ask for.
const MaxLimit = 1000

// Query is a search of one or more collections.
type Query struct {
	// Collections are searched together (an agent's docs and a user's; an assistant's vector stores and a
	// thread's). Unknown ones hold nothing.
	Collections []string
	Mode        Mode
	// Text is the query's words (text and hybrid modes), embedded for vector and hybrid modes when Vector is nil.
	Text string
	// Vector is the query's embedding, when the caller has it (Julep's vector search takes one).
	Vector []float32
	// Limit is the most hits returned, 1 to MaxLimit.
	Limit int
	// Alpha weighs the two scores of a hybrid search: score = Alpha·vector + (1−Alpha)·text (Julep: 0 is pure
	// BM25, 1 pure vector).
	Alpha float64
	// Confidence is the least cosine similarity for a chunk to count as a vector match (Julep's confidence,
	// -1 to 1). Below it a chunk's vector score counts as 0 in a hybrid search, and it is not a vector hit at all.
	Confidence float64
	// MinScore drops hits scoring less (OpenAI's ranking_options.score_threshold, 0 to 1).
	MinScore float64
	// MMRStrength, from 0 (off) up to but not including 1, trades relevance for diversity (Julep's mmr_strength):
	// hits are picked by maximal marginal relevance with λ = 1 − MMRStrength from three times Limit candidates.
	MMRStrength float64
	// Filter keeps only the documents whose attributes pass it.
	Filter *Filter
	// OneHitPerDoc returns at most one chunk of each document, its best (Julep's doc search answers per doc).
	OneHitPerDoc bool
}

// Hit is a chunk found.
type Hit struct {
	Collection string
	DocID      string
	Title      string
	Attributes map[string]any
	// Chunk is the chunk's text and place in its document (Start, End, StartChar, EndChar).
	Chunk chunk.Chunk
	// Score ranks the hits, 0 to 1: the cosine similarity in vector mode; in text mode BM25 divided by the best
	// BM25 among the candidates of the same collection; in hybrid mode their weighted sum.
	Score float64
	// VectorScore is the chunk's cosine similarity to the query vector (0 in text mode).
	VectorScore float64
	// TextScore is the chunk's BM25 score (0 when no query word is in it, and in vector mode).
	TextScore float64
}

// Search finds the chunks that best match q, best first.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	if err := q.validate(); err != nil {
		return nil, err
	}
	qvec, err := ix.queryVector(ctx, q)
	if err != nil {
		return nil, err
	}
	pool := q.Limit
	if q.MMRStrength > 0 {
		pool = 3 * q.Limit
	}
	names := slices.Clone(q.Collections)
	slices.Sort(names)
	names = slices.Compact(names)
	var cands []*candidate
	for _, name := range names {
		c, err := ix.collection(name, false)
		if err != nil {
			return nil, err
		}
		if c == nil {
			continue
		}
		got, err := c.candidates(ctx, q, qvec, pool)
		if err != nil {
			return nil, err
		}
		cands = append(cands, got...)
	}
	return rank(q, cands, pool), nil
}

func (q *Query) validate() error {
	switch q.Mode {
	case Text, Hybrid:
		if strings.TrimSpace(q.Text) == "" {
			return errs.InvalidField("text", "a %s search needs text", q.Mode)
		}
	case Vector:
		if strings.TrimSpace(q.Text) == "" && len(q.Vector) == 0 {
			return errs.InvalidField("vector", "a vector search needs a vector or text to embed")
		}
	default:
		return errs.InvalidField("mode", "unknown search mode %q: want text, vector or hybrid", q.Mode)
	}
	switch {
	case q.Limit < 1 || q.Limit > MaxLimit:
		return errs.InvalidField("limit", "limit must be between 1 and %d, got %d", MaxLimit, q.Limit)
	case q.Alpha < 0 || q.Alpha > 1 || math.IsNaN(q.Alpha):
		return errs.InvalidField("alpha", "alpha must be between 0 and 1, got %v", q.Alpha)
	case q.Confidence < -1 || q.Confidence > 1 || math.IsNaN(q.Confidence):
		return errs.InvalidField("confidence", "confidence must be between -1 and 1, got %v", q.Confidence)
	case q.MinScore < 0 || q.MinScore > 1 || math.IsNaN(q.MinScore):
		return errs.InvalidField("score_threshold", "score_threshold must be between 0 and 1, got %v", q.MinScore)
	case q.MMRStrength < 0 || q.MMRStrength >= 1 || math.IsNaN(q.MMRStrength):
		return errs.InvalidField("mmr_strength", "mmr_strength must be at least 0 and less than 1, got %v", q.MMRStrength)
	}
	if q.Filter != nil {
		return q.Filter.Validate("filters")
	}
	return nil
}

// queryVector is the unit query vector, embedded from the text when the caller gave none; nil in text mode,
// unless MMR needs it.
func (ix *Index) queryVector(ctx context.Context, q Query) ([]float32, error) {
	if q.Mode == Text && q.MMRStrength == 0 {
		return nil, nil
	}
	v := q.Vector
	if v == nil {
		vecs, err := ix.emb.Embed(ctx, []string{q.Text})
		if err != nil {
			return nil, fmt.Errorf("docindex: embed the query: %w", err)
		}
		v = vecs[0]
	}
	if dim := ix.emb.Dim(); dim > 0 && len(v) != dim {
		return nil, errs.InvalidField("vector", "the vector has %d dimensions; %s makes %d", len(v), ix.emb.Name(), ix.emb.Dim())
	}
	u, ok := unit(v)
	if !ok {
		return nil, errs.InvalidField("vector", "the vector is zero or not finite")
	}
	return u, nil
}

// candidate is a chunk found by either index, with both its scores.
type candidate struct {
	coll     string
	key      string
	e        *entry
	bm25     float64
	cos      float64
	isVector bool // a vector match: cos at or above the confidence
	score    float64
}

// candidates gathers, under the collection's read lock, the chunks each index ranks best: at least pool of them
// passing the filter (and, with OneHitPerDoc, of distinct documents) from each list, unless the list runs out.
func (c *collection) candidates(ctx context.Context, q Query, qvec []float32, pool int) ([]*candidate, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.gone || len(c.chunks) == 0 {
		return nil, nil
	}
	found := map[string]*candidate{}
	get := func(key string) *candidate {
		if cd := found[key]; cd != nil {
			return cd
		}
		e := c.chunks[key]
		if e == nil || !q.Filter.Match(e.doc.attrs) {
			return nil
		}
		cd := &candidate{coll: c.name, key: key, e: e}
		if qvec != nil {
			cd.cos = dot(qvec, e.vec)
			cd.isVector = e.vec != nil && cd.cos >= q.Confidence
		}
		found[key] = cd
		return cd
	}
	want := pool
	if q.Mode == Hybrid {
		// Fusion reorders the two lists; take more of each so that a chunk good at both is in both (Julep's
		// hybrid search takes five times k).
		want = 5 * pool
	}
	// With a filter, ask each index at once for as many more as the filter is expected to drop, rather than find
	// out by asking again and again.
	first := want
	if q.Filter != nil {
		allowed := 0
		for _, d := range c.docs {
			if q.Filter.Match(d.attrs) {
				allowed += len(d.chunks)
			}
		}
		if allowed == 0 {
			return nil, nil
		}
		first = min(len(c.chunks), want*len(c.chunks)/allowed+want/2)
	}
	if q.Mode != Vector {
		if err := c.textList(ctx, q, want, first, get); err != nil {
			return nil, err
		}
	}
	if q.Mode != Text {
		if err := c.vectorList(ctx, qvec, want, first, q.OneHitPerDoc, get); err != nil {
			return nil, err
		}
	}
	out := make([]*candidate, 0, len(found))
	for _, cd := range found {
		if q.Mode == Vector && !cd.isVector {
			continue
		}
		out = append(out, cd)
	}
	return out, nil
}

// textList asks the keyword index for hits, first first and then twice as many each time, until want of them pass
// the filter or none are left.
func (c *collection) textList(ctx context.Context, q Query, want, first int, get func(string) *candidate) error {
	text := bleve.NewMatchQuery(q.Text)
	text.SetField(fieldText)
	title := bleve.NewMatchQuery(q.Text)
	title.SetField(fieldTitle)
	query := bleve.NewDisjunctionQuery(text, title)
	for n := first; ; n *= 2 {
		req := bleve.NewSearchRequestOptions(query, min(n, len(c.chunks)), 0, false)
		res, err := c.text.SearchInContext(ctx, req)
		if err != nil {
			return fmt.Errorf("docindex: keyword search of %q: %w", c.name, err)
		}
		kept, docs := 0, map[string]bool{}
		for _, h := range res.Hits {
			cd := get(h.ID)
			if cd == nil {
				continue
			}
			cd.bm25 = h.Score
			if !docs[cd.e.doc.id] || !q.OneHitPerDoc {
				kept++
			}
			docs[cd.e.doc.id] = true
		}
		if kept >= want || uint64(len(res.Hits)) >= res.Total || n >= len(c.chunks) {
			return nil
		}
	}
}

// vectorList asks the vector index for the nearest chunks, first first and then twice as many each time, until
// want of them are vector matches that pass the filter, or none are left. chromem refuses to return more results
// than it holds, so n is capped.
func (c *collection) vectorList(ctx context.Context, qvec []float32, want, first int, perDoc bool, get func(string) *candidate) error {
	total := c.vec.Count()
	if total == 0 {
		return nil
	}
	for n := first; ; n *= 2 {
		res, err := c.vec.QueryEmbedding(ctx, qvec, min(n, total), nil, nil)
		if err != nil {
			return fmt.Errorf("docindex: vector search of %q: %w", c.name, err)
		}
		kept, docs, below := 0, map[string]bool{}, false
		for _, r := range res {
			cd := get(r.ID)
			if cd == nil {
				continue
			}
			if !cd.isVector {
				below = true // the rest are further still
				break
			}
			if !docs[cd.e.doc.id] || !perDoc {
				kept++
			}
			docs[cd.e.doc.id] = true
		}
		if kept >= want || below || n >= total {
			return nil
		}
	}
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return float64(s)
}

// rank scores the candidates, drops those under MinScore, keeps one per document if asked, and picks the hits:
// the best Limit, or with MMR the most relevant and least redundant.
func rank(q Query, cands []*candidate, pool int) []Hit {
	// BM25 depends on its corpus's statistics, so scores of different collections are not comparable: each is
	// taken relative to the best in its own collection.
	best := map[string]float64{}
	for _, cd := range cands {
		best[cd.coll] = math.Max(best[cd.coll], cd.bm25)
	}
	kept := cands[:0]
	for _, cd := range cands {
		var text, vec float64
		if b := best[cd.coll]; b > 0 {
			text = cd.bm25 / b
		}
		if cd.isVector {
			vec = math.Max(cd.cos, 0)
		}
		switch q.Mode {
		case Text:
			cd.score = text
		case Vector:
			cd.score = cd.cos
		case Hybrid:
			cd.score = q.Alpha*vec + (1-q.Alpha)*text
		}
		if q.Mode != Vector && cd.score == 0 {
			continue // matched neither the words nor (in hybrid) the vector
		}
		if cd.score >= q.MinScore {
			kept = append(kept, cd)
		}
	}
	slices.SortFunc(kept, func(a, b *candidate) int {
		switch {
		case a.score != b.score:
			return cmpDesc(a.score, b.score)
		case a.cos != b.cos:
			return cmpDesc(a.cos, b.cos)
		case a.coll != b.coll:
			return strings.Compare(a.coll, b.coll)
		}
		return strings.Compare(a.key, b.key)
	})
	if q.OneHitPerDoc {
		seen := map[[2]string]bool{}
		uniq := kept[:0]
		for _, cd := range kept {
			k := [2]string{cd.coll, cd.e.doc.id}
			if !seen[k] {
				seen[k] = true
				uniq = append(uniq, cd)
			}
		}
		kept = uniq
	}
	if q.MMRStrength > 0 && len(kept) > q.Limit {
		kept = mmr(kept[:min(len(kept), pool)], q.Limit, 1-q.MMRStrength)
	}
	kept = kept[:min(len(kept), q.Limit)]
	hits := make([]Hit, len(kept))
	for i, cd := range kept {
		hits[i] = Hit{Collection: cd.coll, DocID: cd.e.doc.id, Title: cd.e.doc.title, Attributes: maps.Clone(cd.e.doc.attrs),
			Chunk: cd.e.chunk, Score: cd.score, VectorScore: cd.cos, TextScore: cd.bm25}
	}
	return hits
}

func cmpDesc(a, b float64) int {
	if a > b {
		return -1
	}
	return 1
}

// mmr picks k of the candidates (sorted best first) by maximal marginal relevance: each next pick maximises
// λ·score − (1−λ)·(its greatest similarity to a pick so far).
func mmr(cands []*candidate, k int, lambda float64) []*candidate {
	picked := []*candidate{cands[0]}
	rest := slices.Clone(cands[1:])
	redundancy := make([]float64, len(rest)) // greatest similarity to a pick so far
	for i, cd := range rest {
		redundancy[i] = dot(cd.e.vec, cands[0].e.vec)
	}
	for len(picked) < k && len(rest) > 0 {
		bi, bv := 0, math.Inf(-1)
		for i, cd := range rest {
			if v := lambda*cd.score - (1-lambda)*redundancy[i]; v > bv {
				bi, bv = i, v
			}
		}
		p := rest[bi]
		picked = append(picked, p)
		rest = slices.Delete(rest, bi, bi+1)
		redundancy = slices.Delete(redundancy, bi, bi+1)
		for i, cd := range rest {
			redundancy[i] = math.Max(redundancy[i], dot(cd.e.vec, p.e.vec))
		}
	}
	return picked
}
