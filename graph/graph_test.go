package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

const (
	createSession = `mutation($agent: String) { createSession(sessionData: {frontendAgentId: $agent}) { session { handle frontendAgentId } } }`
	sendMessage   = `mutation($s: String!, $t: String!, $wait: Boolean) {
  sendSessionMessage(messageData: {session: $s, text: $t}, wait: $wait) { message { id text type } response { id text type inReplyTo { id } } timedOut } }`
	messagesSub = `subscription($h: String!) { sessionMessages(handle: $h) {
  kind sequence message { id text type sentBy { handle } inReplyTo { id } } delta { messageId inReplyTo index text } } }`
	eventsSub = `subscription($h: String!, $from: Int) { sessionEvents(handle: $h, fromSequence: $from) { sequence id type version data } }`
)

type sessionUpdate struct {
	SessionMessages struct {
		Kind     string `json:"kind"`
		Sequence int    `json:"sequence"`
		Message  *struct {
			ID        string `json:"id"`
			Text      string `json:"text"`
			Type      string `json:"type"`
			SentBy    struct{ Handle string }
			InReplyTo *struct{ ID string }
		} `json:"message"`
		Delta *struct {
			MessageID string `json:"messageId"`
			InReplyTo string `json:"inReplyTo"`
			Index     int    `json:"index"`
			Text      string `json:"text"`
		} `json:"delta"`
	} `json:"sessionMessages"`
}

type sessionEvent struct {
	SessionEvents struct {
		Sequence int            `json:"sequence"`
		ID       string         `json:"id"`
		Type     string         `json:"type"`
		Version  int            `json:"version"`
		Data     map[string]any `json:"data"`
	} `json:"sessionEvents"`
}

func newSession(t *testing.T, c client, agent string) string {
	t.Helper()
	var out struct {
		CreateSession struct {
			Session struct{ Handle, FrontendAgentID string }
		}
	}
	vars := map[string]any{}
	if agent != "" {
		vars["agent"] = agent
	}
	c.do(createSession, vars, &out)
	return out.CreateSession.Session.Handle
}

type sent struct {
	SendSessionMessage struct {
		Message  struct{ ID, Text, Type string }
		Response *struct {
			ID, Text, Type string
			InReplyTo      struct{ ID string }
		}
		TimedOut bool
	}
}

func send(t *testing.T, c client, session, text string, wait bool) sent {
	t.Helper()
	var out sent
	c.do(sendMessage, map[string]any{"s": session, "t": text, "wait": wait}, &out)
	return out
}

