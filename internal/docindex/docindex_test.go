package docindex_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/embeddingtest"
	"github.com/contrailhq/contrail/internal/errs"
)

func newIndex(t testing.TB) (*docindex.Index, *embeddingtest.Counting) {
	t.Helper()
	emb := &embeddingtest.Counting{Embedder: embedding.NewLocal(embedding.DefaultLocalDim)}
	ix, err := docindex.New(emb, docindex.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ix.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return ix, emb
}

// textDoc is a document of one chunk per text, to be embedded by the index.
func textDoc(id string, attrs map[string]any, texts ...string) docindex.Doc {
	cs, err := chunk.Snippets(texts)
	if err != nil {
		panic(err)
	}
	return docindex.Doc{ID: id, Attributes: attrs, Chunks: docindex.Chunks(cs)}
}

// vecDoc is a document of one chunk with the vector given.
func vecDoc(id, text string, vec []float32) docindex.Doc {
	return docindex.Doc{ID: id, Chunks: []docindex.Chunk{{Chunk: chunk.Chunk{Text: text, End: int64(len(text))}, Vector: vec}}}
}

// vec is the unit vector along a weighted sum of the basis vectors (dimension -> weight), in 512 dimensions.
func vec(parts map[int]float64) []float32 {
	v := make([]float32, embedding.DefaultLocalDim)
	var n float64
	for i, w := range parts {
		v[i] = float32(w)
		n += w * w
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

func add(t testing.TB, ix *docindex.Index, coll string, docs ...docindex.Doc) {
	t.Helper()
	if _, err := ix.AddMany(context.Background(), coll, docs); err != nil {
		t.Fatal(err)
	}
}

func search(t testing.TB, ix *docindex.Index, q docindex.Query) []docindex.Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("search %+v: %v", q, err)
	}
	return hits
}

func docIDs(hits []docindex.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.DocID
	}
	return out
}

var faq = []docindex.Doc{
	textDoc("refunds", map[string]any{"topic": "billing"}, "Refunds are paid to the original card within five business days of the return arriving at our warehouse."),
	textDoc("password", map[string]any{"topic": "account"}, "To reset your password, open the login page and follow the forgot password link sent by email."),
	textDoc("shipping", map[string]any{"topic": "orders"}, "Standard shipping takes three to seven days; express shipping arrives the next working day."),
	textDoc("invoices", map[string]any{"topic": "billing"}, "Invoices are emailed monthly and can be downloaded as PDF from the billing section of your account."),
}

func TestTextSearchRanksByBM25(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "vs_faq", faq...)
	hits := search(t, ix, docindex.Query{Collections: []string{"vs_faq"}, Mode: docindex.Text, Text: "how do I reset my password?", Limit: 3})
	if len(hits) == 0 || hits[0].DocID != "password" {
		t.Fatalf("hits = %v, want password first", docIDs(hits))
	}
	if hits[0].Score != 1 || hits[0].TextScore <= 0 {
		t.Errorf("best text hit: score %v, BM25 %v; want 1 and the BM25", hits[0].Score, hits[0].TextScore)
	}
	// Stemming: "refunded" finds "Refunds".
	hits = search(t, ix, docindex.Query{Collections: []string{"vs_faq"}, Mode: docindex.Text, Text: "refunded", Limit: 3})
	if !slices.Equal(docIDs(hits), []string{"refunds"}) {
		t.Errorf("refunded: hits = %v, want [refunds]", docIDs(hits))
	}
	// No word in common: nothing, rather than anything.
	if hits := search(t, ix, docindex.Query{Collections: []string{"vs_faq"}, Mode: docindex.Text, Text: "zebra", Limit: 3}); len(hits) != 0 {
		t.Errorf("zebra: hits = %v, want none", docIDs(hits))
	}
	// The hit carries what a citation needs.
	h := search(t, ix, docindex.Query{Collections: []string{"vs_faq"}, Mode: docindex.Text, Text: "invoices", Limit: 1})[0]
	if h.Collection != "vs_faq" || h.Chunk.Text != faq[3].Chunks[0].Text || h.Chunk.End != int64(len(h.Chunk.Text)) ||
		h.Attributes["topic"] != "billing" {
		t.Errorf("hit = %+v", h)
	}
}

