package chats_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// julep sends a request to the node's Julep API and decodes its JSON answer, failing unless the status is want.
func julep(t *testing.T, n *platformtest.Node, key string, want int, method, path string, body any) map[string]any {
	t.Helper()
	r := n.Do(t, key, method, "/julep"+path, body)
	if r.Status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.Status, want, r.Body)
	}
	var out map[string]any
	if len(r.Body) > 0 {
		r.JSON(t, &out)
	}
	return out
}

// adaptiveChats opens an adaptive session with a small budget and chats in it until the summarizer has reacted to
// every answer; the first message holds the user's facts. It returns the session's ID.
func adaptiveChats(t *testing.T, n *platformtest.Node, key, model string, turns int) string {
	t.Helper()
	agent := map[string]any{"name": "Ada"}
	if model != "" {
		agent["model"] = model
	}
	aid := julep(t, n, key, http.StatusCreated, "POST", "/agents", agent)["id"].(string)
	sid := julep(t, n, key, http.StatusCreated, "POST", "/sessions",
		map[string]any{"agent": aid, "token_budget": 400, "context_overflow": "adaptive"})["id"].(string)
	for i := range turns {
		text := fmt.Sprintf("message %d:%s", i, strings.Repeat(" word", 40))
		if i == 0 {
			text = "My locker code is 4512 and my gym PIN is 0091." + text
		}
		julep(t, n, key, http.StatusCreated, "POST", "/sessions/"+sid+"/chat",
			map[string]any{"messages": []map[string]any{{"role": "user", "content": text}}})
		// The summarizer reacts to each answer in the background (and lets an answer go when a later one has
		// come): wait until it has handled this one, so that each turn past 75% of the budget asks for a summary.
		for deadline := time.Now().Add(30 * time.Second); n.Handled("julep-summarizer") < float64(i+1); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the summarizer handled %v of %d answers", n.Handled("julep-summarizer"), i+1)
			}
		}
	}
	return sid
}

// timeline is the session's events as replay describes them.
func timeline(t *testing.T, n *platformtest.Node, key, sid string) string {
	t.Helper()
	r := n.Do(t, key, "GET", "/api/sessions/"+sid+"/events", nil)
	if r.Status != http.StatusOK {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	reg := events.NewRegistry()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(r.Body))
	sc.Buffer(nil, 1<<22)
	for sc.Scan() {
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatal(err)
		}
		d, err := reg.Decode(ev.Type, ev.Data)
		if err != nil {
			t.Fatal(err)
		}
		if line, ok := session.Describe(events.Envelope{Type: ev.Type, Event: d}); ok {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// On the offline model, which cannot summarise, an adaptive session records no summary (the offline model's
// notice is not one), keeps its turns, and says so in its timeline; the user's facts stay in the history.
func TestAdaptiveOnTheOfflineModelRecordsNoSummary(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	sid := adaptiveChats(t, n, key, "", 6)
	s := julep(t, n, key, http.StatusOK, "GET", "/sessions/"+sid, nil)
	if s["summary"] != nil {
		t.Fatalf("the session recorded a summary on the offline model: %q", s["summary"])
	}
	got := timeline(t, n, key, sid)
	if strings.Contains(got, "summarized the first") || strings.Contains(got, "summary of the first") {
		t.Fatalf("older turns were replaced by a summary:\n%s", got)
	}
	if !strings.Contains(got, "no summary of entries 0 to") || !strings.Contains(got, "the offline model cannot summarise") {
		t.Fatalf("the session does not say that no summary could be made:\n%s", got)
	}
	if strings.Count(got, "no summary of entries") != 1 {
		t.Errorf("the same failure is said more than once:\n%s", got)
	}
	history := julep(t, n, key, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)
	raw, _ := json.Marshal(history["entries"])
	if !strings.Contains(string(raw), "4512") {
		t.Fatalf("the history lost the user's facts: %s", raw)
	}
}

// A summary cut off at its token limit would lose facts without a word: it is not recorded, and the session says
// why. A whole summary, the next time, is.
func TestAdaptiveRecordsNoSummaryCutOff(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test-upstream"
	}))
	_, key := n.NewAccount(t, "ada")
	var summaries atomic.Int32
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if !strings.HasPrefix(req.Messages[0].Content, "You compress a conversation") {
			return llmtest.Text("noted")
		}
		if summaries.Add(1) == 1 {
			return llmtest.Reply{Text: "The user's locker code is", FinishReason: "length"}
		}
		return llmtest.Text("The user's locker code is 4512 and gym PIN 0091; they sent numbered messages.")
	})
	sid := adaptiveChats(t, n, key, "gpt-4o-mini", 8)
	got := timeline(t, n, key, sid)
	if !strings.Contains(got, `the summary did not end (finish reason "length")`) {
		t.Fatalf("the session does not say why the cut summary was not recorded:\n%s", got)
	}
	s := julep(t, n, key, http.StatusOK, "GET", "/sessions/"+sid, nil)
	if sum, _ := s["summary"].(string); strings.HasSuffix(sum, "is") {
		t.Fatalf("the cut summary was recorded: %q", sum)
	}
	if k := summaries.Load(); k < 2 {
		t.Fatalf("%d summary asked for over 8 turns, want a second after the cut one", k)
	}
	if sum, _ := s["summary"].(string); !strings.Contains(sum, "4512") {
		t.Fatalf("the whole summary was not recorded: %q\n%s", sum, got)
	}
}
