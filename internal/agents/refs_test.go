package agents

import (
	"slices"
	"testing"
)

func TestEmbedRefs(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want []string
	}{
		{"Mask out the background in #1", []string{"1"}},
		{"compare #a and #b_2, then #a again", []string{"a", "b_2"}},
		{"a literal ##1 is no reference", nil},
		{"but ###1 is one after a literal #", []string{"1"}},
		{"C# and # alone are not references", nil},
		{"unicode keys: #café.", []string{"café"}},
		{"", nil},
	}
	for _, c := range cases {
		if got := EmbedRefs(c.text); !slices.Equal(got, c.want) {
			t.Errorf("EmbedRefs(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestValidEmbedKey(t *testing.T) {
	t.Parallel()
	for key, want := range map[string]bool{"1": true, "img_2": true, "": false, "a-b": false, "a b": false} {
		if got := ValidEmbedKey(key); got != want {
			t.Errorf("ValidEmbedKey(%q) = %v, want %v", key, got, want)
		}
	}
}