func TestTitleIsSearched(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	d := textDoc("d1", nil, "Open the app and tap the gear icon.")
	d.Title = "Changing notification settings"
	add(t, ix, "agent:a", d, textDoc("d2", nil, "Settings for the printer are on its front panel."))
	hits := search(t, ix, docindex.Query{Collections: []string{"agent:a"}, Mode: docindex.Text, Text: "notification", Limit: 5})
	if !slices.Equal(docIDs(hits), []string{"d1"}) || hits[0].Title != d.Title {
		t.Errorf("hits = %+v, want d1 by its title", hits)
	}
}

func TestVectorSearch(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "c", faq...)
	hits := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Text: "forgot my password", Limit: 2, Confidence: -1})
	if len(hits) != 2 || hits[0].DocID != "password" || hits[0].Score != hits[0].VectorScore || hits[0].Score <= hits[1].Score {
		t.Fatalf("hits = %+v, want password first, scored by similarity", hits)
	}
	// Confidence leaves out what is not similar enough.
	all := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Text: "forgot my password", Limit: 4, Confidence: -1})
	cut := (all[0].Score + all[1].Score) / 2
	got := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Text: "forgot my password", Limit: 4, Confidence: cut})
	if !slices.Equal(docIDs(got), []string{"password"}) {
		t.Errorf("confidence %.3f: hits = %v, want [password]", cut, docIDs(got))
	}
	// A vector given by the caller (Julep's vector search) is used as it is.
	emb := embedding.NewLocal(embedding.DefaultLocalDim)
	v, _ := emb.Embed(context.Background(), []string{"shipping days"})
	got = search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Vector: v[0], Limit: 1})
	if !slices.Equal(docIDs(got), []string{"shipping"}) {
		t.Errorf("by vector: hits = %v", docIDs(got))
	}
	_, err := ix.Search(context.Background(), docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Vector: []float32{1, 0}, Limit: 1})
	if e := errs.As(err); e == nil || e.Code != errs.Invalid || e.Field != "vector" {
		t.Errorf("short vector: %v, want invalid vector", err)
	}
}

// The corpus is built so that each mode has a clear winner: "keywords" says the query's words most, "meaning" is
// the query's vector and says none of its words, "both" says the words once and is close to the vector.
func TestHybridRanking(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	q := vec(map[int]float64{0: 1})
	add(t, ix, "c",
		vecDoc("keywords", "Refund policy: refund requests, refund windows, refund rules and refund policy exceptions.", vec(map[int]float64{1: 1})),
		vecDoc("meaning", "Money back within thirty days, no questions asked.", q),
		vecDoc("both", "Our refund policy is explained below, together with how the store handles returns, exchanges and gift cards.", vec(map[int]float64{0: 0.8, 1: 0.6})),
		vecDoc("other1", "Shipping takes three days.", vec(map[int]float64{2: 1})),
		vecDoc("other2", "Passwords are reset by email.", vec(map[int]float64{3: 1})),
	)
	run := func(alpha float64) []docindex.Hit {
		return search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: "refund policy", Vector: q, Alpha: alpha, Limit: 3})
	}
	if got := docIDs(run(0)); !slices.Equal(got, []string{"keywords", "both"}) {
		t.Errorf("alpha 0 (pure BM25): %v, want [keywords both]", got)
	}
	if got := docIDs(run(1)); !slices.Equal(got, []string{"meaning", "both"}) {
		t.Errorf("alpha 1 (pure vector): %v, want [meaning both]", got)
	}
	mixed := run(0.5)
	if len(mixed) != 3 || mixed[0].DocID != "both" {
		t.Fatalf("alpha 0.5: %+v, want both first", mixed)
	}
	b := mixed[0]
	want := 0.5*b.VectorScore + 0.5*b.TextScore/run(0)[0].TextScore
	if math.Abs(b.Score-want) > 1e-6 {
		t.Errorf("both: score %v, want 0.5·%v + 0.5·(BM25 relative to the best) = %v", b.Score, b.VectorScore, want)
	}
	// score_threshold drops what scores less.
	if got := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: "refund policy", Vector: q,
		Alpha: 0.5, Limit: 3, MinScore: b.Score - 1e-9}); !slices.Equal(docIDs(got), []string{"both"}) {
		t.Errorf("threshold: %v, want [both]", docIDs(got))
	}
}

