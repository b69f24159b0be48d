// Package embedding turns text into vectors. It holds the Embedder interface and the providers behind it:
// local (hashed n-gram features, no network), use-lite (Universal Sentence Encoder Lite in pure Go, when its
// weights are present), and remote OpenAI-compatible or Ollama endpoints.
//
// It must not import the event log, the read models or any face: callers hand it text and get vectors back.
package embedding

import "context"

// Embedder turns texts into vectors of a fixed dimension. Vectors are L2-normalised, so the dot product of two
// vectors is their cosine similarity.
type Embedder interface {
	// Name identifies the embedder and its model, e.g. "local", "use-lite", "openai/text-embedding-3-small".
	// Stored vectors record it, so that vectors made by another embedder are recomputed rather than compared.
	Name() string
	// Dim is the length of every vector Embed returns.
	Dim() int
	// Embed returns one vector per text, in order. An empty text yields a valid vector, not an error.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}
