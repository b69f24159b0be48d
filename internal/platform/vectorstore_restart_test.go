package platform_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	embedding.Embedder
	texts *atomic.Int64
}

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

func counting(n *atomic.Int64) platformtest.Option {
	return platformtest.WithEmbedder(func(e embedding.Embedder) embedding.Embedder { return countingEmbedder{e, n} })
}

// TestAVectorStoreIsSearchableAfterARestartWithoutEmbeddingAgain: the node that comes back on the data dir indexes
// the stored chunks with their stored vectors; the only text it embeds is the query.
func TestAVectorStoreIsSearchableAfterARestartWithoutEmbeddingAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var before, after atomic.Int64
	first := platformtest.Start(t, platformtest.WithDataDir(dir), counting(&before))
	_, key := first.NewAccount(t, "alice")
	file := uploadFile(t, first, key, "boiler.txt", strings.Repeat("Every three months run the descaling solution through the boiler. ", 400))
	var vs struct {
		ID string `json:"id"`
	}
	r := first.Do(t, key, "POST", "/v1/vector_stores", map[string]any{"file_ids": []string{file}})
	r.JSON(t, &vs)
	if r.Status != 200 {
		t.Fatalf("create store: %d %s", r.Status, r.Body)
	}
	waitStoreProcessed(t, first, key, vs.ID)
	if before.Load() == 0 {
		t.Fatal("the first node embedded nothing")
	}
	first.Stop()

	again := platformtest.Start(t, platformtest.WithDataDir(dir), counting(&after))
	r = again.Do(t, key, "POST", "/v1/vector_stores/"+vs.ID+"/search", map[string]any{"query": "descaling the boiler"})
	var res struct {
		Data []struct {
			FileID string `json:"file_id"`
		} `json:"data"`
	}
	r.JSON(t, &res)
	if r.Status != 200 || len(res.Data) == 0 || res.Data[0].FileID != file {
		t.Fatalf("search after the restart: %d %s", r.Status, r.Body)
	}
	if n := after.Load(); n != 1 {
		t.Fatalf("the restarted node embedded %d texts; only the query should be (the first node embedded %d)", n, before.Load())
	}
}
