package julepapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// env is a running node whose openai provider is a scripted OpenAI-compatible server, and a fresh account's key.
type env struct {
	node  *platformtest.Node
	model *llmtest.Server
	key   string
}

func newEnv(t testing.TB, opts ...platformtest.Option) *env {
	t.Helper()
	model := llmtest.NewServer(t)
	opts = append([]platformtest.Option{platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test-upstream"
	})}, opts...)
	n := platformtest.Start(t, opts...)
	_, key := n.NewAccount(t, "tester")
	return &env{node: n, model: model, key: key}
}

// reply is an HTTP answer read whole.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// obj decodes the body as a JSON object.
func (r reply) obj(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

// do sends a request under /julep with the env's key, a JSON body (unless nil) and headers ("Name: value").
func (e *env) do(t testing.TB, method, path string, body any, headers ...string) reply {
	return e.doAs(t, e.key, method, path, body, headers...)
}

func (e *env) doAs(t testing.TB, key, method, path string, body any, headers ...string) reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.node.URL+"/julep"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		k, v, _ := strings.Cut(h, ":")
		req.Header.Set(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: raw}
}

// must sends a request and fails the test unless it answers want; it returns the body as an object.
func (e *env) must(t testing.TB, want int, method, path string, body any, headers ...string) map[string]any {
	t.Helper()
	r := e.do(t, method, path, body, headers...)
	if r.status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, want, r.body)
	}
	return r.obj(t)
}

// agent makes an agent and returns its ID.
func (e *env) agent(t testing.TB, body map[string]any) string {
	t.Helper()
	return e.must(t, http.StatusCreated, "POST", "/agents", body)["id"].(string)
}

// items is a list answer's items.
func items(t testing.TB, m map[string]any) []map[string]any {
	t.Helper()
	raw, ok := m["items"].([]any)
	if !ok {
		t.Fatalf("no items in %v", m)
	}
	out := make([]map[string]any, len(raw))
	for i, x := range raw {
		out[i] = x.(map[string]any)
	}
	return out
}

// errorOf is the error object of an answer, and its status.
func errorOf(t testing.TB, r reply) (int, string, map[string]any) {
	t.Helper()
	m := r.obj(t)
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %s", r.body)
	}
	msg, _ := e["message"].(string)
	return r.status, msg, e
}

// llmtestCall is a tool call the scripted model makes.
func llmtestCall(id, name, args string) llm.ToolCall {
	return llm.ToolCall{ID: id, Name: name, Arguments: args}
}
