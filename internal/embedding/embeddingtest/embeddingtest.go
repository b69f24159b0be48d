// Package embeddingtest holds what tests of embedding users share: an embedder that counts its work, and random
// unit vectors for benchmarks (what a vector search costs does not depend on what the vectors say). It is imported
// only by tests.
package embeddingtest

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"

	"github.com/contrailhq/contrail/internal/embedding"
)

// Counting is an embedder that counts the texts it embeds, to show that stored vectors spare the embedder.
type Counting struct {
	embedding.Embedder
	n atomic.Int64
}

// Embed embeds with the wrapped embedder, counting the texts.
func (c *Counting) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.n.Add(int64(len(texts)))
	return c.Embedder.Embed(ctx, texts)
}

// Texts is how many texts have been embedded.
func (c *Counting) Texts() int64 { return c.n.Load() }

// RandomUnit is a random vector of unit length.
func RandomUnit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		x := rng.NormFloat64()
		v[i] = float32(x)
		n += x * x
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}
