package sessionrunner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/sessionrunner"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// stepRecorded is a step an agent records in the session's log.
type stepRecorded struct {
	Note string `json:"note"`
}

func (stepRecorded) EventType() string { return "session.test_step" }

// setup starts a node whose standalone agents are answered by fn (through the registry's real dispatch path), and
// returns a session of a new account answered by such an agent.
func setup(t *testing.T, fn agents.AgentFunc) (*platformtest.Node, auth.Principal, string) {
	t.Helper()
	n := platformtest.Start(t)
	n.Store.Registry().Register(stepRecorded{})
	n.Agents.Handle(agents.KindStandalone, func(context.Context, agents.Info) (agents.Agent, error) { return fn, nil })
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	url := "http://127.0.0.1:9/"
	a, err := n.Commands.CreateAgent(ctx, p, commands.AgentInput{Handle: "echo", QueryURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.Commands.CreateSession(ctx, p, commands.NewSession{FrontendAgent: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	return n, p, s.ID
}

func post(t *testing.T, n *platformtest.Node, p auth.Principal, session, text string) commands.PostedMessage {
	t.Helper()
	m, err := n.Commands.PostMessage(context.Background(), p, commands.NewSessionMessage{Session: session, Text: text})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// answers waits until the session holds n answers (replies or failures) and returns the session.
func answers(t *testing.T, n *platformtest.Node, session string, want int) commands.Session {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _, err := n.Commands.LoadSession(context.Background(), session)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Answered) >= want {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("session has %d answers after 20s, want %d", len(s.Answered), want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func eventsOf(t *testing.T, n *platformtest.Node, session string) []events.Envelope {
	t.Helper()
	history, _, err := n.Store.Load(context.Background(), events.Ref{Type: "session", ID: session})
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

// TestRedeliveryMakesOneReply: the same posted message handled again (a redelivery, on this node or another, even
// at the same time) produces no second reply and no second recorded step.
func TestRedeliveryMakesOneReply(t *testing.T) {
	t.Parallel()
	var calls sync.Mutex
	n, p, session := setup(t, func(ctx context.Context, q agents.Query) (agents.Reply, error) {
		calls.Lock()
		defer calls.Unlock()
		if err := q.Record(ctx, "looked-up", stepRecorded{Note: "once"}); err != nil {
			return agents.Reply{}, err
		}
		q.Stream("echo: ")
		q.Stream(q.Message.Text)
		return agents.Reply{Text: "echo: " + q.Message.Text}, nil
	})
	m := post(t, n, p, session, "hello")
	var posted events.Envelope
	for _, e := range eventsOf(t, n, session) {
		if e.ID == m.Message.EventID {
			posted = e
		}
	}
	other := sessionrunner.New(sessionrunner.Config{Commands: n.Commands, Agents: n.Agents, Store: n.Store, NC: n.NC,
		Names: n.Layout.Names, Embeds: n.EmbedURLs})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := other.Handle(context.Background(), posted); err != nil {
				t.Errorf("handle again: %v", err)
			}
		}()
	}
	wg.Wait()
	s := answers(t, n, session, 1)
	if err := other.Handle(context.Background(), posted); err != nil {
		t.Fatal(err)
	}
	es := eventsOf(t, n, session)
	if count(es, "session.reply_posted") != 1 || count(es, "session.test_step") != 1 || count(es, "session.query_dispatched") != 1 {
		t.Fatalf("after redeliveries the session holds %v", typesOf(es))
	}
	if r := s.Messages[1]; r.Type != events.MessageResponse || r.Text != "echo: hello" || r.ID != commands.ReplyID(posted.ID) {
		t.Fatalf("reply %+v", r)
	}
}

// TestFailingAgentLeavesAMessage: an agent's error becomes a readable error message in the session, never a hang.
func TestFailingAgentLeavesAMessage(t *testing.T) {
	t.Parallel()
	n, p, session := setup(t, func(context.Context, agents.Query) (agents.Reply, error) {
		return agents.Reply{}, errors.New("the weather service is down")
	})
	m := post(t, n, p, session, "weather?")
	s := answers(t, n, session, 1)
	f := s.Messages[1]
	if f.Type != events.MessageError || f.InReplyTo != m.Message.ID || f.SentBy != "echo" ||
		!strings.Contains(f.Text, "echo") || !strings.Contains(f.Text, "the weather service is down") {
		t.Fatalf("failure message %+v", f)
	}
}

// TestUndispatchableAgent: an agent that cannot answer (registered while its URL was down, so it has no few-shots
// yet), or that was deleted, answers with a failure that says so.
func TestUndispatchableAgent(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	url := "http://127.0.0.1:9/"
	a, err := n.Commands.CreateAgent(ctx, p, commands.AgentInput{Handle: "stocks", FuncURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	s, err := n.Commands.CreateSession(ctx, p, commands.NewSession{FrontendAgent: "stocks"})
	if err != nil {
		t.Fatal(err)
	}
	post(t, n, p, s.ID, "price of GOOG?")
	got := answers(t, n, s.ID, 1).Messages[1]
	if got.Type != events.MessageError || !strings.Contains(got.Text, "has no few-shots: refresh it from its URL") {
		t.Fatalf("failure %+v", got)
	}
	if _, err := n.Commands.DeleteAgent(ctx, p, a.Handle); err != nil {
		t.Fatal(err)
	}
	post(t, n, p, s.ID, "and now?")
	got = answers(t, n, s.ID, 2).Messages[3]
	if got.Type != events.MessageError || !strings.Contains(got.Text, "no agent found") {
		t.Fatalf("failure after delete %+v", got)
	}
}

// TestQueriesAnsweredInOrder: while the first query is being answered the second waits, and sees the first reply in
// its history.
func TestQueriesAnsweredInOrder(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var mu sync.Mutex
	var seen [][]string
	n, p, session := setup(t, func(ctx context.Context, q agents.Query) (agents.Reply, error) {
		if q.Message.Text == "first" {
			select {
			case <-release:
			case <-ctx.Done():
				return agents.Reply{}, ctx.Err()
			}
		}
		var h []string
		for _, m := range q.History {
			h = append(h, m.Type+":"+m.Text)
		}
		mu.Lock()
		seen = append(seen, h)
		mu.Unlock()
		return agents.Reply{Text: "re " + q.Message.Text}, nil
	})
	post(t, n, p, session, "first")
	post(t, n, p, session, "second")
	// Give the runner time to take both messages; the second must still be waiting.
	time.Sleep(200 * time.Millisecond)
	if s, _, _ := n.Commands.LoadSession(context.Background(), session); len(s.Answered) != 0 {
		t.Fatalf("answered %v before the first query was released", s.Answered)
	}
	close(release)
	s := answers(t, n, session, 2)
	var order []string
	for _, m := range s.Messages {
		order = append(order, m.Text)
	}
	if strings.Join(order, "|") != "first|second|re first|re second" {
		t.Fatalf("chat log %v", order)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || strings.Join(seen[1], "|") != "query:first|response:re first" {
		t.Fatalf("histories %v: the second query must see the first reply", seen)
	}
}

func typesOf(es []events.Envelope) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}