// TestSessionStreamsOverTransportWS drives a session as a client would: HTTP POST for mutations, a real websocket
// speaking graphql-transport-ws for the subscriptions, opened before the message is sent.
func TestSessionStreamsOverTransportWS(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")

	ws := connect(t, n, transportWS, key)
	subs := ws.route("msgs", "events")
	ws.subscribe("msgs", messagesSub, map[string]any{"h": handle})
	ws.subscribe("events", eventsSub, map[string]any{"h": handle, "from": 0})
	var ready sessionUpdate
	subs["msgs"].next(t, &ready)
	if ready.SessionMessages.Kind != "ready" {
		t.Fatalf("first update is %q, want ready", ready.SessionMessages.Kind)
	}

	posted := send(t, c, handle, "Hello, what can you do?", false)
	if posted.SendSessionMessage.Response != nil || posted.SendSessionMessage.Message.Type != "query" {
		t.Fatalf("sendSessionMessage without wait: %+v", posted)
	}
	queryID := posted.SendSessionMessage.Message.ID

	// The messages subscription: the query, the reply's deltas, then the reply.
	var deltas strings.Builder
	var query, reply *sessionUpdate
	nextIndex := 0
	for reply == nil {
		var u sessionUpdate
		subs["msgs"].next(t, &u)
		switch m := u.SessionMessages; m.Kind {
		case "message":
			if m.Message.Type == "query" {
				query = &u
			} else {
				reply = &u
			}
		case "delta":
			if m.Delta.InReplyTo != queryID || m.Delta.Index != nextIndex {
				t.Fatalf("delta %+v: want index %d of the reply to %s", m.Delta, nextIndex, queryID)
			}
			nextIndex++
			deltas.WriteString(m.Delta.Text)
		default:
			t.Fatalf("unexpected update %+v", m)
		}
	}
	if query == nil || query.SessionMessages.Message.ID != queryID || query.SessionMessages.Message.SentBy.Handle != "ada" {
		t.Fatalf("the query did not come first: %+v", query)
	}
	r := reply.SessionMessages.Message
	// On the offline model, with no agent registered, "what can you do?" is answered with that.
	if r.Type != "response" || !strings.HasPrefix(r.Text, "I am Contrail's offline model") || !strings.Contains(r.Text, "no agent is registered") ||
		r.SentBy.Handle != "fixie" || r.InReplyTo == nil || r.InReplyTo.ID != queryID {
		t.Fatalf("reply %+v: want the offline model's help from fixie, in reply to %s", r, queryID)
	}
	if nextIndex == 0 || deltas.String() != r.Text {
		t.Fatalf("the deltas (%d) spell %q, want the reply's text", nextIndex, deltas.String())
	}

	// The events subscription: the session's whole history, in order.
	// The query was posted to an idle session: its dispatch is in the post.
	wantTypes := []string{"session.created", "session.message_posted", "session.reply_posted"}
	var first []sessionEvent
	for len(first) < len(wantTypes) {
		var e sessionEvent
		subs["events"].next(t, &e)
		first = append(first, e)
	}
	for i, e := range first {
		if e.SessionEvents.Type != wantTypes[i] || e.SessionEvents.Version != i+1 {
			t.Fatalf("event %d is %s (version %d), want %s (version %d)", i, e.SessionEvents.Type, e.SessionEvents.Version, wantTypes[i], i+1)
		}
		if i > 0 && e.SessionEvents.Sequence <= first[i-1].SessionEvents.Sequence {
			t.Fatalf("event %d has sequence %d after %d", i, e.SessionEvents.Sequence, first[i-1].SessionEvents.Sequence)
		}
	}
	dispatch, _ := first[1].SessionEvents.Data["dispatch"].(map[string]any)
	if first[1].SessionEvents.Data["message_id"] != queryID || first[2].SessionEvents.Data["message_id"] != r.ID || dispatch["agent_id"] != "fixie" {
		t.Fatalf("event data do not name the messages: %+v", first)
	}

	// A second subscription opened afterwards from sequence 0 receives exactly the same events.
	ws2 := connect(t, n, transportWS, key)
	subs2 := ws2.route("again")
	ws2.subscribe("again", eventsSub, map[string]any{"h": handle, "from": 0})
	for i, want := range first {
		var got sessionEvent
		subs2["again"].next(t, &got)
		if got.SessionEvents.ID != want.SessionEvents.ID || got.SessionEvents.Sequence != want.SessionEvents.Sequence {
			t.Fatalf("replayed event %d is %+v, want %+v", i, got.SessionEvents, want.SessionEvents)
		}
	}

	// The read model shows the same chat log.
	var got struct {
		SessionByHandle struct {
			Messages []struct{ ID, Text, Type string }
		}
	}
	c.do(`query($h: String!) { sessionByHandle(handle: $h) { messages { id text type } } }`, map[string]any{"h": handle}, &got)
	msgs := got.SessionByHandle.Messages
	if len(msgs) != 2 || msgs[0].ID != queryID || msgs[1].ID != r.ID || msgs[1].Text != r.Text {
		t.Fatalf("sessionByHandle messages %+v, want the query and its reply", msgs)
	}
	ws.stop("msgs")
}

