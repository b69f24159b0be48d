package embedding_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding"
)

func embedOne(t *testing.T, e embedding.Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestLocalIsDeterministicAndNormalised(t *testing.T) {
	t.Parallel()
	texts := []string{"", "   ", "?!", "reset my password", "Ünïcödé ﬁle 東京 🍕", "a a a a a a a a", "x"}
	a, err := embedding.NewLocal(embedding.DefaultLocalDim).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := embedding.NewLocal(embedding.DefaultLocalDim).Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		if len(a[i]) != embedding.DefaultLocalDim {
			t.Fatalf("%q: %d dimensions, want %d", text, len(a[i]), embedding.DefaultLocalDim)
		}
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("%q: two embedders gave different vectors", text)
		}
		if n := dot(a[i], a[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: squared norm %.6f, want 1", text, n)
		}
	}
}

func TestLocalSimilarTextsAreCloser(t *testing.T) {
	t.Parallel()
	e := embedding.NewLocal(embedding.DefaultLocalDim)
	tests := []struct{ text, similar, unrelated string }{
		{"book a table for two tonight", "booking a table for 2 people tonight", "what's the weather in Paris"},
		{"What is the current price for GOOG?", "current GOOG share price", "remind me to call mom"},
		{"translate good morning into Spanish", "how do you say good night in Spanish", "roll a die"},
		{"bokking a flight to Rome", "book flights to Rome", "track my package"}, // typo: n-grams still match
	}
	for _, tt := range tests {
		v := embedOne(t, e, tt.text)
		sim, unrel := dot(v, embedOne(t, e, tt.similar)), dot(v, embedOne(t, e, tt.unrelated))
		if sim <= unrel+0.1 {
			t.Errorf("%q: similar %q scores %.3f, unrelated %q %.3f", tt.text, tt.similar, sim, tt.unrelated, unrel)
		}
	}
}

func TestLocalNormalisesCaseAndCompatibilityForms(t *testing.T) {
	t.Parallel()
	e := embedding.NewLocal(64)
	for _, pair := range [][2]string{
		{"HELLO World", "hello world"},
		{"ﬁle", "file"},
		{"Ｆｕｌｌｗｉｄｔｈ", "fullwidth"},
		{"don't", "dont"},
		{"hello,   world!", "hello world"},
	} {
		if a, b := embedOne(t, e, pair[0]), embedOne(t, e, pair[1]); !slices.Equal(a, b) {
			t.Errorf("%q and %q embed differently", pair[0], pair[1])
		}
	}
	// Word order counts, a little.
	if c := dot(embedOne(t, e, "dog bites man"), embedOne(t, e, "man bites dog")); c >= 0.999 || c < 0.6 {
		t.Errorf("dog bites man vs man bites dog: %.3f, want close but not equal", c)
	}
}

func TestLocalDim(t *testing.T) {
	t.Parallel()
	if d := embedding.NewLocal(64).Dim(); d != 64 {
		t.Errorf("NewLocal(64).Dim() = %d", d)
	}
	if d := embedding.NewLocal(0).Dim(); d != embedding.DefaultLocalDim {
		t.Errorf("NewLocal(0).Dim() = %d, want the default %d", d, embedding.DefaultLocalDim)
	}
	if v := embedOne(t, embedding.NewLocal(64), "hello"); len(v) != 64 {
		t.Errorf("NewLocal(64) made a %d-dimensional vector", len(v))
	}
	if n := embedding.NewLocal(0).Name(); n != "local" {
		t.Errorf("Name() = %q, want local", n)
	}
}

func TestLocalStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := embedding.NewLocal(0).Embed(ctx, []string{"hello"}); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}
