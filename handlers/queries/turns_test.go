package queries_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// standaloneAgent serves a standalone agent over HTTP (seed 000's simplest kind: POST / with the query, a JSON
// message back), answering with fn's text, or with a 500 carrying fn's error.
func standaloneAgent(t *testing.T, fn func(ctx context.Context, text string) (string, error)) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var body struct {
			Message struct {
				Text string `json:"text"`
			} `json:"message"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		out, err := fn(r.Context(), body.Message.Text)
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": "ERR_AGENT_UNHANDLED_EXCEPTION", "message": err.Error()}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]any{"text": out}})
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// setup starts a node and returns a session of a new account answered by a standalone agent behind fn.
func setup(t *testing.T, fn func(ctx context.Context, text string) (string, error), opts ...platformtest.Option) (*platformtest.Node, auth.Principal, string) {
	t.Helper()
	n := platformtest.Start(t, opts...)
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	url := standaloneAgent(t, fn)
	a, err := n.RegisterAgent(ctx, p, commands.AgentInput{Handle: "echo", QueryURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.SessionCommands.Create(ctx, p, commands.NewSession{FrontendAgent: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	return n, p, s.ID
}

func post(t *testing.T, n *platformtest.Node, p auth.Principal, sessionID, text string) commands.PostedMessage {
	t.Helper()
	m, err := n.SessionCommands.Post(context.Background(), p, commands.NewSessionMessage{Session: sessionID, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// answers waits until the session holds want answers (replies or failures) and returns the session.
func answers(t *testing.T, n *platformtest.Node, sessionID string, want int) session.State {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _, err := n.Sessions.Get(context.Background(), sessionID, eventstore.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		if s.AnsweredCount() >= want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session has %d answers after 20s, want %d", s.AnsweredCount(), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventsOf(t *testing.T, n *platformtest.Node, sessionID string) []events.Envelope {
	t.Helper()
	history, _, err := n.Store.Load(context.Background(), events.Ref{Type: "session", ID: sessionID})
	if err != nil {
		t.Fatal(err)
	}
	return history
}

func count(es []events.Envelope, typ string) int {
	c := 0
	for _, e := range es {
		if e.Type == typ {
			c++
		}
	}
	return c
}

// dispatches counts the dispatches in a session's events: query_dispatched, and posts to an idle session.
func dispatches(es []events.Envelope) int {
	c := 0
	for _, e := range es {
		if _, ok := session.DispatchOf(e); ok {
			c++
		}
	}
	return c
}

func find(es []events.Envelope, typ string) events.Envelope {
	for _, e := range es {
		if e.Type == typ {
			return e
		}
	}
	return events.Envelope{}
}

// TestRedeliveryMakesOneReply: a query posted to an idle session carries its dispatch (no query_dispatched is
// appended for it), and handled again — even several times at once, on this node or another — it makes one reply,
// with the reply's ID derived from the query.
func TestRedeliveryMakesOneReply(t *testing.T) {
	t.Parallel()
	n, p, sessionID := setup(t, func(_ context.Context, text string) (string, error) { return "echo: " + text, nil })
	m := post(t, n, p, sessionID, "hello")
	s := answers(t, n, sessionID, 1)
	es := eventsOf(t, n, sessionID)
	posted := find(es, "session.message_posted")
	if d, ok := session.DispatchOf(posted); !ok || d.Kind != session.KindStandalone || d.ReplyID != session.ReplyID(posted.ID) {
		t.Fatalf("the post to an idle session carries no dispatch to the standalone agent: %+v", posted.Event)
	}
	// Another node's handlers (the same handlers with their own repository, like another process) take the post
	// again, three at a time.
	other := n.QueryHandlers(true)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := other.Agents().Handle(context.Background(), posted); err != nil {
				t.Errorf("post again: %v", err)
			}
		}()
	}
	wg.Wait()
	es = eventsOf(t, n, sessionID)
	if count(es, "session.reply_posted") != 1 || count(es, "session.query_dispatched") != 0 || count(es, "session.reply_failed") != 0 {
		t.Fatalf("after redeliveries the session holds %v", typesOf(es))
	}
	q, _ := s.Query(m.Message.ID)
	if r := s.Messages[1]; r.Type != events.MessageResponse || r.Text != "echo: hello" || r.ID != session.ReplyID(posted.ID) || q.ReplyID != r.ID {
		t.Fatalf("reply %+v", r)
	}
}

// TestFailingAgentLeavesAMessage: an agent's error becomes a readable error message in the session, never a hang.
func TestFailingAgentLeavesAMessage(t *testing.T) {
	t.Parallel()
	n, p, sessionID := setup(t, func(context.Context, string) (string, error) {
		return "", errWeather
	})
	m := post(t, n, p, sessionID, "weather?")
	s := answers(t, n, sessionID, 1)
	f := s.Messages[1]
	if f.Type != events.MessageError || f.InReplyTo != m.Message.ID || f.SentBy != "echo" ||
		!strings.Contains(f.Text, "echo") || !strings.Contains(f.Text, "the weather service is down") {
		t.Fatalf("failure message %+v", f)
	}
}

type weatherError struct{}

func (weatherError) Error() string { return "the weather service is down" }

var errWeather = weatherError{}

// TestUndispatchableAgent: an agent that cannot answer (registered while its URL was down, so it has no few-shots
// yet), or that was deleted, answers with a failure that says so.
func TestUndispatchableAgent(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	url := "http://127.0.0.1:9/"
	a, err := n.RegisterAgent(ctx, p, commands.AgentInput{Handle: "stocks", FuncURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.SessionCommands.Create(ctx, p, commands.NewSession{FrontendAgent: "stocks"})
	if err != nil {
		t.Fatal(err)
	}
	post(t, n, p, s.ID, "price of GOOG?")
	got := answers(t, n, s.ID, 1).Messages[1]
	if got.Type != events.MessageError || !strings.Contains(got.Text, "has no few-shots: refresh it from its URL") {
		t.Fatalf("failure %+v", got)
	}
	n.DeleteAgent(t, p, a.Handle)
	post(t, n, p, s.ID, "and now?")
	got = answers(t, n, s.ID, 2).Messages[3]
	if got.Type != events.MessageError || !strings.Contains(got.Text, "no agent found") {
		t.Fatalf("failure after delete %+v", got)
	}
}

// TestQueriesAnsweredInOrder: while the first query is being answered the second is not given to the agent, and
// it is given as soon as the first has its reply.
func TestQueriesAnsweredInOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var received []string
	n, p, sessionID := setup(t, func(ctx context.Context, text string) (string, error) {
		mu.Lock()
		received = append(received, text)
		mu.Unlock()
		if text == "first" {
			select {
			case <-release:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		return "re " + text, nil
	})
	post(t, n, p, sessionID, "first")
	post(t, n, p, sessionID, "second")
	// Give the runner time to take both messages; the second must still be waiting.
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	got := strings.Join(received, "|")
	mu.Unlock()
	if got != "first" {
		t.Fatalf("the agent received %q before the first query was answered", got)
	}
	if s, _, _ := n.Sessions.Get(context.Background(), sessionID, eventstore.Fresh); s.AnsweredCount() != 0 {
		t.Fatalf("answered %d before the first query was released", s.AnsweredCount())
	}
	close(release)
	if got := chatLog(answers(t, n, sessionID, 2)); got != "first|second|re first|re second" {
		t.Fatalf("chat log %v", got)
	}
}

// chatLog joins the texts of a session's messages, in order.
func chatLog(s session.State) string {
	texts := make([]string, 0, len(s.Messages))
	for _, m := range s.Messages {
		texts = append(texts, m.Text)
	}
	return strings.Join(texts, "|")
}

func typesOf(es []events.Envelope) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}
