package julepapi_test

import (
	"crypto/sha256"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// Docs of an agent and a user: made, listed, read, searched by text, by vector and by both with metadata filters
// right after they are made, and deleted.
func TestDocs(t *testing.T) {
	e := newEnv(t)
	agent, user := e.persona(t)
	paris := e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{
		"title": "Paris", "content": "Paris is the capital of France; the Eiffel tower stands there.",
		"metadata": map[string]any{"topic": "geo", "lang": "en"}})
	pid := paris["id"].(string)
	// The doc is found by the very next request: no indexing delay.
	hits := e.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "Eiffel tower"})["docs"].([]any)
	if len(hits) != 1 || hits[0].(map[string]any)["id"] != pid {
		t.Fatalf("text search right after create: %v", hits)
	}
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{
		"title": "Rome", "content": []string{"Rome is the capital of Italy.", "The Colosseum is in Rome."},
		"metadata": map[string]any{"topic": "geo", "lang": "it"}})
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{
		"title": "Bread", "content": "Knead the dough and bake it for forty minutes.", "metadata": map[string]any{"topic": "food"}})
	e.must(t, http.StatusCreated, "POST", "/users/"+user+"/docs", map[string]any{"title": "Grace's notes", "content": "Grace likes the Colosseum."})

	if list := items(t, e.must(t, http.StatusOK, "GET", "/agents/"+agent+"/docs", nil)); len(list) != 3 {
		t.Fatalf("agent docs: %v", list)
	}
	if list := items(t, e.must(t, http.StatusOK, "GET", "/users/"+user+"/docs", nil)); len(list) != 1 {
		t.Fatalf("user docs: %v", list)
	}
	if list := items(t, e.must(t, http.StatusOK, "GET", "/agents/"+agent+"/docs?metadata_filter=%7B%22lang%22%3A%22it%22%7D", nil)); len(list) != 1 || list[0]["title"] != "Rome" {
		t.Fatalf("listed with a metadata filter: %v", list)
	}
	got := e.must(t, http.StatusOK, "GET", "/docs/"+pid, nil)
	if got["title"] != "Paris" || got["embedding_dimensions"].(float64) <= 0 || got["embeddings"] != nil {
		t.Fatalf("get doc: %v", got)
	}
	if vecs := e.must(t, http.StatusOK, "GET", "/docs/"+pid+"?include_embeddings=true", nil)["embeddings"].([]any); len(vecs) != int(got["embedding_dimensions"].(float64)) {
		t.Fatalf("embeddings: %d numbers", len(vecs))
	}

	vec := e.must(t, http.StatusOK, "POST", "/embed", map[string]any{"text": "the capital of Italy"})["vectors"].([]any)[0]
	byVector := e.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"vector": vec, "confidence": -1, "limit": 3})["docs"].([]any)
	if len(byVector) != 3 || byVector[0].(map[string]any)["title"] != "Rome" {
		t.Fatalf("vector search: %v", byVector)
	}
	hybrid := e.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "capital", "vector": vec,
		"alpha": 0.5, "confidence": -1, "metadata_filter": map[string]any{"lang": "en"}})["docs"].([]any)
	if len(hybrid) != 1 || hybrid[0].(map[string]any)["title"] != "Paris" {
		t.Fatalf("hybrid search with a metadata filter: %v", hybrid)
	}
	ref := hybrid[0].(map[string]any)
	if owner := ref["owner"].(map[string]any); owner["role"] != "agent" || owner["id"] != agent || ref["snippet"].(map[string]any)["content"] == "" {
		t.Fatalf("doc reference: %v", ref)
	}
	if two := e.must(t, http.StatusOK, "POST", "/embed", map[string]any{"text": []string{"a", "b"}})["vectors"].([]any); len(two) != 2 {
		t.Fatalf("embed two: %v", two)
	}

	e.must(t, http.StatusAccepted, "DELETE", "/agents/"+agent+"/docs/"+pid, nil)
	if hits := e.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "Eiffel tower"})["docs"].([]any); len(hits) != 0 {
		t.Fatalf("a deleted doc is still found: %v", hits)
	}
	if r := e.do(t, "GET", "/docs/"+pid, nil); r.status != http.StatusNotFound {
		t.Fatalf("get a deleted doc: %d %s", r.status, r.body)
	}
	// A doc is deleted through its owner; another owner's path does not find it.
	rome := items(t, e.must(t, http.StatusOK, "GET", "/agents/"+agent+"/docs?metadata_filter[lang]=it", nil))[0]["id"].(string)
	if r := e.do(t, "DELETE", "/users/"+user+"/docs/"+rome, nil); r.status != http.StatusNotFound {
		t.Fatalf("delete through another owner: %d %s", r.status, r.body)
	}

	bad := []struct {
		path string
		body any
		want int
	}{
		{"/agents/" + agent + "/docs", map[string]any{"content": "no title"}, 422},
		{"/agents/" + agent + "/docs", map[string]any{"title": "t", "content": 5}, 422},
		{"/agents/" + agent + "/docs", map[string]any{"title": "t", "content": strings.Repeat("x", 30001)}, 422},
		{"/agents/" + agent + "/search", map[string]any{}, 422},
		{"/agents/" + agent + "/search", map[string]any{"text": "x", "limit": 500}, 422},
		{"/agents/" + agent + "/search", map[string]any{"vector": []float64{1, 2, 3}}, 422},
		{"/agents/00000000-0000-4000-8000-000000000000/docs", map[string]any{"title": "t", "content": "c"}, 404},
	}
	for _, c := range bad {
		if r := e.do(t, "POST", c.path, c.body); r.status != c.want {
			t.Errorf("POST %s %v: %d, want %d: %s", c.path, c.body, r.status, c.want, r.body)
		}
	}
}

