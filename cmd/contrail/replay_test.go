package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// graphql posts an operation to the node and decodes its data.
func (n *node) graphql(t *testing.T, key, query string, vars map[string]any, out any) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest("POST", n.url+"/graphql", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r struct {
		Data   json.RawMessage
		Errors []map[string]any
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("graphql %s: %s", query, raw)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReplaySession(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	key := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "ada"))
	var s struct {
		CreateSession struct{ Session struct{ Handle string } }
	}
	n.graphql(t, key, `mutation { createSession { session { handle } } }`, nil, &s)
	handle := s.CreateSession.Session.Handle
	send := `mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}, wait: true) { response { id } } }`
	var sent struct {
		SendSessionMessage struct{ Response struct{ ID string } }
	}
	n.graphql(t, key, send, map[string]any{"s": handle, "t": "Hello there, agent"}, &sent)
	replyID := sent.SendSessionMessage.Response.ID

	out := n.cli(t, key, "replay", "session", handle)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// The query was posted to an idle session: its dispatch is in the post, and its line says where it went.
	want := []string{"session.created", "session.message_posted", "session.reply_posted"}
	if len(lines) != len(want)+1 || !strings.Contains(lines[0], "SUMMARY") {
		t.Fatalf("replay printed:\n%s", out)
	}
	for i, typ := range want {
		if !strings.Contains(lines[i+1], typ) {
			t.Fatalf("line %d is not %s:\n%s", i+1, typ, out)
		}
	}
	if !strings.Contains(lines[2], `query ada: "Hello there, agent"`) || !strings.Contains(lines[2], "→ agent fixie") ||
		!strings.Contains(lines[3], "reply fixie:") || !strings.Contains(lines[2], "+") {
		t.Fatalf("summaries:\n%s", out)
	}
	// The query's line names the reply it will have, and it is the reply that came: the ID is derived from the
	// query's event ID, which the summary must be given.
	if replyID == "" || !strings.Contains(lines[2], "reply will be "+replyID) || !strings.Contains(lines[3], "["+replyID+"]") {
		t.Fatalf("the reply is %s; replay printed:\n%s", replyID, out)
	}

	var events []struct {
		Sequence uint64 `json:"sequence"`
		Type     string `json:"type"`
	}
	for _, l := range strings.Split(strings.TrimSpace(n.cli(t, key, "replay", "session", handle, "--json")), "\n") {
		var e struct {
			Sequence uint64 `json:"sequence"`
			Type     string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("--json line %q: %v", l, err)
		}
		events = append(events, e)
	}
	if len(events) != 3 {
		t.Fatalf("--json gave %d events", len(events))
	}
	tail := strings.TrimSpace(n.cli(t, key, "replay", "session", handle, "--json", "--from", strconv.FormatUint(events[1].Sequence, 10)))
	if strings.Count(tail, "\n") != 1 || !strings.Contains(tail, "session.message_posted") || !strings.Contains(tail, "session.reply_posted") {
		t.Fatalf("--from %d gave:\n%s", events[1].Sequence, tail)
	}

	// Another account's session is not found.
	other := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "eve"))
	cmd := exec.Command(binary, "replay", "session", handle)
	cmd.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY="+other)
	if msg, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(msg), "404") {
		t.Fatalf("eve replayed ada's session: %v\n%s", err, msg)
	}

	// --follow prints the history, then what happens next, as it happens.
	follow := exec.Command(binary, "replay", "session", handle, "--follow")
	follow.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY="+key)
	stdout, err := follow.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = follow.Process.Kill(); _ = follow.Wait() }()
	got := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			got <- sc.Text()
		}
		close(got)
	}()
	seen := 0
	for seen < 6 {
		select {
		case l, ok := <-got:
			if !ok {
				t.Fatalf("replay --follow ended after %d lines", seen)
			}
			seen++
			if seen == 4 { // the header and the three events of the history
				n.graphql(t, key, send, map[string]any{"s": handle, "t": "and again"}, nil)
			}
			if seen == 6 && !strings.Contains(l, "session.reply_posted") {
				t.Fatalf("the followed reply is %q", l)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("replay --follow printed %d lines in 20s", seen)
		}
	}
}
