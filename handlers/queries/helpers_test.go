package queries_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// gql posts a GraphQL operation with a key and decodes data into out; it fails the test on GraphQL errors.
func gql(t *testing.T, n *platformtest.Node, key, query string, vars map[string]any, out any) {
	t.Helper()
	errs := gqlErrors(t, n, key, query, vars, out)
	if len(errs) > 0 {
		t.Fatalf("graphql errors: %v", errs)
	}
}

// gqlErrors posts a GraphQL operation and returns its errors' messages (with their codes).
func gqlErrors(t *testing.T, n *platformtest.Node, key, query string, vars map[string]any, out any) []string {
	t.Helper()
	r := n.Do(t, key, "POST", "/graphql", map[string]any{"query": query, "variables": vars})
	var body struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string         `json:"message"`
			Extensions map[string]any `json:"extensions"`
		} `json:"errors"`
	}
	r.JSON(t, &body)
	var msgs []string
	for _, e := range body.Errors {
		msgs = append(msgs, fmt.Sprintf("%v: %s", e.Extensions["code"], e.Message))
	}
	if out != nil && len(body.Data) > 0 && string(body.Data) != "null" {
		if err := json.Unmarshal(body.Data, out); err != nil {
			t.Fatalf("decode %s: %v", body.Data, err)
		}
	}
	return msgs
}

// serveAgent runs an agentkit agent on a real HTTP server.
func serveAgent(t *testing.T, a agentkit.Agent, opts ...agentkit.Option) *httptest.Server {
	t.Helper()
	h, err := agentkit.New(a, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// funcLog counts and records the calls a func really received.
type funcLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *funcLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
}

func (l *funcLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.calls...)
}

// ask creates a session with the given front agent, posts a query and waits for its answer.
func ask(t *testing.T, n *platformtest.Node, p auth.Principal, front, text string) (string, session.Message) {
	t.Helper()
	ctx := context.Background()
	s, err := n.SessionCommands.Create(ctx, p, commands.NewSession{FrontendAgent: front})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SessionCommands.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: text}); err != nil {
		t.Fatal(err)
	}
	return s.ID, waitAnswer(t, n, s.ID, 1)
}

// waitAnswer waits for the session's nth answer (reply or failure) and returns it.
func waitAnswer(t *testing.T, n *platformtest.Node, sessionID string, nth int) session.Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s, _, err := n.Sessions.Get(context.Background(), sessionID, eventstore.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		var answers []session.Message
		for _, m := range s.Messages {
			if m.Type != events.MessageQuery {
				answers = append(answers, m)
			}
		}
		if len(answers) >= nth {
			return answers[nth-1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s has %d answers after 30s, want %d", sessionID, len(answers), nth)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// steps returns the agent steps and routings a session recorded, as "path: kind name text" lines.
func steps(t *testing.T, n *platformtest.Node, session string) []string {
	t.Helper()
	history, _, err := n.Store.Load(context.Background(), events.Ref{Type: "session", ID: session})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range history {
		switch d := e.Event.(type) {
		case events.SessionAgentStep:
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", d.Path, d.Kind, d.Name, d.Text)))
		case events.SessionRouted:
			out = append(out, fmt.Sprintf("%s: routed %s", d.Path, d.Chosen))
		}
	}
	return out
}

// text builds a func answer.
func text(s string) agentproto.Message { return agentproto.Message{Text: s} }

// serveRaw serves a fixed agent description at GET / (agents that agentkit would refuse to serve).
func serveRaw(t *testing.T, body string) string {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

func sleepMS(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }
