package docindex_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/chunk/chunktest"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/extract"
	"github.com/contrailhq/contrail/internal/extract/extracttest"
)

// tenPagePDF is a PDF of ten pages of prose, forty lines each; page 7 also says the needle.
func tenPagePDF(needle string) []byte {
	pages := make([][]string, 10)
	for p := range pages {
		for l := 0; l < 40; l++ {
			pages[p] = append(pages[p], strings.TrimSpace(chunktest.Prose(uint64(p*100+l), 12)))
		}
		if p == 6 {
			pages[p][20] = needle
		}
	}
	return extracttest.PDF(pages...)
}

// ingest is what processing a vector store file does: extract, chunk, embed and index.
func ingest(ctx context.Context, ix *docindex.Index, coll, id string, data []byte, s chunk.Strategy) (string, error) {
	var text bytes.Buffer
	var chunks []chunk.Chunk
	w, err := chunk.NewWriter(s, func(c chunk.Chunk) error { chunks = append(chunks, c); return nil })
	if err != nil {
		return "", err
	}
	// The extracted text is kept here only to check offsets against it; a caller stores it or not.
	if _, err := extract.Extract(ctx, id+".pdf", bytes.NewReader(data), int64(len(data)), teeWriter{w, &text}, extract.Options{}); err != nil {
		return "", err
	}
	if err := w.Close(); err != nil {
		return "", err
	}
	_, err = ix.Add(ctx, coll, docindex.Doc{ID: id, Attributes: map[string]any{"filename": id + ".pdf"}, Chunks: docindex.Chunks(chunks)})
	return text.String(), err
}

type teeWriter struct {
	a *chunk.Writer
	b *bytes.Buffer
}

func (t teeWriter) Write(p []byte) (int, error) {
	t.b.Write(p)
	return t.a.Write(p)
}

// A PDF goes through extraction, chunking and indexing, and the hit for a sentence on page 7 points at exactly
// the text it quotes.
func TestPDFToCitation(t *testing.T) {
	t.Parallel()
	ix, _ := newIndex(t)
	needle := "The warranty covers the espresso pump for three years."
	text, err := ingest(context.Background(), ix, "vs_1", "file-manual", tenPagePDF(needle), chunk.Strategy{MaxTokens: 200, OverlapTokens: 100})
	if err != nil {
		t.Fatal(err)
	}
	if ix.Stats("vs_1").Chunks < 20 {
		t.Fatalf("only %d chunks from ten pages", ix.Stats("vs_1").Chunks)
	}
	hits := search(t, ix, docindex.Query{Collections: []string{"vs_1"}, Mode: docindex.Hybrid, Alpha: 0.5,
		Text: "how long is the espresso pump warranty?", Limit: 3})
	if len(hits) == 0 || !strings.Contains(hits[0].Chunk.Text, needle) {
		t.Fatalf("best hit does not quote the needle: %+v", hits)
	}
	h := hits[0].Chunk
	if text[h.Start:h.End] != h.Text || string([]rune(text)[h.StartChar:h.EndChar]) != h.Text {
		t.Errorf("hit [%d:%d] does not point at its text in the extracted file", h.Start, h.End)
	}
	if hits[0].DocID != "file-manual" || hits[0].Attributes["filename"] != "file-manual.pdf" {
		t.Errorf("hit = %+v", hits[0])
	}
}

// BenchmarkPDFToSearchable measures the library's part of "upload to searchable" for a 10-page PDF: extract,
// chunk (auto), embed, index, into a store that already holds other files.
func BenchmarkPDFToSearchable(b *testing.B) {
	withEmbedders(b, func(b *testing.B, emb embedding.Embedder) {
		ix := build(b, emb, storedCorpus(600)[:100])
		pdf := tenPagePDF("needle")
		var took []time.Duration
		for i := 0; b.Loop(); i++ {
			t0 := time.Now()
			if _, err := ingest(context.Background(), ix, "c", fmt.Sprintf("file-%d", i), pdf, chunk.Auto()); err != nil {
				b.Fatal(err)
			}
			took = append(took, time.Since(t0))
		}
		reportPercentiles(b, took, "pdf-to-searchable")
	})
}
