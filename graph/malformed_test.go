package graph_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// A POST of a type /graphql does not read is a 4xx that names what it takes, and two malformed fields are refused
// by name: a createAgent whose moreInfoUrl is empty, and an inReplyTo that is blank.
func TestMalformedRequestsNameTheFault(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	for _, c := range []struct{ name, contentType, body string }{
		{"text", "text/plain", `{"query": "{ allAgents { agentId } }"}`},
		{"form", "application/x-www-form-urlencoded", `query=%7B+allAgents+%7B+agentId+%7D+%7D`},
		{"over-long type", "application/json; x=" + strings.Repeat("a", 300), `{"query": "{ allAgents { agentId } }"}`},
		{"no type", "", `{"query": "{ allAgents { agentId } }"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest("POST", n.URL+"/graphql", strings.NewReader(c.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			if c.contentType != "" {
				req.Header.Set("Content-Type", c.contentType)
			}
			resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode/100 != 4 || !strings.Contains(string(body), "application/json") || !strings.Contains(string(body), "Content-Type") {
				t.Fatalf("%d %s, want a 4xx naming Content-Type and application/json", resp.StatusCode, body)
			}
		})
	}

	c := client{t: t, n: n, key: key}
	e := c.fail(`mutation { createAgent(agentData: {handle: "genrand", funcUrl: "http://127.0.0.1:9/genrand", moreInfoUrl: "",
  queries: ["Generate a random number"]}) { agent { agentId } } }`, nil, "BAD_USER_INPUT")
	if !strings.Contains(e.Message, "moreInfoUrl") {
		t.Errorf("the error does not name moreInfoUrl: %q", e.Message)
	}
	handle := newSession(t, c, "")
	post := `mutation($s: String!, $r: String) { sendSessionMessage(messageData: {session: $s, text: "hi", inReplyTo: $r}) { message { id } } }`
	for _, blank := range []string{" ", ""} {
		e = c.fail(post, map[string]any{"s": handle, "r": blank}, "BAD_USER_INPUT")
		if !strings.Contains(e.Message, "inReplyTo") {
			t.Errorf("inReplyTo %q: the error does not name it: %q", blank, e.Message)
		}
	}
}