// Three chunks say nearly the same thing and score highest; a fourth, a little less relevant, says something else.
// MMR picks it second; plain ranking picks a near-duplicate.
func TestMMRDiversity(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "c",
		vecDoc("dup1", "Reset a password from the login page.", vec(map[int]float64{0: 0.9, 1: 0.43})),
		vecDoc("dup2", "Passwords are reset from the login page.", vec(map[int]float64{0: 0.9, 1: 0.43, 5: 0.05})),
		vecDoc("dup3", "From the login page, reset the password.", vec(map[int]float64{0: 0.9, 1: 0.43, 6: 0.05})),
		vecDoc("other", "Locked accounts are unlocked by support.", vec(map[int]float64{0: 0.8, 1: -0.6})),
	)
	q := docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Vector: vec(map[int]float64{0: 1}), Limit: 2}
	plain := docIDs(search(t, ix, q))
	if len(plain) != 2 || !strings.HasPrefix(plain[0], "dup") || !strings.HasPrefix(plain[1], "dup") {
		t.Fatalf("without MMR: %v, want two near-duplicates", plain)
	}
	q.MMRStrength = 0.5
	diverse := docIDs(search(t, ix, q))
	if len(diverse) != 2 || !strings.HasPrefix(diverse[0], "dup") || diverse[1] != "other" {
		t.Errorf("with MMR: %v, want a duplicate then other", diverse)
	}
}

func TestFiltersInSearch(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	var docs []docindex.Doc
	for i := range 60 {
		// Doc i says "apple" i+1 times: the filter below keeps only the one ranked last, so the index has to look
		// past the first candidates it fetched.
		docs = append(docs, textDoc(fmt.Sprintf("d%02d", i), map[string]any{"n": i, "kind": []string{"a", "b"}[i%2], "draft": i > 0},
			strings.Repeat("apple ", i+1)+"pie"))
	}
	add(t, ix, "c", docs...)
	f, err := docindex.ParseFilter([]byte(`{"type":"and","filters":[{"type":"eq","key":"draft","value":false},{"type":"lt","key":"n","value":5}]}`), "filters")
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []docindex.Mode{docindex.Text, docindex.Vector, docindex.Hybrid} {
		hits := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: mode, Text: "apple", Alpha: 0.5, Limit: 3, Filter: f, Confidence: -1})
		if !slices.Equal(docIDs(hits), []string{"d00"}) {
			t.Errorf("%s: hits = %v, want [d00]", mode, docIDs(hits))
		}
	}
	hits := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Text, Text: "apple", Limit: 100,
		Filter: docindex.MetadataFilter(map[string]any{"kind": "b"})})
	if len(hits) != 30 {
		t.Errorf("metadata filter kind=b: %d hits, want 30", len(hits))
	}
	for _, h := range hits {
		if h.Attributes["kind"] != "b" {
			t.Errorf("hit %s has kind %v", h.DocID, h.Attributes["kind"])
		}
	}
}

