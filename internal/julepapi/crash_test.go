package julepapi_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// A node dies while a chat waits on the model. The client's retry, to the node started again on the same data, gets
// the one turn's answer: the turn resumed from the log, its question saved once, answered once.
func TestCrashMidChat(t *testing.T) {
	model := llmtest.NewServer(t)
	var restarted atomic.Bool
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if !restarted.Load() {
			return llmtest.Text("never sent").WithDelay(time.Hour) // the node dies while it waits
		}
		return llmtest.Text("Answer to: " + req.LastMessage().Content)
	})
	dir := t.TempDir()
	withModel := platformtest.WithConfig(func(c *config.Config) { c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test" })
	n := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	_, key := n.NewAccount(t, "survivor")
	e := &env{node: n, model: model, key: key}
	agent, _ := e.persona(t)
	sid := e.session(t, map[string]any{"agent": agent})
	body := userMsg("a question asked before the crash")

	first := make(chan int, 1)
	go func() {
		// The first attempt never gets its answer: the node dies under it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", n.URL+"/julep/sessions/"+sid+"/chat", strings.NewReader(`{"messages":[{"role":"user","content":"a question asked before the crash"}]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	for deadline := time.Now().Add(20 * time.Second); len(model.Requests()) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the model was never asked")
		}
	}
	n.Crash()
	if status := <-first; status == http.StatusCreated {
		t.Fatalf("the first attempt was answered before the crash")
	}
	restarted.Store(true)
	n2 := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	e2 := &env{node: n2, model: model, key: key}
	resp := e2.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", body, "x-stainless-retry-count: 1")
	if got := resp["choices"].([]any)[0].(map[string]any)["message"].(map[string]any)["content"]; got != "Answer to: a question asked before the crash" {
		t.Fatalf("the retry's answer: %v", resp)
	}
	entries := e2.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any)
	if len(entries) != 2 {
		t.Fatalf("history after the crash: %v", entries)
	}
	history, _, err := n2.Store.Load(context.Background(), events.Ref{Type: "session", ID: events.JulepAggregateID(principalOf(t, e2).AccountID, sid)})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ev := range history {
		counts[ev.Type]++
	}
	if counts["session.chat_requested"] != 1 || counts["session.chat_prepared"] != 1 || counts["session.chat_answered"] != 1 || counts["session.chat_failed"] != 0 {
		t.Fatalf("the session's log: %v", counts)
	}
}
