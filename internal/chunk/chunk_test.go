package chunk

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// sample is text of many scripts: ASCII words, accented Latin, Japanese (whose characters tiktoken often splits
// into several tokens), emoji, numbers, punctuation and line breaks, so that chunk edges fall inside characters.
func sample(seed uint64, words int) string {
	vocab := []string{"the", "search", "index", "naïve", "café", "Ünïcödé", "日本語のテキスト", "東京", "🎉", "🚀🚀",
		"12345678", "3.14159", "—", "(quoted)", "don't", "e-mail", "\n", "\n\n", "\t", "  ", "Ω≈ç√", "привет", "مرحبا"}
	r := rand.New(rand.NewPCG(seed, seed))
	var b strings.Builder
	for i := 0; i < words; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(vocab[r.IntN(len(vocab))])
	}
	return b.String()
}

// check verifies every chunk against the text it came from, and that the windows follow the strategy.
func check(t *testing.T, text string, s Strategy, chunks []Chunk) {
	t.Helper()
	total := len(mustSplit(t, text))
	if total == 0 {
		if len(chunks) != 0 {
			t.Fatalf("%d chunks of an empty text", len(chunks))
		}
		return
	}
	step := s.MaxTokens - s.OverlapTokens
	want := 1
	if total > s.MaxTokens {
		want = 1 + (total-s.MaxTokens+step-1)/step
	}
	if len(chunks) != want {
		t.Fatalf("%d tokens, strategy %+v: %d chunks, want %d", total, s, len(chunks), want)
	}
	checkOffsets(t, text, chunks)
	for i, c := range chunks {
		wantTokens := min(s.MaxTokens, total-i*step)
		if c.Tokens != wantTokens {
			t.Errorf("chunk %d: %d tokens, want %d", i, c.Tokens, wantTokens)
		}
	}
}

// checkOffsets verifies that every chunk's text is the text between its offsets, in bytes and in characters, and
// that the chunks run in order from the start of the text to its end.
func checkOffsets(t *testing.T, text string, chunks []Chunk) {
	t.Helper()
	runes := []rune(text)
	for i, c := range chunks {
		if c.Index != i {
			t.Errorf("chunk %d has index %d", i, c.Index)
		}
		if got := text[c.Start:c.End]; got != c.Text {
			t.Fatalf("chunk %d: text[%d:%d] = %q, chunk text %q", i, c.Start, c.End, got, c.Text)
		}
		if got := string(runes[c.StartChar:c.EndChar]); got != c.Text {
			t.Fatalf("chunk %d: characters [%d:%d] = %q, chunk text %q", i, c.StartChar, c.EndChar, got, c.Text)
		}
		if !utf8.ValidString(c.Text) {
			t.Errorf("chunk %d is not valid UTF-8", i)
		}
		if i > 0 && (c.Start <= chunks[i-1].Start || c.Start > chunks[i-1].End) {
			t.Errorf("chunk %d starts at %d, after chunk %d's [%d:%d]", i, c.Start, i-1, chunks[i-1].Start, chunks[i-1].End)
		}
	}
	if chunks[0].Start != 0 || chunks[len(chunks)-1].End != int64(len(text)) {
		t.Errorf("chunks span [%d:%d] of %d bytes", chunks[0].Start, chunks[len(chunks)-1].End, len(text))
	}
}

func mustSplit(t *testing.T, text string) []string {
	t.Helper()
	toks, err := tokens.Split(Encoding, text)
	if err != nil {
		t.Fatal(err)
	}
	return toks
}

func TestOffsetsAreExact(t *testing.T) {
	t.Parallel()
	for _, s := range []Strategy{Auto(), {MaxTokens: 100, OverlapTokens: 50}, {MaxTokens: 100}, {MaxTokens: 137, OverlapTokens: 11}} {
		for seed := uint64(1); seed <= 3; seed++ {
			text := sample(seed, 3000)
			chunks, err := Split(text, s)
			if err != nil {
				t.Fatal(err)
			}
			check(t, text, s, chunks)
		}
	}
}

