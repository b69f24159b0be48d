package embedding

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync/atomic"
)

// Remote embeds with a server: an OpenAI-compatible one (POST {base}/embeddings) or Ollama (POST {base}/api/embed).
// It batches long inputs and L2-normalises what comes back. It is safe for concurrent use.
type Remote struct {
	protocol remoteProtocol
	name     string
	url      string
	apiKey   string
	model    string
	client   *http.Client
	batch    int
	// fixedDim is the dimension the caller promised (RemoteDim); vectors of any other length are an error.
	fixedDim int
	// dim is the dimension in use: fixedDim, else learned from the first answer, else a known model's (a hint
	// until the first answer).
	dim     atomic.Int64
	learned atomic.Bool
}

type remoteProtocol int

const (
	remoteOpenAI remoteProtocol = iota
	remoteOllama
)

// RemoteOption adjusts a remote embedder.
type RemoteOption func(*Remote)

// RemoteDim says what dimension the model's vectors have: Dim reports it before the first call, and vectors of
// another length are an error rather than a silent change of dimension.
func RemoteDim(n int) RemoteOption { return func(r *Remote) { r.fixedDim = n } }

// RemoteBatchSize bounds the texts sent in one request (defaults: 128 to OpenAI-compatible servers, 32 to Ollama).
func RemoteBatchSize(n int) RemoteOption { return func(r *Remote) { r.batch = max(n, 1) } }

// remoteKnownDims are the dimensions of common embedding models, so that Dim has an answer before the first call. The
// first answer from the server overrides them.
var remoteKnownDims = map[string]int{
	"text-embedding-3-small": 1536,
	"text-embedding-3-large": 3072,
	"text-embedding-ada-002": 1536,
	"nomic-embed-text":       768,
	"mxbai-embed-large":      1024,
	"all-minilm":             384,
	"bge-m3":                 1024,
}

// NewOpenAI embeds with model on an OpenAI-compatible server. baseURL is the URL "/embeddings" is appended to
// (for OpenAI it ends in "/v1"); apiKey may be empty for servers that need none; client may be nil. Its name is
// "openai/<model>".
func NewOpenAI(baseURL, apiKey, model string, client *http.Client, opts ...RemoteOption) *Remote {
	return newRemote(remoteOpenAI, "openai/"+model, strings.TrimRight(baseURL, "/")+"/embeddings", apiKey, model, client, 128, opts)
}

// NewOllama embeds with model on an Ollama server at baseURL (its root, e.g. "http://127.0.0.1:11434"), using
// /api/embed (Ollama 0.3 and later). client may be nil. Its name is "ollama/<model>".
func NewOllama(baseURL, model string, client *http.Client, opts ...RemoteOption) *Remote {
	return newRemote(remoteOllama, "ollama/"+model, strings.TrimRight(baseURL, "/")+"/api/embed", "", model, client, 32, opts)
}

func newRemote(p remoteProtocol, name, url, apiKey, model string, client *http.Client, batch int, opts []RemoteOption) *Remote {
	if client == nil {
		client = &http.Client{}
	}
	r := &Remote{protocol: p, name: name, url: url, apiKey: apiKey, model: model, client: client, batch: batch}
	for _, o := range opts {
		o(r)
	}
	switch {
	case r.fixedDim > 0:
		r.dim.Store(int64(r.fixedDim))
	default:
		base, _, _ := strings.Cut(model, ":") // Ollama tags: "nomic-embed-text:v1.5"
		r.dim.Store(int64(remoteKnownDims[base]))
	}
	return r
}

// Name is "openai/<model>" or "ollama/<model>".
func (r *Remote) Name() string { return r.name }

// Dim is the vectors' dimension: the one given with RemoteDim, else the one the server answered with, else that
// of a well-known model; 0 when none of these is known yet (before the first Embed of an unknown model).
func (r *Remote) Dim() int { return int(r.dim.Load()) }

// Embed returns one L2-normalised vector per text. Servers refuse empty input, so an empty text is sent as a
// single space.
func (r *Remote) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += r.batch {
		batch := texts[start:min(start+r.batch, len(texts))]
		vecs, err := r.embedBatch(ctx, batch)
		if err != nil {
			return nil, fmt.Errorf("embed %d texts with %s at %s: %w", len(texts), r.name, r.url, err)
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (r *Remote) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	input := make([]string, len(texts))
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	var body any
	switch r.protocol {
	case remoteOllama:
		body = struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}{r.model, input}
	default:
		body = struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}{r.model, input, "float"}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.apiKey)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("server answered HTTP %d: %s", resp.StatusCode, remoteServerMessage(raw, resp.Status))
	}
	var vecs [][]float32
	switch r.protocol {
	case remoteOllama:
		var a struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("decode answer: %w", err)
		}
		vecs = a.Embeddings
	default:
		var a struct {
			Data []struct {
				Index     int       `json:"index"`
				Embedding []float32 `json:"embedding"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &a); err != nil {
			return nil, fmt.Errorf("decode answer: %w", err)
		}
		vecs = make([][]float32, len(a.Data))
		for _, d := range a.Data {
			if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
				return nil, fmt.Errorf("answer has a bad or repeated index %d", d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("answer has %d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if err := r.checkDim(len(v)); err != nil {
			return nil, err
		}
		if !remoteNormalize(v) {
			return nil, fmt.Errorf("vector %d is all zeros and cannot be normalised", i)
		}
	}
	return vecs, nil
}

// checkDim learns the dimension from the first vector and holds every later one to it.
func (r *Remote) checkDim(n int) error {
	if n == 0 {
		return errors.New("answer has an empty vector")
	}
	if r.fixedDim > 0 {
		if n != r.fixedDim {
			return fmt.Errorf("vectors have %d dimensions, but %d were expected", n, r.fixedDim)
		}
		return nil
	}
	if r.learned.Load() {
		if want := r.dim.Load(); int64(n) != want {
			return fmt.Errorf("vectors have %d dimensions, but earlier ones had %d", n, want)
		}
		return nil
	}
	// Two first answers racing both store their own length; the loser is caught by the check above next time.
	r.dim.Store(int64(n))
	r.learned.Store(true)
	return nil
}

// remoteServerMessage finds the message in an error answer: OpenAI's {"error":{"message"}}, Ollama's {"error":"..."},
// else the body itself.
func remoteServerMessage(raw []byte, status string) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		var s string
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		if json.Unmarshal(body.Error, &s) == nil && s != "" {
			return s
		}
	}
	if msg := strings.TrimSpace(string(raw)); msg != "" {
		if len(msg) > 500 {
			msg = msg[:500] + "..."
		}
		return msg
	}
	return status
}

// remoteNormalize scales v to unit length in place; it reports false for a zero vector.
func remoteNormalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