// TestLegacyGraphQLWS subscribes over the legacy protocol and posts with wait: true, Fixie's synchronous style.
func TestLegacyGraphQLWS(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "grace")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "fixie")

	ws := connect(t, n, legacyWS, key)
	subs := ws.route("1")
	ws.subscribe("1", messagesSub, map[string]any{"h": handle})
	var ready sessionUpdate
	subs["1"].next(t, &ready)

	out := send(t, c, handle, "What time is it?", true)
	resp := out.SendSessionMessage.Response
	if out.SendSessionMessage.TimedOut || resp == nil || resp.Text != offline.Notice || resp.InReplyTo.ID != out.SendSessionMessage.Message.ID {
		t.Fatalf("sendSessionMessage with wait: %+v", out.SendSessionMessage)
	}
	var kinds []string
	for {
		var u sessionUpdate
		subs["1"].next(t, &u)
		kinds = append(kinds, u.SessionMessages.Kind)
		if m := u.SessionMessages.Message; m != nil && m.ID == resp.ID {
			break
		}
	}
	if kinds[0] != "message" || kinds[len(kinds)-1] != "message" {
		t.Fatalf("legacy subscription saw %v, want the query first and the reply last", kinds)
	}
}

// TestWebsocketRefusedWithoutKey: no key, or a wrong one, in connection_init closes the socket.
func TestWebsocketRefusedWithoutKey(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	for _, tc := range []struct {
		name  string
		proto string
		init  map[string]any
	}{
		{"no payload", transportWS, nil},
		{"wrong key", transportWS, map[string]any{"Authorization": "Bearer ctr_nope"}},
		{"legacy, no key", legacyWS, map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, first, err := dialWS(t, n, tc.proto, tc.init)
			if first.Type == "connection_ack" {
				t.Fatal("an unauthenticated websocket was acknowledged")
			}
			if first.Type == "connection_error" && !strings.Contains(string(first.Payload), "API key") {
				t.Fatalf("connection_error %s does not say what is wrong", first.Payload)
			}
			if err == nil {
				// After the error the server closes the socket.
				if f, open := <-ws.frames; open {
					t.Fatalf("frame %+v after the refusal", f)
				}
				err = <-ws.closed
			}
			if err == nil || !strings.Contains(err.Error(), "4403") {
				t.Fatalf("socket closed with %v, want status 4403", err)
			}
		})
	}
	// Plain HTTP without a key: 401 in GraphQL's shape.
	resp := n.Do(t, "", "POST", "/graphql", map[string]any{"query": "{ user { username } }"})
	var out gqlResponse
	resp.JSON(t, &out)
	if resp.Status != 401 || len(out.Errors) != 1 || out.Errors[0].code() != "UNAUTHENTICATED" {
		t.Fatalf("POST without key: %d %s", resp.Status, resp.Body)
	}
}

// TestWebsocketKeyInUpgradeHeader: the key may come in the upgrade request's header instead of connection_init; a
// subscription to a session that is not the caller's fails with NOT_FOUND.
func TestWebsocketKeyInUpgradeHeader(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(n.URL, "http")+"/graphql", &websocket.DialOptions{
		Subprotocols: []string{transportWS}, HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}})
	if err != nil {
		t.Fatal(err)
	}
	ws := &wsClient{t: t, conn: conn, proto: transportWS, frames: make(chan frame, 64), closed: make(chan error, 1)}
	t.Cleanup(func() { _ = conn.CloseNow() })
	go ws.read()
	ws.send(frame{Type: "connection_init"})
	if f := <-ws.frames; f.Type != "connection_ack" {
		t.Fatalf("with the key in the header, connection_init got %+v", f)
	}
	subs := ws.route("x")
	ws.subscribe("x", messagesSub, map[string]any{"h": "ses_nope"})
	select {
	case es := <-subs["x"].errs:
		if len(es) == 0 || es[0].code() != "NOT_FOUND" {
			t.Fatalf("subscription errors %+v, want NOT_FOUND", es)
		}
	case d := <-subs["x"].data:
		t.Fatalf("subscribed to an unknown session: %s", d)
	case <-time.After(10 * time.Second):
		t.Fatal("no answer to the subscription")
	}
}