func TestShortAndEmptyText(t *testing.T) {
	t.Parallel()
	chunks, err := Split("", Auto())
	if err != nil || len(chunks) != 0 {
		t.Fatalf("empty text: %v, %v", chunks, err)
	}
	chunks, err = Split("Reset your password from the login page.", Auto())
	if err != nil {
		t.Fatal(err)
	}
	want := []Chunk{{Text: "Reset your password from the login page.", End: 40, EndChar: 40, Tokens: 8}}
	if !reflect.DeepEqual(chunks, want) {
		t.Errorf("chunks = %+v, want %+v", chunks, want)
	}
}

// Writing in odd pieces, through segments smaller than usual (so that many segment cuts fall in the text), gives
// the same chunks as cutting the whole text at once. Through tiny segments, where some cuts must fall inside a
// word (and so change its tokens), the offsets are still exact.
func TestStreamingMatchesWhole(t *testing.T) {
	t.Parallel()
	text := sample(7, 5000)
	s := Strategy{MaxTokens: 120, OverlapTokens: 60}
	whole, err := Split(text, s)
	if err != nil {
		t.Fatal(err)
	}
	check(t, text, s, whole)
	for _, segLen := range []int{48, 300, 1000} {
		var got []Chunk
		w, err := NewWriter(s, func(c Chunk) error { got = append(got, c); return nil })
		if err != nil {
			t.Fatal(err)
		}
		w.segLen = segLen
		r := rand.New(rand.NewPCG(3, 4))
		for rest := text; len(rest) > 0; {
			n := min(len(rest), 1+r.IntN(300))
			if _, err := w.Write([]byte(rest[:n])); err != nil {
				t.Fatal(err)
			}
			rest = rest[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if segLen < 100 {
			checkOffsets(t, text, got)
			continue
		}
		if !reflect.DeepEqual(got, whole) {
			t.Errorf("segments of %d bytes: chunks differ from the whole text's (%d against %d)", segLen, len(got), len(whole))
		}
	}
}

func TestStrategyBounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s     Strategy
		field string
	}{
		{Strategy{MaxTokens: 99}, "chunking_strategy.static.max_chunk_size_tokens"},
		{Strategy{MaxTokens: 4097}, "chunking_strategy.static.max_chunk_size_tokens"},
		{Strategy{MaxTokens: 800, OverlapTokens: 401}, "chunking_strategy.static.chunk_overlap_tokens"},
		{Strategy{MaxTokens: 800, OverlapTokens: -1}, "chunking_strategy.static.chunk_overlap_tokens"},
	}
	for _, c := range cases {
		e := errs.As(c.s.Validate())
		if e == nil || e.Code != errs.Invalid || e.Field != c.field {
			t.Errorf("%+v: %v, want invalid %s", c.s, e, c.field)
		}
		if _, err := NewWriter(c.s, nil); err == nil {
			t.Errorf("NewWriter(%+v) accepted it", c.s)
		}
	}
	for _, s := range []Strategy{Auto(), {MaxTokens: 100, OverlapTokens: 50}, {MaxTokens: 4096, OverlapTokens: 2048}, {MaxTokens: 100}} {
		if err := s.Validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}

func TestSnippets(t *testing.T) {
	t.Parallel()
	got, err := Snippets([]string{"first snippet", "日本語", ""})
	if err != nil {
		t.Fatal(err)
	}
	want := []Chunk{
		{Index: 0, Text: "first snippet", End: 13, EndChar: 13, Tokens: 2},
		{Index: 1, Text: "日本語", End: 9, EndChar: 3, Tokens: len(mustSplit(t, "日本語"))},
		{Index: 2},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("snippets = %+v, want %+v", got, want)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	stop := errors.New("store failed")
	w, err := NewWriter(Strategy{MaxTokens: 100}, func(Chunk) error { return stop })
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.WriteString(sample(1, 20000))
	if !errors.Is(err, stop) {
		t.Errorf("emit error: got %v", err)
	}

	w, _ = NewWriter(Auto(), func(Chunk) error { return nil })
	if _, err := w.Write([]byte("bad \xff byte")); err != nil {
		t.Fatal(err) // held until a segment fills or the writer closes
	}
	if err := w.Close(); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("invalid UTF-8: got %v", err)
	}
	if _, err := w.Write([]byte("more")); err == nil {
		t.Error("write after close accepted")
	}
}
