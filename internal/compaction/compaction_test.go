package compaction_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/compaction"
)

func sealer(t *testing.T, material byte, secret string) *compaction.Sealer {
	t.Helper()
	s, err := compaction.NewSealer(bytes.Repeat([]byte{material}, 32), secret)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSealOpensOnlyForItsAccountAndKey: a sealed summary opens for the account it was sealed for under the same
// deployment key, and for nothing else: another account, another deployment's material or secret, an altered or
// cut box, a box without its prefix.
func TestSealOpensOnlyForItsAccountAndKey(t *testing.T) {
	s := sealer(t, 1, "secret")
	box, err := s.Seal("acct_a", compaction.Summary{Text: "the summary written in clear", Model: "gpt-4o-mini", CreatedAt: 1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(box, "the summary written in clear") {
		t.Fatalf("the box shows the summary: %s", box)
	}
	got, err := s.Open("acct_a", box)
	if err != nil || got.Text != "the summary written in clear" || got.Model != "gpt-4o-mini" {
		t.Fatalf("open: %+v, %v", got, err)
	}
	flipped := []byte(box)
	flipped[len(flipped)-3] ^= 1
	for name, open := range map[string]func() error{
		"another account":  func() error { _, err := s.Open("acct_b", box); return err },
		"another material": func() error { _, err := sealer(t, 2, "secret").Open("acct_a", box); return err },
		"another secret":   func() error { _, err := sealer(t, 1, "other").Open("acct_a", box); return err },
		"altered":          func() error { _, err := s.Open("acct_a", string(flipped)); return err },
		"cut":              func() error { _, err := s.Open("acct_a", box[:12]); return err },
		"no prefix":        func() error { _, err := s.Open("acct_a", strings.TrimPrefix(box, "ctc1.")); return err },
		"empty":            func() error { _, err := s.Open("acct_a", ""); return err },
	} {
		if err := open(); !errors.Is(err, compaction.ErrNotOurs) {
			t.Errorf("%s: %v, want ErrNotOurs", name, err)
		}
	}
	if _, err := compaction.NewSealer(make([]byte, 16), ""); err == nil {
		t.Error("short key material accepted")
	}
}