func TestFilterMatch(t *testing.T) {
	t.Parallel()
	attrs := map[string]any{"author": "ann", "year": 2024, "score": 4.5, "public": true, "date": "2024-05-01",
		"meta": map[string]any{"team": "core", "size": 3}}
	cases := []struct {
		filter string
		want   bool
	}{
		{`{"type":"eq","key":"author","value":"ann"}`, true},
		{`{"type":"eq","key":"author","value":"bob"}`, false},
		{`{"type":"ne","key":"author","value":"bob"}`, true},
		{`{"type":"ne","key":"missing","value":"x"}`, true},
		{`{"type":"eq","key":"missing","value":"x"}`, false},
		{`{"type":"eq","key":"year","value":2024}`, true},
		{`{"type":"eq","key":"year","value":"2024"}`, false},
		{`{"type":"gt","key":"year","value":2023}`, true},
		{`{"type":"gte","key":"year","value":2024}`, true},
		{`{"type":"lt","key":"score","value":4.5}`, false},
		{`{"type":"lte","key":"score","value":4.5}`, true},
		{`{"type":"gt","key":"author","value":3}`, false},
		{`{"type":"gte","key":"date","value":"2024-01-01"}`, true},
		{`{"type":"eq","key":"public","value":true}`, true},
		{`{"type":"gt","key":"public","value":false}`, false},
		{`{"type":"in","key":"author","value":["bob","ann"]}`, true},
		{`{"type":"nin","key":"author","value":["bob","ann"]}`, false},
		{`{"type":"nin","key":"missing","value":["x"]}`, true},
		{`{"type":"or","filters":[{"type":"eq","key":"author","value":"bob"},{"type":"gt","key":"year","value":2000}]}`, true},
		{`{"type":"and","filters":[{"type":"eq","key":"author","value":"ann"},{"type":"or","filters":[{"type":"eq","key":"public","value":false},{"type":"lt","key":"score","value":1}]}]}`, false},
	}
	for _, c := range cases {
		f, err := docindex.ParseFilter([]byte(c.filter), "filters")
		if err != nil {
			t.Fatalf("%s: %v", c.filter, err)
		}
		if got := f.Match(attrs); got != c.want {
			t.Errorf("%s: %v, want %v", c.filter, got, c.want)
		}
	}
	julep := []struct {
		m    map[string]any
		want bool
	}{
		{map[string]any{"author": "ann", "year": 2024.0}, true},
		{map[string]any{"meta": map[string]any{"team": "core", "size": 3.0}}, true},
		{map[string]any{"meta": map[string]any{"team": "core"}}, false},
		{map[string]any{"author": "ann", "public": false}, false},
	}
	for _, c := range julep {
		if got := docindex.MetadataFilter(c.m).Match(attrs); got != c.want {
			t.Errorf("metadata_filter %v: %v, want %v", c.m, got, c.want)
		}
	}
	if !(*docindex.Filter)(nil).Match(attrs) || docindex.MetadataFilter(nil) != nil {
		t.Error("no filter must pass everything")
	}
}

