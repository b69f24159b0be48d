package embedding_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/internal/embedding"
)

// remoteVector is what the test servers answer for a text: unnormalised, different per text, and of dim length.
func remoteVector(text string, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(len(text) + i + 1)
	}
	return v
}

// openAIServer speaks POST /v1/embeddings the way OpenAI does, answering the data out of order (clients must use
// the index) and recording the inputs of every request.
type openAIServer struct {
	*httptest.Server
	mu     sync.Mutex
	inputs [][]string
	dim    func(call int) int
}

func newOpenAIServer(t *testing.T, key string) *openAIServer {
	s := &openAIServer{dim: func(int) int { return 3 }}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"message":"Invalid URL (%s %s)","type":"invalid_request_error"}}`, r.Method, r.URL.Path)
			return
		}
		if r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-wrong.","type":"invalid_request_error","code":"invalid_api_key"}}`)
			return
		}
		var req struct {
			Model          string   `json:"model"`
			Input          []string `json:"input"`
			EncodingFormat string   `json:"encoding_format"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" || req.EncodingFormat != "float" {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":{"message":"bad request body"}}`)
			return
		}
		for _, in := range req.Input {
			if in == "" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":{"message":"'$.input' is invalid. Please check the API reference."}}`)
				return
			}
		}
		s.mu.Lock()
		s.inputs = append(s.inputs, req.Input)
		dim := s.dim(len(s.inputs))
		s.mu.Unlock()
		type datum struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []datum
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, datum{"embedding", i, remoteVector(req.Input[i], dim)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 1, "total_tokens": 1}})
	}))
	t.Cleanup(s.Close)
	return s
}

func checkUnitVectors(t *testing.T, texts []string, vecs [][]float32, dim int) {
	t.Helper()
	if len(vecs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		if len(v) != dim {
			t.Fatalf("vector %d has %d dimensions, want %d", i, len(v), dim)
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has squared norm %f, want 1", i, n)
		}
		// Each text's vector is its own, in the texts' order: compare with the server's, normalised.
		want := remoteVector(texts[i], dim)
		if strings.TrimSpace(texts[i]) == "" {
			want = remoteVector(" ", dim)
		}
		var wn float64
		for _, x := range want {
			wn += float64(x) * float64(x)
		}
		if math.Abs(float64(v[0])-float64(want[0])/math.Sqrt(wn)) > 1e-5 {
			t.Errorf("vector %d is not the one for %q", i, texts[i])
		}
	}
}

func TestRemoteOpenAIBatchesAndNormalises(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, "sk-test")
	e := embedding.NewOpenAI(srv.URL+"/v1/", "sk-test", "my-embedder", nil, embedding.RemoteBatchSize(2))
	if e.Name() != "openai/my-embedder" || e.Dim() != 0 {
		t.Errorf("before the first call: name %q, dim %d", e.Name(), e.Dim())
	}
	texts := []string{"a", "bb", "", "dddd", "eeeee"}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkUnitVectors(t, texts, vecs, 3)
	if e.Dim() != 3 {
		t.Errorf("dim learned = %d, want 3", e.Dim())
	}
	if len(srv.inputs) != 3 || len(srv.inputs[0]) != 2 || len(srv.inputs[2]) != 1 || srv.inputs[1][0] != " " {
		t.Errorf("requests = %q, want batches of 2 with the empty text sent as a space", srv.inputs)
	}
}

func TestRemoteOpenAIKnownModelDim(t *testing.T) {
	t.Parallel()
	e := embedding.NewOpenAI("http://127.0.0.1:1/v1", "", "text-embedding-3-small", nil)
	if e.Dim() != 1536 {
		t.Errorf("dim = %d, want 1536 before any call", e.Dim())
	}
	if e := embedding.NewOllama("http://127.0.0.1:1", "nomic-embed-text:v1.5", nil); e.Dim() != 768 {
		t.Errorf("ollama dim = %d, want 768", e.Dim())
	}
}

func TestRemoteOpenAIErrorsNameTheServerMessage(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, "sk-test")
	e := embedding.NewOpenAI(srv.URL+"/v1", "sk-wrong", "m", nil)
	_, err := e.Embed(t.Context(), []string{"hi"})
	if err == nil || !strings.Contains(err.Error(), "Incorrect API key provided") || !strings.Contains(err.Error(), "401") ||
		!strings.Contains(err.Error(), "openai/m") {
		t.Errorf("error = %v, want the server's message, status and the embedder's name", err)
	}
}

func TestRemoteDimensionMustStayTheSame(t *testing.T) {
	t.Parallel()
	srv := newOpenAIServer(t, "k")
	srv.dim = func(call int) int { return 2 + call } // 3, then 4
	e := embedding.NewOpenAI(srv.URL+"/v1", "k", "m", nil)
	if _, err := e.Embed(t.Context(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(t.Context(), []string{"y"}); err == nil || !strings.Contains(err.Error(), "4 dimensions") {
		t.Errorf("error = %v, want a dimension change reported", err)
	}

	fixed := embedding.NewOpenAI(srv.URL+"/v1", "k", "m", nil, embedding.RemoteDim(8))
	if fixed.Dim() != 8 {
		t.Errorf("dim = %d, want 8", fixed.Dim())
	}
	if _, err := fixed.Embed(t.Context(), []string{"z"}); err == nil || !strings.Contains(err.Error(), "8 were expected") {
		t.Errorf("error = %v, want the promised dimension enforced", err)
	}
}

// ollamaServer speaks Ollama's POST /api/embed.
func ollamaServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/embed" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":%q}`, err.Error())
			return
		}
		if req.Model != "nomic-embed-text" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":"model \"%s\" not found, try pulling it first"}`, req.Model)
			return
		}
		var embs [][]float32
		for _, in := range req.Input {
			embs = append(embs, remoteVector(in, 4))
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": embs, "total_duration": 1000})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRemoteOllama(t *testing.T) {
	t.Parallel()
	srv := ollamaServer(t)
	e := embedding.NewOllama(srv.URL, "nomic-embed-text", nil)
	if e.Name() != "ollama/nomic-embed-text" {
		t.Errorf("name = %q", e.Name())
	}
	texts := []string{"reset my password", "forgot my login", ""}
	vecs, err := e.Embed(t.Context(), texts)
	if err != nil {
		t.Fatal(err)
	}
	checkUnitVectors(t, texts, vecs, 4)

	missing := embedding.NewOllama(srv.URL, "llama3", nil)
	_, err = missing.Embed(t.Context(), []string{"hi"})
	if err == nil || !strings.Contains(err.Error(), `model "llama3" not found, try pulling it first`) {
		t.Errorf("error = %v, want Ollama's message", err)
	}
}

func TestRemoteCanceled(t *testing.T) {
	t.Parallel()
	srv := ollamaServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := embedding.NewOllama(srv.URL, "nomic-embed-text", nil).Embed(ctx, []string{"hi"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
}

func TestRemoteBadAnswers(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"too few vectors": `{"data":[{"index":0,"embedding":[1,2]}]}`,
		"repeated index":  `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`,
		"zero vector":     `{"data":[{"index":0,"embedding":[0,0]},{"index":1,"embedding":[3,4]}]}`,
		"not JSON":        `<html>gateway</html>`,
		"an empty vector": `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[3,4]}]}`,
	}
	for name, body := range cases {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		_, err := embedding.NewOpenAI(srv.URL, "", "m", nil).Embed(t.Context(), []string{"a", "b"})
		srv.Close()
		if err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

var _ embedding.Embedder = (*embedding.Remote)(nil)
