package julepapi_test

import (
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// Julep's SDKs retry a POST that got no answer, or a 408, 409, 429 or 5xx, with the same body and an
// x-stainless-retry-count: a retried create returns what the first made, and makes nothing more. The same body sent
// afresh (no retry count) is a new request. An Idempotency-Key is honoured, and refused for another body.
func TestRetriedCreatesMakeOneObject(t *testing.T) {
	e := newEnv(t)
	body := map[string]any{"name": "once"}
	first := e.must(t, http.StatusCreated, "POST", "/agents", body, "x-stainless-retry-count: 0")
	again := e.must(t, http.StatusCreated, "POST", "/agents", body, "x-stainless-retry-count: 1")
	if again["id"] != first["id"] || again["created_at"] != first["created_at"] {
		t.Fatalf("a retry made another agent: %v, then %v", first["id"], again["id"])
	}
	if n := len(items(t, e.must(t, http.StatusOK, "GET", "/agents", nil))); n != 1 {
		t.Fatalf("%d agents after a create and its retry", n)
	}
	fresh := e.must(t, http.StatusCreated, "POST", "/agents", body)
	if fresh["id"] == first["id"] {
		t.Fatalf("the same body sent afresh returned the first agent")
	}

	u1 := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "u"}, "Idempotency-Key: k-1")
	u2 := e.must(t, http.StatusCreated, "POST", "/users", map[string]any{"name": "u"}, "Idempotency-Key: k-1")
	if u1["id"] != u2["id"] {
		t.Fatalf("an Idempotency-Key made two users: %v %v", u1["id"], u2["id"])
	}
	r := e.do(t, "POST", "/users", map[string]any{"name": "other"}, "Idempotency-Key: k-1")
	if status, msg, _ := errorOf(t, r); status != 422 || msg == "" {
		t.Fatalf("a key reused for another body: %d %s", status, r.body)
	}
	// Another account's same key is its own.
	_, other := e.node.NewAccount(t, "other")
	if r := e.doAs(t, other, "POST", "/users", map[string]any{"name": "u"}, "Idempotency-Key: k-1"); r.status != http.StatusCreated || r.obj(t)["id"] == u1["id"] {
		t.Fatalf("another account's key: %d %s", r.status, r.body)
	}

	agent := first["id"].(string)
	doc := map[string]any{"title": "t", "content": "some text"}
	d1 := e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", doc)
	d2 := e.must(t, http.StatusCreated, "POST", "/agents/"+agent+"/docs", doc, "x-stainless-retry-count: 2")
	if d1["id"] != d2["id"] || len(items(t, e.must(t, http.StatusOK, "GET", "/agents/"+agent+"/docs", nil))) != 1 {
		t.Fatalf("a retried doc create: %v %v", d1["id"], d2["id"])
	}
	sess := map[string]any{"agent": agent}
	s1 := e.must(t, http.StatusCreated, "POST", "/sessions", sess)
	s2 := e.must(t, http.StatusCreated, "POST", "/sessions", sess, "x-stainless-retry-count: 1")
	if s1["id"] != s2["id"] {
		t.Fatalf("a retried session create: %v %v", s1["id"], s2["id"])
	}

	// A delete retried after it succeeded is not a 404.
	e.must(t, http.StatusAccepted, "DELETE", "/agents/"+fresh["id"].(string), nil)
	e.must(t, http.StatusAccepted, "DELETE", "/agents/"+fresh["id"].(string), nil, "x-stainless-retry-count: 1")
	if r := e.do(t, "DELETE", "/agents/"+fresh["id"].(string), nil); r.status != http.StatusNotFound {
		t.Fatalf("a new delete of a deleted agent: %d", r.status)
	}
}

// A retried chat is one turn: retried after its answer, it answers the same; retried while the first attempt still
// waits for the model, both get the one answer; the model is asked once and the history holds the turn once.
func TestRetriedChatIsOneTurn(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent})
	e.model.Enqueue(llmtest.Text("first answer"))
	body := userMsg("hello")
	a := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body)
	b := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body, "x-stainless-retry-count: 1")
	if a["id"] != b["id"] || b["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] != "first answer" {
		t.Fatalf("retry answered %v, first %v", b, a)
	}

	e.model.Enqueue(llmtest.Text("slow answer").WithDelay(700 * time.Millisecond))
	slow := userMsg("take your time")
	var wg sync.WaitGroup
	answers := make([]map[string]any, 2)
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h []string
			if i == 1 {
				time.Sleep(150 * time.Millisecond) // the first attempt is in; the client gave up on it
				h = []string{"x-stainless-retry-count: 1"}
			}
			answers[i] = e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", slow, h...)
		}()
	}
	wg.Wait()
	if answers[0]["id"] != answers[1]["id"] {
		t.Fatalf("a retry during the first attempt made another turn: %v %v", answers[0]["id"], answers[1]["id"])
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Fatalf("the model was asked %d times for 2 turns", n)
	}
	if entries := e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any); len(entries) != 4 {
		t.Fatalf("history of 2 turns: %d entries", len(entries))
	}
}

// A chat whose model failed answers 503 (which the SDKs retry), and saves nothing; its retry is a new turn that
// can succeed, so the question is in the history once.
func TestRetryAfterAFailedChat(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent})
	// A Retry-After past what the provider waits for: the failure comes back at once, not retried by the provider.
	e.model.Enqueue(llmtest.Error(http.StatusServiceUnavailable, "overloaded").WithHeader("Retry-After", "120"), llmtest.Text("now it works"))
	body := userMsg("hello")
	r := e.do(t, "POST", "/sessions/"+sid+"/chat", body)
	if status, msg, _ := errorOf(t, r); status != http.StatusServiceUnavailable || msg == "" {
		t.Fatalf("failed chat: %d %s", status, r.body)
	}
	ok := e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body, "x-stainless-retry-count: 1")
	if ok["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"] != "now it works" {
		t.Fatalf("the retry: %v", ok)
	}
	entries := e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any)
	if len(entries) != 2 || entries[0].(map[string]any)["content"] != "hello" {
		t.Fatalf("history after a failure and a retry: %v", entries)
	}
}
