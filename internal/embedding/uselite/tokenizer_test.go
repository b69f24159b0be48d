package uselite

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testTokenizer has the six control pieces, then a small vocabulary. Scores are log probabilities. The unknown
// piece is U+FFFD, one code unit long, as in the real vocabulary: the best path is walked back by the length of
// each piece's text, so that length matters.
func testTokenizer(t *testing.T, pieces ...any) *Tokenizer {
	t.Helper()
	names := []string{unknown, "<s>", "</s>", "x1", "x2", "x3"}
	scores := make([]float64, 6)
	for i := 0; i < len(pieces); i += 2 {
		names = append(names, pieces[i].(string))
		scores = append(scores, pieces[i+1].(float64))
	}
	tok, err := NewTokenizer(names, scores)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

const unknown = "\uFFFD"

func (t *Tokenizer) pieceStrings(ids []int32) []string {
	var out []string
	for _, id := range ids {
		out = append(out, t.Piece(id))
	}
	return out
}

func TestEncodePicksTheMostProbableSegmentation(t *testing.T) {
	t.Parallel()
	tok := testTokenizer(t,
		"▁", -2.0, "▁a", -3.0, "b", -2.5, "▁ab", -4.0, "a", -3.0, "c", -3.0, "▁abc", -20.0, "bc", -4.0)
	tests := []struct {
		text string
		want []string
	}{
		{"ab", []string{"▁ab"}},                // -4 beats ▁a b (-5.5) and ▁ a b (-7.5)
		{"abc", []string{"▁ab", "c"}},          // ▁a bc and ▁ab c both score -7: the later candidate wins
		{"ab ab", []string{"▁ab", "▁ab"}},      // spaces become word boundaries
		{"ab?!", []string{"▁ab", unknown}},     // a run of unknown characters is one unknown piece, scoring 0
		{"a\tb", []string{"▁a", unknown, "b"}}, // only U+0020 is a word boundary
		{"ﬁ", []string{"▁", unknown}},          // NFKC makes "fi": neither letter is a piece
	}
	for _, tt := range tests {
		if got := tok.pieceStrings(tok.Encode(tt.text)); !slices.Equal(got, tt.want) {
			t.Errorf("Encode(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

func TestEncodeTiesGoToTheLastCandidate(t *testing.T) {
	t.Parallel()
	// "▁ab" can be "▁a"+"b" (start 0 then 2) or "▁"+"ab" (start 0 then 1): both score -4. The reference keeps
	// the candidate visited last, the one whose last piece starts later.
	tok := testTokenizer(t, "▁", -2.0, "▁a", -2.0, "b", -2.0, "ab", -2.0)
	if got := tok.pieceStrings(tok.Encode("ab")); !slices.Equal(got, []string{"▁a", "b"}) {
		t.Errorf("Encode(ab) = %q, want [▁a b]", got)
	}
}

func TestEncodeNormalises(t *testing.T) {
	t.Parallel()
	tok := testTokenizer(t, "▁fi", -1.0, "▁", -5.0, "1", -3.0)
	for _, text := range []string{"ﬁ", "ｆｉ", "fi"} {
		if got := tok.pieceStrings(tok.Encode(text)); !slices.Equal(got, []string{"▁fi"}) {
			t.Errorf("Encode(%q) = %q, want [▁fi]", text, got)
		}
	}
	// A no-break space is a space after NFKC, so it is a word boundary; ① is 1.
	if got := tok.pieceStrings(tok.Encode("fi\u00a0①")); !slices.Equal(got, []string{"▁fi", "▁", "1"}) {
		t.Errorf("Encode(fi NBSP ①) = %q, want [▁fi ▁ 1]", got)
	}
	if got := tok.Encode(""); len(got) != 0 {
		t.Errorf("Encode(\"\") = %v, want no pieces", got)
	}
}

func TestNewTokenizerErrors(t *testing.T) {
	t.Parallel()
	control := []string{unknown, "<s>", "</s>", "a", "b", "c"}
	if _, err := NewTokenizer(append(control, "x"), make([]float64, 6)); err == nil || !strings.Contains(err.Error(), "7 pieces but 6 scores") {
		t.Errorf("mismatched lengths: err = %v", err)
	}
	if _, err := NewTokenizer(control, make([]float64, 6)); err == nil || !strings.Contains(err.Error(), "at least one more") {
		t.Errorf("control pieces only: err = %v", err)
	}
	if _, err := NewTokenizer(append(control, ""), make([]float64, 7)); err == nil || !strings.Contains(err.Error(), "piece 6 is empty") {
		t.Errorf("empty piece: err = %v", err)
	}
	if _, err := NewTokenizer(append([]string{""}, append(control[1:], "x")...), make([]float64, 7)); err == nil || !strings.Contains(err.Error(), "unknown piece, is empty") {
		t.Errorf("empty unknown piece: err = %v", err)
	}
}

func TestLoadTokenizerErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"not-pairs.json": `[["a", 0, 1]]`,
		"bad-score.json": `[["a", "high"]]`,
		"not-array.json": `{"a": 0}`,
		"too-short.json": `[["a", 0]]`,
	} {
		path := filepath.Join(dir, name)
		os.WriteFile(path, []byte(content), 0o644)
		if _, err := LoadTokenizer(path); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("LoadTokenizer(%s): err = %v, want an error naming the file", name, err)
		}
	}
	if _, err := LoadTokenizer(filepath.Join(dir, "absent.json")); err == nil {
		t.Error("LoadTokenizer of a missing file: no error")
	}
}
