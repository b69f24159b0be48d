package uselite

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// The tokenizer reproduces the one in @energetic-ai/embeddings 0.2.0 (itself from tfjs-models'
// universal-sentence-encoder), quirks included, because the model was trained on its output and the reference
// vectors are computed from it:
//   - text is NFKC-normalised, every U+0020 becomes "▁" and one "▁" is put in front (other whitespace is kept and
//     usually becomes the unknown piece);
//   - a character that starts no vocabulary piece becomes the unknown piece (id 0) with score 0, not a penalty,
//     so unknown characters are cheap, and runs of unknown pieces are merged into one;
//   - Viterbi keeps the last candidate among equal scores, and treats a best score of exactly 0 as "unset";
//   - the best path is walked back by each piece's length in UTF-16 code units while the lattice counts code
//     points; the two agree for this vocabulary, which has no piece outside the Basic Multilingual Plane.

const (
	// wordBoundary marks the start of a word, as SentencePiece does.
	wordBoundary = "\u2581"
	// reservedPieces are the control pieces at the head of the vocabulary (unknown, <s>, </s>, three extra ids);
	// they are never matched against text.
	reservedPieces = 6
	// unknownID is the piece every unmatched character becomes.
	unknownID = 0
)

// Tokenizer splits text into the pieces of a SentencePiece unigram vocabulary, choosing the segmentation with
// the highest total score. It is safe for concurrent use.
type Tokenizer struct {
	pieces []string
	// pieceLen16 is each piece's length in UTF-16 code units, the unit the reference walks the best path back in.
	pieceLen16 []int
	root       *trieNode
}

type trieNode struct {
	children map[rune]*trieNode
	// id is the piece ending here, or -1; score is its log probability.
	id    int32
	score float64
}

// vocabEntry is one element of vocab.json: [piece, score].
type vocabEntry struct {
	piece string
	score float64
}

func (e *vocabEntry) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("want [piece, score], got %d elements", len(pair))
	}
	if err := json.Unmarshal(pair[0], &e.piece); err != nil {
		return fmt.Errorf("piece: %w", err)
	}
	if err := json.Unmarshal(pair[1], &e.score); err != nil {
		return fmt.Errorf("score of %q: %w", e.piece, err)
	}
	return nil
}

// LoadTokenizer reads a vocabulary file (vocab.json: a JSON array of [piece, score] pairs, the piece's index
// being its id).
func LoadTokenizer(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	var entries []vocabEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("parse vocabulary %s: %w", path, err)
	}
	pieces := make([]string, len(entries))
	scores := make([]float64, len(entries))
	for i, e := range entries {
		pieces[i], scores[i] = e.piece, e.score
	}
	t, err := NewTokenizer(pieces, scores)
	if err != nil {
		return nil, fmt.Errorf("vocabulary %s: %w", path, err)
	}
	return t, nil
}

// NewTokenizer builds a tokenizer from pieces and their scores; a piece's index is its id. The first six pieces
// are control pieces and id 0 is the unknown piece.
func NewTokenizer(pieces []string, scores []float64) (*Tokenizer, error) {
	if len(pieces) != len(scores) {
		return nil, fmt.Errorf("%d pieces but %d scores", len(pieces), len(scores))
	}
	if len(pieces) <= reservedPieces {
		return nil, fmt.Errorf("%d pieces: want the %d control pieces and at least one more", len(pieces), reservedPieces)
	}
	if pieces[unknownID] == "" {
		// Encode walks the best path back by each piece's length; an empty unknown piece would never move.
		return nil, fmt.Errorf("piece %d, the unknown piece, is empty", unknownID)
	}
	t := &Tokenizer{
		pieces:     slices.Clone(pieces),
		pieceLen16: make([]int, len(pieces)),
		root:       &trieNode{id: -1},
	}
	for i, p := range pieces {
		t.pieceLen16[i] = len(utf16.Encode([]rune(p)))
		if i < reservedPieces {
			continue
		}
		if p == "" {
			return nil, fmt.Errorf("piece %d is empty", i)
		}
		node := t.root
		for _, r := range p {
			next := node.children[r]
			if next == nil {
				if node.children == nil {
					node.children = make(map[rune]*trieNode)
				}
				next = &trieNode{id: -1}
				node.children[r] = next
			}
			node = next
		}
		// A piece listed twice keeps its last id and score, as in the reference.
		node.id, node.score = int32(i), scores[i]
	}
	return t, nil
}

// Piece returns the text of piece id.
func (t *Tokenizer) Piece(id int32) string { return t.pieces[id] }

// VocabSize is the number of pieces.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// candidate is a lattice edge: the piece id covering symbols [start, end).
type candidate struct {
	start int
	id    int32
	score float64
}

// Encode returns the ids of the pieces text is split into. Text that normalises to nothing yields no ids.
func (t *Tokenizer) Encode(text string) []int32 {
	normalized := norm.NFKC.String(text)
	if normalized == "" {
		return nil
	}
	symbols := []rune(wordBoundary + strings.ReplaceAll(normalized, " ", wordBoundary))
	n := len(symbols)

	// ends[e] lists the pieces that end at symbol e, in increasing order of their start, which is the order
	// the reference visits them in (and, with ties going to the last one, the order matters).
	ends := make([][]candidate, n+1)
	for i := range n {
		matched := false
		node := t.root
		for j := i; j < n; j++ {
			node = node.children[symbols[j]]
			if node == nil {
				break
			}
			if node.id >= 0 {
				ends[j+1] = append(ends[j+1], candidate{start: i, id: node.id, score: node.score})
				matched = true
			}
		}
		if !matched {
			ends[i+1] = append(ends[i+1], candidate{start: i, id: unknownID, score: 0})
		}
	}

	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for end := 1; end <= n; end++ {
		for _, c := range ends[end] {
			score := c.score + best[c.start]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = c.id
			}
		}
	}

	var reversed []int32
	for at := n; at > 0; at -= t.pieceLen16[words[at]] {
		reversed = append(reversed, words[at])
	}
	ids := make([]int32, 0, len(reversed))
	previousUnknown := false
	for _, id := range reversed {
		if !(previousUnknown && id == unknownID) {
			ids = append(ids, id)
		}
		previousUnknown = id == unknownID
	}
	slices.Reverse(ids)
	return ids
}
