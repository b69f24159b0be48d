package embedding_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
)

func testLogger() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), &buf
}

func TestSelectDefaultWithoutWeights(t *testing.T) {
	t.Parallel()
	logger, logs := testLogger()
	e, err := embedding.Select("", t.TempDir(), logger)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "local" {
		t.Errorf("default without weights: %s, want local", e.Name())
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "make models") {
		t.Errorf("want one Info line saying how to get the weights, got:\n%s", logs)
	}
}

func TestSelectDefaultWithWeights(t *testing.T) {
	t.Parallel()
	models := filepath.Dir(uselitetest.Dir(t))
	logger, logs := testLogger()
	e, err := embedding.Select("", models, logger)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "use-lite" || e.Dim() != 512 {
		t.Errorf("default with weights: %s (%d dimensions), want use-lite (512)", e.Name(), e.Dim())
	}
	if strings.Contains(logs.String(), "n-gram") {
		t.Errorf("logged the n-gram fallback although the weights are there:\n%s", logs)
	}
	if v := embedOne(t, e, "hello"); len(v) != 512 {
		t.Errorf("use-lite made a %d-dimensional vector", len(v))
	}

	// local is forced even when the weights are there.
	e, err = embedding.Select("local", models, logger)
	if err != nil || e.Name() != "local" {
		t.Errorf(`Select("local") = %v, %v; want local`, e, err)
	}
}

func TestSelectUseLiteWithoutWeights(t *testing.T) {
	t.Parallel()
	logger, _ := testLogger()
	dir := t.TempDir()
	_, err := embedding.Select("use-lite", dir, logger)
	if err == nil || !strings.Contains(err.Error(), "make models") || !strings.Contains(err.Error(), dir) {
		t.Errorf(`Select("use-lite") without weights: err = %v, want where they were looked for and how to get them`, err)
	}
}

func TestSelectBrokenWeights(t *testing.T) {
	t.Parallel()
	logger, _ := testLogger()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, embedding.UseLiteDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, embedding.UseLiteDir, "model.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Weights that are there but unreadable are an error, not a silent fall back to the weaker embedder.
	if _, err := embedding.Select("", dir, logger); err == nil || !strings.Contains(err.Error(), "model.json") {
		t.Errorf("broken weights: err = %v, want it to name model.json", err)
	}
}

// remoteEmbedder stands for a remote provider, which this package does not hold.
type remoteEmbedder struct{ name string }

func (r remoteEmbedder) Name() string { return r.name }
func (r remoteEmbedder) Dim() int     { return 3 }
func (r remoteEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	return make([][]float32, len(texts)), nil
}

func TestSelectRemote(t *testing.T) {
	t.Parallel()
	logger, _ := testLogger()
	if _, err := embedding.Select("openai/text-embedding-3-small", t.TempDir(), logger); !errors.Is(err, embedding.ErrRemoteUnavailable) {
		t.Errorf("remote spec without WithRemote: err = %v, want ErrRemoteUnavailable", err)
	}

	var gotProvider, gotModel string
	remote := embedding.WithRemote(func(provider, model string) (embedding.Embedder, error) {
		gotProvider, gotModel = provider, model
		if model == "missing" {
			return nil, errors.New("no such model")
		}
		return remoteEmbedder{name: provider + "/" + model}, nil
	})
	e, err := embedding.Select("ollama/nomic-embed-text", t.TempDir(), logger, remote)
	if err != nil || e.Name() != "ollama/nomic-embed-text" || gotProvider != "ollama" || gotModel != "nomic-embed-text" {
		t.Errorf("ollama spec: %v, %v (asked for %q %q)", e, err, gotProvider, gotModel)
	}
	if _, err := embedding.Select("openai/missing", t.TempDir(), logger, remote); err == nil || !strings.Contains(err.Error(), "no such model") {
		t.Errorf("remote error: err = %v, want it passed on", err)
	}
}

func TestSelectUnknownSpec(t *testing.T) {
	t.Parallel()
	logger, _ := testLogger()
	for _, spec := range []string{"bert", "openai/", "cohere/embed-v3", "LOCAL"} {
		if _, err := embedding.Select(spec, t.TempDir(), logger); err == nil || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("Select(%q): err = %v, want unknown", spec, err)
		}
	}
}
