package uselite_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding/uselite"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
)

// The reference: sentences.json, and what the JavaScript runtime (@energetic-ai/embeddings 0.2.0 on TF.js 4.5,
// wasm backend) made of them, computed by testdata/reference/reference.js (`make models-reference`).
type reference struct {
	sentences []string
	ids       [][]int32
	vectors   [][]float32
}

func loadReference(t *testing.T) reference {
	t.Helper()
	dir := filepath.Join("testdata", "reference")
	var ref reference
	readJSON(t, filepath.Join(dir, "sentences.json"), &ref.sentences)
	var meta struct {
		Dim int       `json:"dim"`
		IDs [][]int32 `json:"ids"`
	}
	readJSON(t, filepath.Join(dir, "reference.json"), &meta)
	ref.ids = meta.IDs
	raw, err := os.ReadFile(filepath.Join(dir, "vectors.f32"))
	if err != nil {
		t.Fatal(err)
	}
	if meta.Dim != uselite.Dim || len(ref.ids) != len(ref.sentences) || len(raw) != 4*meta.Dim*len(ref.sentences) {
		t.Fatalf("reference data out of step: %d sentences, %d token lists, %d bytes of %d-dim vectors; "+
			"run `make models-reference`", len(ref.sentences), len(ref.ids), len(raw), meta.Dim)
	}
	for i := range ref.sentences {
		v := make([]float32, meta.Dim)
		for c := range v {
			v[c] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*(i*meta.Dim+c):]))
		}
		ref.vectors = append(ref.vectors, v)
	}
	return ref
}

// sample keeps every nth sentence.
func (ref reference) sample(n int) reference {
	var out reference
	for i := 0; i < len(ref.sentences); i += n {
		out.sentences = append(out.sentences, ref.sentences[i])
		out.ids = append(out.ids, ref.ids[i])
		out.vectors = append(out.vectors, ref.vectors[i])
	}
	return out
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestReferenceIsVaried(t *testing.T) {
	ref := loadReference(t)
	if len(ref.sentences) < 200 {
		t.Errorf("%d reference sentences, want at least 200", len(ref.sentences))
	}
	var empty, long, astral, nonASCII, digits int
	for i, s := range ref.sentences {
		switch {
		case len(ref.ids[i]) == 0:
			empty++
		case len(ref.ids[i]) > 128:
			long++
		}
		for _, r := range s {
			if r > 0xFFFF {
				astral++
				break
			}
		}
		if strings.ContainsFunc(s, func(r rune) bool { return r > 0x7F }) {
			nonASCII++
		}
		if strings.ContainsAny(s, "0123456789") {
			digits++
		}
	}
	t.Logf("%d sentences: %d empty, %d longer than 128 pieces, %d with astral characters, %d non-ASCII, %d with digits",
		len(ref.sentences), empty, long, astral, nonASCII, digits)
	if empty == 0 || long < 2 || astral < 5 || nonASCII < 40 || digits < 20 {
		t.Error("the reference set must cover empty, over-long, unicode (astral too) and numeric text")
	}
}

func TestTokenizerMatchesReference(t *testing.T) {
	t.Parallel()
	tok, err := uselite.LoadTokenizer(filepath.Join(uselitetest.Dir(t), "vocab.json"))
	if err != nil {
		t.Fatal(err)
	}
	ref := loadReference(t)
	pieces := func(ids []int32) string {
		var b strings.Builder
		for _, id := range ids {
			fmt.Fprintf(&b, "%q ", tok.Piece(id))
		}
		return b.String()
	}
	for i, s := range ref.sentences {
		if got := tok.Encode(s); !slices.Equal(got, ref.ids[i]) {
			t.Errorf("sentence %d %q:\n got  %v\n want %v", i, s, pieces(got), pieces(ref.ids[i]))
		}
	}
}

func TestEmbedMatchesReference(t *testing.T) {
	t.Parallel()
	m := uselitetest.Model(t)
	ref := loadReference(t)
	if uselitetest.Race {
		ref = ref.sample(16)
		t.Logf("race detector on: checking %d of the reference sentences", len(ref.sentences))
	}
	got, err := m.Embed(context.Background(), ref.sentences)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ref.sentences) {
		t.Fatalf("%d vectors for %d sentences", len(got), len(ref.sentences))
	}
	worst, worstAt := 1.0, 0
	for i := range ref.sentences {
		if len(got[i]) != uselite.Dim {
			t.Fatalf("sentence %d: %d dimensions", i, len(got[i]))
		}
		c := cosine(got[i], ref.vectors[i])
		if c < 0.9999 {
			t.Errorf("sentence %d %q: cosine with the reference %.6f, want >= 0.9999", i, ref.sentences[i], c)
		}
		if c < worst {
			worst, worstAt = c, i
		}
		var norm float64
		for _, v := range got[i] {
			norm += float64(v) * float64(v)
		}
		if math.Abs(norm-1) > 1e-5 {
			t.Errorf("sentence %d: squared norm %.7f, want 1", i, norm)
		}
	}
	t.Logf("lowest cosine with the reference: 1 - %.1e (sentence %d %q)", 1-worst, worstAt, ref.sentences[worstAt])
}

// A sentence's vector must not depend on the batch it is embedded in (the graph masks padding, and chunks are
// spread over workers).
func TestEmbedBatchEqualsSingle(t *testing.T) {
	t.Parallel()
	m := uselitetest.Model(t)
	texts := []string{"reset my password", "", "The quick brown fox jumps over the lazy dog.", "hi", "¿Dónde está la biblioteca?"}
	batch, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		single, err := m.Embed(context.Background(), []string{text})
		if err != nil {
			t.Fatal(err)
		}
		if c := cosine(batch[i], single[0]); c < 0.999999 {
			t.Errorf("%q: cosine between batch and single embedding %.7f", text, c)
		}
	}
	none, err := m.Embed(context.Background(), nil)
	if err != nil || len(none) != 0 {
		t.Errorf("Embed(nil) = %d vectors, %v; want none, nil", len(none), err)
	}
}

func TestEmbedSimilarity(t *testing.T) {
	t.Parallel()
	m := uselitetest.Model(t)
	v, err := m.Embed(context.Background(), []string{
		"reset my password", "forgot my login credentials", "what's the weather in Paris tomorrow",
	})
	if err != nil {
		t.Fatal(err)
	}
	related, unrelated := cosine(v[0], v[1]), cosine(v[0], v[2])
	t.Logf("related %.3f, unrelated %.3f", related, unrelated)
	if related <= unrelated+0.2 {
		t.Errorf("paraphrases score %.3f, unrelated texts %.3f: want the paraphrases clearly closer", related, unrelated)
	}
}

func TestEmbedStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	m := uselitetest.Model(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Embed(ctx, []string{"hello"}); err != context.Canceled {
		t.Errorf("Embed with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestLoadRejectsOtherGraphs(t *testing.T) {
	t.Parallel()
	src := uselitetest.Dir(t)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	graph, err := os.ReadFile(filepath.Join(src, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The same weights under a graph with one op changed: the translation would compute the wrong thing.
	changed := strings.Replace(string(graph), `"op": "Relu"`, `"op": "Relu6"`, 1)
	if changed == string(graph) {
		t.Fatal(`model.json has no "op": "Relu" to change`)
	}
	os.Remove(filepath.Join(dir, "model.json"))
	if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := uselite.Load(dir); err == nil || !strings.Contains(err.Error(), "not the Universal Sentence Encoder Lite graph") {
		t.Errorf("Load of a changed graph: err = %v, want it refused", err)
	}

	os.Remove(filepath.Join(dir, "vocab.json"))
	if err := os.WriteFile(filepath.Join(dir, "model.json"), graph, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := uselite.Load(dir); err == nil || !strings.Contains(err.Error(), "vocab.json") {
		t.Errorf("Load without vocab.json: err = %v, want it named", err)
	}
}

func TestLoadMissingDir(t *testing.T) {
	t.Parallel()
	_, err := uselite.Load(filepath.Join(t.TempDir(), "nowhere"))
	if err == nil || !strings.Contains(err.Error(), "model.json") {
		t.Errorf("Load of a missing directory: err = %v, want it to name model.json", err)
	}
}