// A chat with recall finds the agent's and the user's docs, puts them in the system prompt through Julep's default
// template, and lists them in the answer's docs.
func TestChatRecall(t *testing.T) {
	e := newEnv(t)
	agent, user := e.persona(t)
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "Tower", "content": "The Eiffel tower is 330 metres tall."})
	e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "Bread", "content": "Knead the dough and bake it."})
	e.must(t, http.StatusCreated, "POST", "/users/"+user+"/docs", map[string]any{"title": "Grace", "content": "Grace climbed the Eiffel tower in 1950."})
	sid := e.session(t, map[string]any{"agent": agent, "user": user, "recall_options": map[string]any{"mode": "text", "limit": 5}})
	e.model.Enqueue(llmtest.Text("330 metres."))
	resp := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("How tall is the Eiffel tower?"))
	docs := resp["docs"].([]any)
	titles := map[string]bool{}
	for _, d := range docs {
		titles[d.(map[string]any)["title"].(string)] = true
	}
	if len(docs) != 2 || !titles["Tower"] || !titles["Grace"] {
		t.Fatalf("recalled docs: %v", docs)
	}
	system := e.model.Requests()[0].Messages[0].Content
	if !strings.Contains(system, "Relevant documents:") || !strings.Contains(system, "The Eiffel tower is 330 metres tall.") || strings.Contains(system, "Knead") {
		t.Fatalf("system prompt with docs:\n%s", system)
	}
	// recall: false leaves the docs out.
	e.model.Enqueue(llmtest.Text("ok"))
	body := userMsg("How tall is the Eiffel tower?")
	body["recall"] = false
	if docs := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body)["docs"].([]any); len(docs) != 0 {
		t.Fatalf("recall false: %v", docs)
	}
}

// embedServer is an OpenAI-compatible embeddings server that counts the texts it embeds.
type embedServer struct {
	URL   string
	texts atomic.Int64
}

func newEmbedServer(t testing.TB) *embedServer {
	s := &embedServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		s.texts.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		out := make([]item, len(req.Input))
		for i, text := range req.Input {
			out[i] = item{Index: i, Embedding: wordVector(text)}
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": out, "model": "test-embed"})
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/v1"
	return s
}

// wordVector embeds text as a bag of hashed words in 16 dimensions: texts sharing words are near.
func wordVector(text string) []float64 {
	v := make([]float64, 16)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		h := sha256.Sum256([]byte(strings.Trim(w, ".,?!;")))
		v[h[0]%16]++
	}
	var n float64
	for _, x := range v {
		n += x * x
	}
	if n == 0 {
		v[0], n = 1, 1
	}
	for i := range v {
		v[i] /= math.Sqrt(n)
	}
	return v
}

// A doc's vectors are made once, when it is created: a restarted node, and another node of the cluster, index it
// from the log without embedding it again, and find it at once.
func TestDocsAreEmbeddedOnce(t *testing.T) {
	emb := newEmbedServer(t)
	model := llmtest.NewServer(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	withEmb := platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Embeddings = emb.URL, "sk-test", "openai/test-embed"
	})
	dir := t.TempDir()
	n1 := platformtest.Start(t, withEmb, platformtest.WithDataDir(dir),
		platformtest.WithConfig(func(c *config.Config) { c.NATSListen, c.NATSListenSet = addr, true }))
	_, key := n1.NewAccount(t, "once")
	e1 := &env{node: n1, model: model, key: key}
	agent := e1.agent(t, map[string]any{"name": "librarian"})
	for _, d := range []map[string]any{
		{"title": "Tower", "content": "The Eiffel tower is in Paris."},
		{"title": "Bread", "content": []string{"Knead the dough.", "Bake the bread."}},
	} {
		e1.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", d)
	}
	made := emb.texts.Load()
	if made != 3 {
		t.Fatalf("embedded %d texts for 3 snippets", made)
	}

	// Another node on the same NATS finds the docs by text without embedding anything.
	n2 := platformtest.Start(t, withEmb, platformtest.WithConfig(func(c *config.Config) { c.NATSURL = "nats://" + addr }))
	e2 := &env{node: n2, model: model, key: key}
	if hits := e2.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "dough"})["docs"].([]any); len(hits) != 1 {
		t.Fatalf("search on another node: %v", hits)
	}
	// A doc made on one node is found on the other by the next request.
	e1.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", map[string]any{"title": "Louvre", "content": "The Louvre is a museum."})
	if hits := e2.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "museum"})["docs"].([]any); len(hits) != 1 {
		t.Fatalf("a doc made on node 1, searched on node 2: %v", hits)
	}
	if got := emb.texts.Load(); got != made+1 {
		t.Fatalf("embedded %d texts; want %d (the new doc's one snippet only)", got, made+1)
	}
	n2.Stop()

	// The first node restarts on its data: the docs are there, with the vectors they were made with.
	n1.Stop()
	n1 = platformtest.Start(t, withEmb, platformtest.WithDataDir(dir))
	e1 = &env{node: n1, model: model, key: key}
	before := emb.texts.Load()
	if hits := e1.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "Eiffel"})["docs"].([]any); len(hits) != 1 {
		t.Fatalf("text search after a restart: %v", hits)
	}
	hits := e1.must(t, http.StatusOK, "POST", "/agents/"+agent+"/search", map[string]any{"text": "bake bread", "vector": wordVector("bake bread"), "confidence": 0.1})["docs"].([]any)
	if len(hits) == 0 || hits[0].(map[string]any)["title"] != "Bread" {
		t.Fatalf("hybrid search after a restart: %v", hits)
	}
	if got := emb.texts.Load(); got != before {
		t.Fatalf("the restarted node embedded %d texts again", got-before)
	}
}
