package graph_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestBadInputIsAClearError: bad input gets a GraphQL error naming the problem with extensions.code, never an
// internal error.
func TestBadInputIsAClearError(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	_, otherKey := n.NewAccount(t, "eve")
	c := client{t: t, n: n, key: key}
	handle := newSession(t, c, "")
	otherSession := newSession(t, client{t: t, n: n, key: otherKey}, "")

	post := `mutation($s: String!, $t: String!, $e: [EmbedInput!]) { sendSessionMessage(messageData: {session: $s, text: $t, embeds: $e}) { message { id } } }`
	cases := []struct {
		name    string
		vars    map[string]any
		code    string
		mention string
	}{
		{"unknown session", map[string]any{"s": "ses_nope", "t": "hi"}, "NOT_FOUND", "ses_nope"},
		{"another account's session", map[string]any{"s": otherSession, "t": "hi"}, "NOT_FOUND", otherSession},
		{"empty text", map[string]any{"s": handle, "t": "  "}, "BAD_USER_INPUT", "text"},
		{"oversized text", map[string]any{"s": handle, "t": strings.Repeat("x", 32<<10+1)}, "BAD_USER_INPUT", "32 KiB"},
		{"unknown embed key", map[string]any{"s": handle, "t": "mask #img"}, "BAD_USER_INPUT", "#img"},
		{"unknown uploaded embed", map[string]any{"s": handle, "t": "see #1", "e": []any{map[string]any{"key": "1", "embedId": "emb_nope"}}}, "BAD_USER_INPUT", "emb_nope"},
		{"bad embed key", map[string]any{"s": handle, "t": "x", "e": []any{map[string]any{"key": "a b", "uri": "data:,x"}}}, "BAD_USER_INPUT", "a b"},
		{"bad data URI", map[string]any{"s": handle, "t": "#1", "e": []any{map[string]any{"key": "1", "uri": "data:image/png;base64,%%%"}}}, "BAD_USER_INPUT", "base64"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := client{t: t, n: n, key: key}.fail(post, tc.vars, tc.code)
			if !strings.Contains(e.Message, tc.mention) {
				t.Fatalf("message %q does not mention %q", e.Message, tc.mention)
			}
		})
	}
	// The wrong type of argument is gqlgen's own validation error, with its code.
	c.fail(`{ sessionByHandle(handle: 5) { handle } }`, nil, "GRAPHQL_VALIDATION_FAILED")
	c.fail(`{ sessionByHandle(handle: "ses_nope") { handle } }`, nil, "NOT_FOUND")
	c.fail(`{ allSessions(first: -1) { handle } }`, nil, "BAD_USER_INPUT")
	c.fail(`{ allAgents(after: "nope") { handle } }`, nil, "BAD_USER_INPUT")
	c.fail(`mutation { deleteSession(handle: "`+otherSession+`") { session { handle } } }`, nil, "NOT_FOUND")
	c.fail(`mutation { createSession(sessionData: {frontendAgentId: "nobody"}) { session { handle } } }`, nil, "BAD_USER_INPUT")
	c.fail(`subscription { sessionEvents(handle: "x", fromSequence: -1) { id } }`, nil, "BAD_USER_INPUT")
	// A literal '#' is written '##'.
	var ok struct{}
	c.do(post, map[string]any{"s": handle, "t": "issue ##42 is fixed"}, &ok)
}

// TestConcurrentSessions: many sessions with interleaved messages; each subscription sees only its own session's
// messages, in order, and every query gets its reply.
func TestConcurrentSessions(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	const sessions, perSession = 8, 3
	handles := make([]string, sessions)
	ids := make([]string, sessions)
	for i := range handles {
		handles[i] = newSession(t, c, "")
		ids[i] = fmt.Sprint(i)
	}
	ws := connect(t, n, transportWS, key)
	subs := ws.route(ids...)
	for i, h := range handles {
		ws.subscribe(ids[i], messagesSub, map[string]any{"h": h})
	}
	for _, id := range ids {
		var ready sessionUpdate
		subs[id].next(t, &ready)
	}
	// Post round-robin from several goroutines: messages of different sessions interleave.
	var wg sync.WaitGroup
	posted := make([][]string, sessions)
	var mu sync.Mutex
	for round := 0; round < perSession; round++ {
		for i := range handles {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Not c.do: a goroutine other than the test's may not end the test.
				out, _ := c.post(sendMessage, map[string]any{"s": handles[i], "t": fmt.Sprintf("session %d message %d", i, round)})
				var s sent
				if len(out.Errors) > 0 || json.Unmarshal(out.Data, &s) != nil {
					t.Errorf("send to session %d: %+v", i, out.Errors)
					return
				}
				mu.Lock()
				posted[i] = append(posted[i], s.SendSessionMessage.Message.ID)
				mu.Unlock()
			}()
		}
		wg.Wait()
	}
	if t.Failed() {
		t.FailNow()
	}
	for i, id := range ids {
		mine := map[string]bool{}
		for _, q := range posted[i] {
			mine[q] = true
		}
		var queries, repliedTo []string
		lastSeq := 0
		for len(repliedTo) < perSession {
			var u sessionUpdate
			subs[id].next(t, &u)
			m := u.SessionMessages
			if m.Kind == "delta" {
				if !mine[m.Delta.InReplyTo] {
					t.Fatalf("session %d got a delta of another session's query %s", i, m.Delta.InReplyTo)
				}
				continue
			}
			if m.Sequence <= lastSeq {
				t.Fatalf("session %d: message at sequence %d after %d", i, m.Sequence, lastSeq)
			}
			lastSeq = m.Sequence
			switch m.Message.Type {
			case "query":
				if !mine[m.Message.ID] || !strings.HasPrefix(m.Message.Text, fmt.Sprintf("session %d ", i)) {
					t.Fatalf("session %d got another session's message %+v", i, m.Message)
				}
				queries = append(queries, m.Message.ID)
			case "response":
				repliedTo = append(repliedTo, m.Message.InReplyTo.ID)
			default:
				t.Fatalf("session %d: unexpected %+v", i, m.Message)
			}
		}
		// Queries are answered in the order they were posted.
		if strings.Join(queries, ",") != strings.Join(repliedTo, ",") {
			t.Fatalf("session %d: queries %v answered in the order %v", i, queries, repliedTo)
		}
	}
}