func TestBadFilters(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"type":"eq","key":"a"}`:                                           "filters.value",
		`{"type":"eq","value":1}`:                                           "filters.key",
		`{"key":"a","value":1}`:                                             "filters.type",
		`{"type":"like","key":"a","value":1}`:                               "filters.type",
		`{"type":"in","key":"a","value":1}`:                                 "filters.value",
		`{"type":"eq","key":"a","value":[1]}`:                               "filters.value",
		`{"type":"eq","key":"a","value":{"x":1}}`:                           "filters.value",
		`{"type":"and","filters":[]}`:                                       "filters.filters",
		`{"type":"and","filters":[{"type":"or","filters":[{"type":"x"}]}]}`: "filters.filters[0].filters[0].type",
		`"eq"`: "filters",
		strings.Repeat(`{"type":"and","filters":[`, 9) + `{"type":"eq","key":"a","value":1}` + strings.Repeat(`]}`, 9): "filters",
	}
	for raw, field := range cases {
		_, err := docindex.ParseFilter([]byte(raw), "filters")
		e := errs.As(err)
		if e == nil || e.Code != errs.Invalid || !strings.HasPrefix(e.Field, field) {
			t.Errorf("%s: %v (field %q), want invalid %s", raw, err, fieldOf(e), field)
		}
	}
}

func fieldOf(e *errs.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}

func TestAddReplaceDelete(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	ctx := context.Background()
	find := func(text string) []string {
		return docIDs(search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: text, Alpha: 0.5, Limit: 5,
			OneHitPerDoc: true}))
	}
	// Searchable the moment Add returns.
	add(t, ix, "c", textDoc("doc", nil, "The launch date is the first of March.", "Tickets cost ten euros."))
	if got := find("launch date"); !slices.Equal(got, []string{"doc"}) {
		t.Fatalf("after add: %v", got)
	}
	if s := ix.Stats("c"); s != (docindex.Stats{Docs: 1, Chunks: 2}) {
		t.Errorf("stats %+v", s)
	}
	// Adding it again replaces it: its old chunks are gone.
	add(t, ix, "c", textDoc("doc", nil, "The venue moved to the harbour hall."))
	if got := find("launch date"); slices.Contains(got, "doc") {
		for _, h := range search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: "launch date", Alpha: 0.5, Limit: 5}) {
			if h.Chunk.Text != "The venue moved to the harbour hall." {
				t.Errorf("old chunk still found: %q", h.Chunk.Text)
			}
		}
	}
	if got := docIDs(search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Text, Text: "launch date", Limit: 5})); len(got) != 0 {
		t.Errorf("old words still found: %v", got)
	}
	if got := find("harbour hall"); !slices.Equal(got, []string{"doc"}) {
		t.Errorf("new text: %v", got)
	}
	if s := ix.Stats("c"); s != (docindex.Stats{Docs: 1, Chunks: 1}) {
		t.Errorf("stats after replace %+v", s)
	}
	// A document without chunks is held (and deleted) without touching the others.
	add(t, ix, "c", docindex.Doc{ID: "hollow"})
	if ok, err := ix.Delete(ctx, "c", "hollow"); !ok || err != nil || ix.Stats("c") != (docindex.Stats{Docs: 1, Chunks: 1}) {
		t.Fatalf("delete hollow: %v %v %+v", ok, err, ix.Stats("c"))
	}
	if ok, err := ix.Delete(ctx, "c", "doc"); !ok || err != nil {
		t.Fatalf("delete: %v %v", ok, err)
	}
	if ok, _ := ix.Delete(ctx, "c", "doc"); ok {
		t.Error("second delete found it")
	}
	if got := find("harbour hall"); len(got) != 0 {
		t.Errorf("deleted doc found: %v", got)
	}
	add(t, ix, "c", textDoc("doc2", nil, "Parking is free on Sundays."))
	if err := ix.DeleteCollection("c"); err != nil {
		t.Fatal(err)
	}
	if got := find("parking"); len(got) != 0 || ix.Stats("c") != (docindex.Stats{}) {
		t.Errorf("deleted collection: %v", got)
	}
	add(t, ix, "c", textDoc("doc3", nil, "A new collection under the old name."))
	if got := find("collection"); !slices.Equal(got, []string{"doc3"}) || !slices.Equal(ix.Collections(), []string{"c"}) {
		t.Errorf("recreated collection: %v", got)
	}
}

// Vectors made by Add are handed back; a new index fed the stored chunks embeds nothing and ranks alike.
func TestStoredVectorsAreNotEmbeddedAgain(t *testing.T) {
	t.Parallel()
	ix, emb := newIndex(t)
	stored, err := ix.AddMany(context.Background(), "c", faq)
	if err != nil {
		t.Fatal(err)
	}
	if n := emb.Texts(); n != 4 {
		t.Errorf("embedded %d texts, want 4", n)
	}
	for _, d := range stored {
		for _, c := range d.Chunks {
			if len(c.Vector) != embedding.DefaultLocalDim {
				t.Fatalf("%s: chunk %d came back with a vector of %d", d.ID, c.Index, len(c.Vector))
			}
		}
	}
	if faq[0].Chunks[0].Vector != nil {
		t.Error("Add changed the caller's document")
	}
	restarted, emb2 := newIndex(t)
	add(t, restarted, "c", stored...)
	if n := emb2.Texts(); n != 0 {
		t.Errorf("restart embedded %d texts, want 0", n)
	}
	q := docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: "billing invoices by email", Alpha: 0.5, Limit: 4}
	a, b := search(t, ix, q), search(t, restarted, q)
	if len(a) != len(b) {
		t.Fatalf("hits %v and %v", docIDs(a), docIDs(b))
	}
	for i := range a {
		if a[i].DocID != b[i].DocID || math.Abs(a[i].Score-b[i].Score) > 1e-9 {
			t.Errorf("hit %d: %s %.6f against %s %.6f", i, a[i].DocID, a[i].Score, b[i].DocID, b[i].Score)
		}
	}
	_, err = restarted.Add(context.Background(), "c", vecDoc("bad", "text", []float32{1, 2, 3}))
	if e := errs.As(err); e == nil || e.Field != "vector" {
		t.Errorf("vector of the wrong size: %v", err)
	}
}

func TestMoreResultsThanChunks(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "small", faq[:2]...)
	for _, mode := range []docindex.Mode{docindex.Text, docindex.Vector, docindex.Hybrid} {
		hits := search(t, ix, docindex.Query{Collections: []string{"small", "unknown"}, Mode: mode, Text: "reset password refunds",
			Limit: 50, Confidence: -1, Alpha: 0.5, MMRStrength: 0.3})
		if len(hits) != 2 {
			t.Errorf("%s: %d hits of a 2-chunk collection, want 2", mode, len(hits))
		}
	}
	if hits := search(t, ix, docindex.Query{Collections: []string{"nothing-here"}, Mode: docindex.Hybrid, Text: "x", Limit: 5}); len(hits) != 0 {
		t.Errorf("unknown collection: %v", hits)
	}
}

func TestOneHitPerDocAndManyCollections(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "agent", textDoc("long", nil, "garden tips one", "garden tips two", "garden tips three", "garden tips four"))
	add(t, ix, "user", textDoc("short", nil, "garden gnome for sale"))
	q := docindex.Query{Collections: []string{"agent", "user"}, Mode: docindex.Text, Text: "garden", Limit: 10}
	if got := docIDs(search(t, ix, q)); len(got) != 5 {
		t.Errorf("per chunk: %v, want the five chunks", got)
	}
	q.OneHitPerDoc = true
	got := search(t, ix, q)
	slices.SortFunc(got, func(a, b docindex.Hit) int { return strings.Compare(a.DocID, b.DocID) })
	if !slices.Equal(docIDs(got), []string{"long", "short"}) || got[0].Collection != "agent" || got[1].Collection != "user" {
		t.Errorf("one per doc: %+v", got)
	}
}

func TestZeroVectorIsOnlyTextSearched(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	add(t, ix, "c", vecDoc("zero", "empty meaning words", make([]float32, embedding.DefaultLocalDim)), vecDoc("x", "other", vec(map[int]float64{0: 1})))
	hits := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Hybrid, Text: "meaning", Vector: vec(map[int]float64{0: 1}), Alpha: 0.5, Limit: 5})
	if len(hits) != 2 || math.IsNaN(hits[0].Score) || math.IsNaN(hits[1].Score) {
		t.Errorf("hits = %+v", hits)
	}
	if hits := search(t, ix, docindex.Query{Collections: []string{"c"}, Mode: docindex.Vector, Vector: vec(map[int]float64{0: 1}), Limit: 5, Confidence: -1}); !slices.Equal(docIDs(hits), []string{"x"}) {
		t.Errorf("vector: %v", docIDs(hits))
	}
}

func TestBadQueries(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	cases := []struct {
		q     docindex.Query
		field string
	}{
		{docindex.Query{Mode: "fuzzy", Text: "x", Limit: 1}, "mode"},
		{docindex.Query{Mode: docindex.Text, Limit: 1}, "text"},
		{docindex.Query{Mode: docindex.Hybrid, Text: "  ", Limit: 1}, "text"},
		{docindex.Query{Mode: docindex.Vector, Limit: 1}, "vector"},
		{docindex.Query{Mode: docindex.Text, Text: "x", Limit: 0}, "limit"},
		{docindex.Query{Mode: docindex.Text, Text: "x", Limit: docindex.MaxLimit + 1}, "limit"},
		{docindex.Query{Mode: docindex.Hybrid, Text: "x", Limit: 1, Alpha: 1.5}, "alpha"},
		{docindex.Query{Mode: docindex.Vector, Text: "x", Limit: 1, Confidence: 2}, "confidence"},
		{docindex.Query{Mode: docindex.Vector, Text: "x", Limit: 1, MMRStrength: 1}, "mmr_strength"},
		{docindex.Query{Mode: docindex.Vector, Text: "x", Limit: 1, MinScore: -0.1}, "score_threshold"},
		{docindex.Query{Mode: docindex.Vector, Text: "x", Limit: 1, Filter: &docindex.Filter{Type: "eq", Key: "k"}}, "filters.value"},
	}
	for _, c := range cases {
		_, err := ix.Search(context.Background(), c.q)
		if e := errs.As(err); e == nil || e.Code != errs.Invalid || e.Field != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.q, err, c.field)
		}
	}
	for _, d := range []docindex.Doc{{}, textDoc("", nil, "x")} {
		if _, err := ix.Add(context.Background(), "c", d); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("add %+v: %v, want invalid", d, err)
		}
	}
	if _, err := ix.Add(context.Background(), "", textDoc("a", nil, "x")); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("empty collection name: %v", err)
	}
	dup := textDoc("a", nil, "x", "y")
	dup.Chunks[1].Index = 0
	if _, err := ix.Add(context.Background(), "c", dup); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("two chunks with one index: %v", err)
	}
}

// Writers and readers at once, on shared and separate collections; run with -race.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	ctx := context.Background()
	shared, err := docindex.ParseFilter([]byte(`{"type":"or","filters":[{"type":"gte","key":"w","value":0},{"type":"eq","key":"x","value":1}]}`), "filters")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 20 {
				coll := []string{"shared", fmt.Sprintf("own%d", w)}[i%2]
				if _, err := ix.Add(ctx, coll, textDoc(fmt.Sprintf("w%d-%d", w, i), map[string]any{"w": w}, fmt.Sprintf("writer %d note %d about cats", w, i))); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 {
					if _, err := ix.Delete(ctx, coll, fmt.Sprintf("w%d-%d", w, i-2)); err != nil {
						t.Error(err)
					}
				}
			}
		})
		wg.Go(func() {
			for range 20 {
				if _, err := ix.Search(ctx, docindex.Query{Collections: []string{"shared", fmt.Sprintf("own%d", w)}, Mode: docindex.Hybrid,
					Text: "cats", Alpha: 0.5, Limit: 10, MMRStrength: 0.2, Filter: shared}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Each writer added 20 docs and deleted 4 of them (i-2 for i = 4, 9, 14, 19: 2, 7, 12, 17, two in each collection).
	total := ix.Stats("shared").Docs
	for w := range 4 {
		total += ix.Stats(fmt.Sprintf("own%d", w)).Docs
	}
	if total != 4*16 {
		t.Errorf("%d docs left, want %d", total, 4*16)
	}
	hits := search(t, ix, docindex.Query{Collections: []string{"shared"}, Mode: docindex.Text, Text: "cats", Limit: 100})
	if len(hits) != ix.Stats("shared").Chunks {
		t.Errorf("shared: %d hits for %d chunks", len(hits), ix.Stats("shared").Chunks)
	}
}

// The index wipes only its own scratch directory in the directory it is given.
func TestScratchDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keep := filepath.Join(dir, "admin.key")
	stale := filepath.Join(dir, "docindex-scratch", "c000001", "stale")
	for _, p := range []string{keep, stale} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := docindex.New(embedding.NewLocal(embedding.DefaultLocalDim), docindex.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a previous run's segment is still there: %v", err)
	}
	add(t, ix, "c", textDoc("d", nil, "text"))
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "docindex-scratch")); !os.IsNotExist(err) {
		t.Errorf("scratch directory left after Close: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file beside the scratch directory was touched: %v", err)
	}
}
