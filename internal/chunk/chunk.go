package chunk

import (
	"fmt"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Encoding is the tokenizer chunk sizes are counted in.
const Encoding = tokens.Cl100kBase

// OpenAI's bounds for a static chunking strategy, and its auto strategy.
const (
	MinTokens     = 100
	MaxTokens     = 4096
	AutoTokens    = 800
	AutoOverlap   = 400
	fieldMax      = "chunking_strategy.static.max_chunk_size_tokens"
	fieldOverlap  = "chunking_strategy.static.chunk_overlap_tokens"
	defaultSegLen = 16 << 10
)

// Strategy is how text is cut: windows of MaxTokens tokens, each starting MaxTokens-OverlapTokens tokens after
// the one before.
type Strategy struct {
	MaxTokens     int `json:"max_chunk_size_tokens"`
	OverlapTokens int `json:"chunk_overlap_tokens"`
}

// Auto is OpenAI's default strategy: 800 tokens with 400 of overlap.
func Auto() Strategy { return Strategy{MaxTokens: AutoTokens, OverlapTokens: AutoOverlap} }

// Validate checks a static strategy against OpenAI's bounds (max_chunk_size_tokens 100-4096, chunk_overlap_tokens
// at least 0 and at most half of it), naming the field at fault as OpenAI's API spells it.
func (s Strategy) Validate() error {
	if s.MaxTokens < MinTokens || s.MaxTokens > MaxTokens {
		return errs.InvalidField(fieldMax, "max_chunk_size_tokens must be between %d and %d, got %d", MinTokens, MaxTokens, s.MaxTokens)
	}
	if s.OverlapTokens < 0 || s.OverlapTokens > s.MaxTokens/2 {
		return errs.InvalidField(fieldOverlap, "chunk_overlap_tokens must be between 0 and half of max_chunk_size_tokens (%d), got %d",
			s.MaxTokens/2, s.OverlapTokens)
	}
	return nil
}

// Chunk is a piece of a text.
type Chunk struct {
	// Index is the chunk's place among its text's chunks (or the snippet's among its doc's), from 0.
	Index int    `json:"index"`
	Text  string `json:"text"`
	// Start and End are byte offsets in the text: Text == text[Start:End].
	Start int64 `json:"start"`
	End   int64 `json:"end"`
	// StartChar and EndChar are the same offsets counted in Unicode code points.
	StartChar int64 `json:"start_char"`
	EndChar   int64 `json:"end_char"`
	// Tokens is how many tokens the chunk holds.
	Tokens int `json:"tokens"`
}

// Split cuts a whole text held in memory; it is Writer for text that is already there.
func Split(text string, s Strategy) ([]Chunk, error) {
	var out []Chunk
	w, err := NewWriter(s, func(c Chunk) error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if _, err := w.WriteString(text); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return out, nil
}

// Snippets makes one chunk of each snippet of a Julep doc's content, indexed by its place in the list. Offsets
// are within the snippet (each snippet is its own text).
func Snippets(snippets []string) ([]Chunk, error) {
	out := make([]Chunk, len(snippets))
	for i, s := range snippets {
		toks, err := tokens.Split(Encoding, s)
		if err != nil {
			return nil, fmt.Errorf("chunk snippet %d: %w", i, err)
		}
		out[i] = Chunk{Index: i, Text: s, End: int64(len(s)), EndChar: int64(utf8.RuneCountInString(s)), Tokens: len(toks)}
	}
	return out, nil
}
