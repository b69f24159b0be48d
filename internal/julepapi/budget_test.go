package julepapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// words is a message of about n tokens, numbered so that each is told apart.
func words(i, n int) string {
	return fmt.Sprintf("message %d:%s", i, strings.Repeat(" word", n))
}

// promptTokens is what a request's messages cost, as the platform counts them for the budget.
func promptTokens(req llmtest.Request) int { return tokens.CountMessages(req.Model, req.Messages) }

// truncate keeps a session under its token budget by dropping its oldest turns, keeping the system message and the
// newest messages; with no context_overflow, a chat over the budget is a 400 that says so.
func TestTokenBudgetTruncate(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	const budget = 300
	sid := e.session(t, map[string]any{"agent": agent, "token_budget": budget, "context_overflow": "truncate"})
	e.model.HandleFunc(func(llmtest.Request) llmtest.Reply { return llmtest.Text("noted") })
	for i := 0; i < 8; i++ {
		e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg(words(i, 40)))
	}
	reqs := e.model.Requests()
	last := reqs[len(reqs)-1]
	if n := promptTokens(last); n > budget {
		t.Fatalf("the last prompt is %d tokens, over the budget of %d", n, budget)
	}
	if last.Messages[0].Role != "system" || !strings.HasPrefix(last.LastMessage().Content, "message 7:") {
		t.Fatalf("the last prompt lost its system message or its newest message: %v", last.Messages)
	}
	for _, m := range last.Messages {
		if strings.HasPrefix(m.Content, "message 0:") {
			t.Fatalf("the oldest turn was kept in a prompt over the budget")
		}
	}
	if len(last.Messages) < 4 {
		t.Fatalf("truncation dropped more than it had to: %d messages", len(last.Messages))
	}
	if got := strings.Join(timeline(t, e, sid), "\n"); !strings.Contains(got, "truncated") {
		t.Fatalf("replay does not say what was truncated:\n%s", got)
	}

	// The system message and the newest message alone are over the budget: nothing to drop, a 400 that says so.
	r := e.do(t, "POST", "/sessions/"+sid+"/chat", userMsg(words(99, 400)))
	if status, msg, _ := errorOf(t, r); status != 400 || !strings.Contains(msg, "token_budget") {
		t.Fatalf("a message over the budget: %d %s", status, r.body)
	}

	strict := e.session(t, map[string]any{"agent": agent, "token_budget": budget})
	e.must(t, http.StatusCreated, "POST", "/sessions/"+strict+"/chat", userMsg(words(0, 100)))
	e.must(t, http.StatusCreated, "POST", "/sessions/"+strict+"/chat", userMsg(words(1, 40)))
	r = e.do(t, "POST", "/sessions/"+strict+"/chat", userMsg(words(2, 100)))
	if status, msg, _ := errorOf(t, r); status != 400 || !strings.Contains(msg, "context_overflow is null") {
		t.Fatalf("over the budget with no context_overflow: %d %s", status, r.body)
	}
}

// adaptive summarizes the older turns in the background once the history passes 75% of the budget: the chat that
// set it off has its answer before the summary exists; later prompts carry the summary in place of those turns.
func TestTokenBudgetAdaptive(t *testing.T) {
	e := newEnv(t)
	agent, _ := e.persona(t)
	const budget = 400
	sid := e.session(t, map[string]any{"agent": agent, "token_budget": budget, "context_overflow": "adaptive"})
	release := make(chan struct{})
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if strings.HasPrefix(req.Messages[0].Content, "You compress a conversation") {
			<-release // the summary takes its time
			return llmtest.Text("The user sent numbered messages 0 to 4 full of words.")
		}
		return llmtest.Text("noted")
	})
	triggered := -1
	for i := 0; i < 12 && triggered < 0; i++ {
		e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg(words(i, 40)))
		if historyTokens(t, e, sid) <= budget*3/4 {
			continue
		}
		// Past 75%: the summarizer, reacting to the answer in the background, asks the model for a summary.
		for wait := time.Now().Add(10 * time.Second); summariesAsked(e) == 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(wait) {
				t.Fatalf("the history passed 75%% of the budget after turn %d, and no summary was asked for", i)
			}
		}
		triggered = i
	}
	if triggered < 0 {
		t.Fatalf("no summary was asked for over 12 turns of a 400-token budget")
	}
	// The chat that set it off has answered; the summary does not exist yet.
	if s := e.must(t, http.StatusOK, "GET", "/sessions/"+sid, nil); s["summary"] != nil {
		t.Fatalf("the summary exists before the model made it: %v", s["summary"])
	}
	close(release)
	deadline := time.Now().Add(20 * time.Second)
	for e.must(t, http.StatusOK, "GET", "/sessions/"+sid, nil)["summary"] == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no summary recorded:\n%s", strings.Join(timeline(t, e, sid), "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.must(t, http.StatusCreated, "POST", "/sessions/"+sid+"/chat", userMsg("what did I send?"))
	var last llmtest.Request
	for _, r := range e.model.Requests() {
		if !strings.HasPrefix(r.Messages[0].Content, "You compress") {
			last = r
		}
	}
	if n := promptTokens(last); n > budget {
		t.Fatalf("the prompt after the summary is %d tokens, over %d", n, budget)
	}
	var sawSummary bool
	for _, m := range last.Messages {
		if strings.HasPrefix(m.Content, "message 0:") {
			t.Fatalf("a summarized turn is still in the prompt")
		}
		if m.Role == llm.RoleSystem && strings.Contains(m.Content, "numbered messages 0 to 4") {
			sawSummary = true
		}
	}
	if !sawSummary {
		t.Fatalf("the prompt does not carry the summary: %v", last.Messages)
	}
	if got := strings.Join(timeline(t, e, sid), "\n"); !strings.Contains(got, "summarized the first") {
		t.Fatalf("replay does not show the summary:\n%s", got)
	}
}

// historyTokens is what a session's history costs in a prompt.
func historyTokens(t testing.TB, e *env, sid string) int {
	var msgs []llm.Message
	for _, en := range e.must(t, http.StatusOK, "GET", "/sessions/"+sid+"/history", nil)["entries"].([]any) {
		m := en.(map[string]any)
		msgs = append(msgs, llm.Message{Role: m["role"].(string), Content: m["content"].(string)})
	}
	return tokens.CountMessages("gpt-4o-mini", msgs) - 3
}

// summariesAsked counts the model's summarizing requests so far.
func summariesAsked(e *env) int {
	n := 0
	for _, r := range e.model.Requests() {
		if strings.HasPrefix(r.Messages[0].Content, "You compress a conversation") {
			n++
		}
	}
	return n
}