// TestFailedAnswerIsAnError: a query whose agent fails answers sendSessionMessage with the failure as the reply
// (type error) and an errors entry at the mutation's path, with a code: AGENT_FAILED for the agent's own failure,
// and the code the failure was recorded with otherwise (an agent deleted meanwhile: NOT_FOUND).
func TestFailedAnswerIsAnError(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		_, _ = w.Write([]byte(`{"detail":"the agent's disk is full"}`))
	}))
	t.Cleanup(broken.Close)
	c.do(`mutation($u: String!) { createAgent(agentData: {handle: "broken", queryUrl: $u, queries: ["anything"]}) { agent { agentId } } }`,
		map[string]any{"u": broken.URL}, nil)
	handle := newSession(t, c, "broken")
	for _, tc := range []struct{ name, code, says string }{
		{"the agent fails", "AGENT_FAILED", "the agent's disk is full"},
		{"the agent is gone", "NOT_FOUND", "broken"},
	} {
		if tc.code == "NOT_FOUND" {
			c.do(`mutation { deleteAgent(handle: "broken") { agent { handle } } }`, nil, nil)
		}
		out, status := c.post(sendMessage, map[string]any{"s": handle, "t": "hello", "wait": true})
		var data sent
		if err := json.Unmarshal(out.Data, &data); err != nil {
			t.Fatal(err)
		}
		resp := data.SendSessionMessage.Response
		if status != 200 || resp == nil || resp.Type != "error" || !strings.Contains(resp.Text, tc.says) {
			t.Fatalf("%s: %d %s, want the failure as the reply", tc.name, status, out.Data)
		}
		if len(out.Errors) != 1 || out.Errors[0].code() != tc.code || out.Errors[0].Message != resp.Text ||
			fmt.Sprint(out.Errors[0].Path) != "[sendSessionMessage]" {
			t.Fatalf("%s: errors %+v, want one %s at sendSessionMessage saying what the reply says", tc.name, out.Errors, tc.code)
		}
	}
}

// TestAReplyShowsTheQueryItAnswers: a reply's inReplyTo is the query it answers, whole when the client asks for
// more than its ID (a read of the session's messages), in a fragment too, and its ID alone when that is all the
// client asks for.
func TestAReplyShowsTheQueryItAnswers(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")
	query := send(t, c, handle, "what is the capital of France?", true).SendSessionMessage.Message
	type message struct {
		ID, Text, Type string
		InReplyTo      *struct{ ID, Text, Type string }
	}
	var out struct {
		SessionByHandle struct{ Whole, IDOnly, Fragment []message }
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(out.SessionByHandle.Whole) < 2 || len(out.SessionByHandle.IDOnly) < 2 || len(out.SessionByHandle.Fragment) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the session does not show the query and its reply after 10s: %+v", out)
		}
		c.do(`query($h: String!) { sessionByHandle(handle: $h) {
  whole: messages { id text type inReplyTo { id text type } }
  idOnly: messages { id inReplyTo { id } }
  fragment: messages { id inReplyTo { id ... on Message { text type } } } } }`, map[string]any{"h": handle}, &out)
	}
	whole, idOnly := out.SessionByHandle.Whole[1], out.SessionByHandle.IDOnly[1]
	for _, m := range []message{whole, out.SessionByHandle.Fragment[1]} {
		if m.InReplyTo == nil || *m.InReplyTo != (struct{ ID, Text, Type string }{query.ID, query.Text, query.Type}) {
			t.Fatalf("the reply %+v answers %+v, want the query %+v", m, m.InReplyTo, query)
		}
	}
	if idOnly.InReplyTo == nil || idOnly.InReplyTo.ID != query.ID {
		t.Fatalf("asked for its ID alone, the reply %+v answers %+v, want %s", idOnly, idOnly.InReplyTo, query.ID)
	}
}
