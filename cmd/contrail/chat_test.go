package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// slowpoke is a standalone agent the test controls: "stream slowly" streams half an answer and waits for the test
// to open its gate before the rest; "hang" streams a word and waits for its own gate; "fail" fails; anything else
// is echoed at once.
type slowpoke struct {
	gates map[string]*gate
	srv   *httptest.Server
}

// gate holds replies until it is opened.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

func newSlowpoke(t *testing.T) *slowpoke {
	s := &slowpoke{gates: map[string]*gate{"stream slowly": {ch: make(chan struct{})}, "hang": {ch: make(chan struct{})}}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" {
			http.Error(w, "only POST", http.StatusMethodNotAllowed) // no description: a standalone agent
			return
		}
		var q struct{ Text string }
		_ = json.NewDecoder(r.Body).Decode(&q)
		line := func(text string) {
			_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"text": text}})
			w.(http.Flusher).Flush()
		}
		w.Header().Set("Content-Type", "application/x-ndjson")
		switch q.Text {
		case "stream slowly":
			line("The answer")
			<-s.gates[q.Text].ch
			line("The answer is 42.")
		case "hang":
			line("Thinking")
			select {
			case <-s.gates[q.Text].ch:
			case <-r.Context().Done():
			}
			line("Thinking done.")
		case "fail":
			http.Error(w, "broken on purpose", http.StatusInternalServerError)
		default:
			line("You said: " + q.Text)
		}
	}))
	t.Cleanup(func() {
		for _, g := range s.gates {
			g.open()
		}
		s.srv.Close()
	})
	return s
}

// run runs the binary as a client of the node and returns stdout, stderr and the exit code.
func (n *node) run(t *testing.T, key string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY="+key)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("contrail %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

func registerSlowpoke(t *testing.T, n *node, key string) *slowpoke {
	t.Helper()
	s := newSlowpoke(t)
	n.graphql(t, key, `mutation($u: String!) { createAgent(agentData: {handle: "slowpoke", queryUrl: $u}) { agent { handle } } }`,
		map[string]any{"u": s.srv.URL + "/"}, nil)
	return s
}

func TestAsk(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	key := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "ada"))
	registerSlowpoke(t, n, key)

	// One question, one answer on stdout: the front agent on the offline model.
	out, errOut, code := n.run(t, key, "", "ask", "Hello! Who are you?")
	if code != 0 || !strings.Contains(out, "offline model") || strings.Count(strings.TrimSpace(out), "\n") > 1 {
		t.Fatalf("ask: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}

	// --json: the whole reply message, with its session; --session asks again in it.
	out, errOut, code = n.run(t, key, "", "ask", "--agent", "slowpoke", "--json", "ping")
	var m struct {
		Session, ID, Text, Type string
		SentBy                  struct{ Handle string }
		InReplyTo               struct{ ID string }
		Timestamp               time.Time
		Embeds                  []any
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil || code != 0 {
		t.Fatalf("ask --json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	if !strings.HasPrefix(m.Session, "ses_") || m.Text != "You said: ping" || m.Type != "response" || m.SentBy.Handle != "slowpoke" ||
		m.InReplyTo.ID == "" || m.ID == "" || m.Timestamp.IsZero() || m.Embeds == nil {
		t.Fatalf("ask --json: %s", out)
	}
	out, _, _ = n.run(t, key, "", "ask", "--session", m.Session, "pong")
	if strings.TrimSpace(out) != "You said: pong" {
		t.Fatalf("ask --session: %q", out)
	}
	var s struct {
		SessionByHandle struct{ Messages []struct{ Text string } }
	}
	n.graphql(t, key, `query($h: String!) { sessionByHandle(handle: $h) { messages { text } } }`, map[string]any{"h": m.Session}, &s)
	if len(s.SessionByHandle.Messages) != 4 {
		t.Fatalf("the session holds %+v, want both questions and both answers", s.SessionByHandle.Messages)
	}

	// Failures: an agent that gives no answer (exit 1, the reason on stderr); a session that is not there; no key.
	out, errOut, code = n.run(t, key, "", "ask", "--agent", "slowpoke", "fail")
	if code != 1 || out != "" || !strings.Contains(errOut, "no answer from slowpoke") {
		t.Fatalf("a failing agent: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	_, errOut, code = n.run(t, key, "", "ask", "--session", "ses_nothere", "hello")
	if code == 0 || !strings.Contains(errOut, "ses_nothere") {
		t.Fatalf("an unknown session: exit %d %s", code, errOut)
	}
	_, errOut, code = n.run(t, "ctr_wrong", "", "ask", "hello")
	if code == 0 || !strings.Contains(errOut, "401") {
		t.Fatalf("a wrong key: exit %d %s", code, errOut)
	}
}

// screen is what a program wrote to its terminal, read as it comes.
type screen struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// waitFor waits until the screen shows text n times.
func (s *screen) waitFor(t *testing.T, text string, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for strings.Count(s.String(), text) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the terminal does not show %q %d times:\n%s", text, n, s.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestChatInATerminal drives `contrail chat` through a pseudo-terminal, as a person at a keyboard would.
func TestChatInATerminal(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	key := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "ada"))
	agent := registerSlowpoke(t, n, key)

	cmd := exec.Command(binary, "chat", "--agent", "slowpoke")
	cmd.Env = append(os.Environ(), "CONTRAIL_URL="+n.url, "CONTRAIL_API_KEY="+key)
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	scr := &screen{}
	go func() { _, _ = copyAll(scr, tty) }()
	typeKeys := func(s string) {
		if _, err := tty.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	prompts := 1
	scr.waitFor(t, "you> ", prompts)
	handle := regexp.MustCompile(`Session (ses_\w+) with slowpoke`).FindStringSubmatch(scr.String())
	if handle == nil {
		t.Fatalf("no session named:\n%s", scr)
	}

	// The reply shows as it streams: half of it is on screen while the agent still holds the rest.
	typeKeys("stream slowly\r")
	scr.waitFor(t, "slowpoke> The answer", 1)
	if strings.Contains(scr.String(), "42") {
		t.Fatalf("the whole answer before the agent sent it:\n%s", scr)
	}
	agent.gates["stream slowly"].open()
	scr.waitFor(t, "slowpoke> The answer is 42.", 1)
	prompts++
	scr.waitFor(t, "you> ", prompts)

	// Line editing: Ctrl-A goes to the start of the line, Ctrl-E to its end.
	typeKeys("world\x01hello \x05!\r")
	scr.waitFor(t, "You said: hello world!", 1)
	prompts++
	scr.waitFor(t, "you> ", prompts)

	// Ctrl-C at the prompt drops the line; the chat goes on.
	typeKeys("never sent\x03")
	scr.waitFor(t, "^C (Ctrl-D quits)", 1)
	prompts++
	typeKeys("again\r")
	scr.waitFor(t, "You said: again", 1)
	prompts++
	scr.waitFor(t, "you> ", prompts)

	// Ctrl-C during a reply cancels it: the prompt is back at once, and what the agent sends later is not shown.
	typeKeys("hang\r")
	scr.waitFor(t, "slowpoke> Thinking", 1)
	typeKeys("\x03")
	scr.waitFor(t, "reply cancelled", 1)
	prompts++
	scr.waitFor(t, "you> ", prompts)
	agent.gates["hang"].open()
	typeKeys("after the cancel\r") // answered once the cancelled query is (a session answers in order)
	scr.waitFor(t, "You said: after the cancel", 1)
	prompts++
	scr.waitFor(t, "you> ", prompts)
	if strings.Contains(scr.String(), "Thinking done") || strings.Contains(scr.String(), "You said: never sent") {
		t.Fatalf("a cancelled reply or a dropped line showed:\n%s", scr)
	}

	// Ctrl-D quits.
	typeKeys("\x04")
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("chat ended with %v:\n%s", err, scr)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("chat did not quit on Ctrl-D:\n%s", scr)
	}

	// The session holds what was said, and `chat --session` continues it (here with its input piped, not a
	// terminal), showing its history first.
	out, errOut, code := n.run(t, key, "one more\n", "chat", "--session", handle[1])
	if code != 0 || !strings.Contains(out, "you> stream slowly") || !strings.Contains(out, "slowpoke> The answer is 42.") ||
		!strings.Contains(out, "slowpoke> You said: one more") {
		t.Fatalf("chat --session: exit %d\n%s%s", code, out, errOut)
	}
}

// copyAll copies what the terminal shows until it closes.
func copyAll(dst *screen, src *os.File) (int64, error) {
	var n int64
	buf := make([]byte, 4096)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			_, _ = dst.Write(buf[:k])
			n += int64(k)
		}
		if err != nil {
			return n, fmt.Errorf("read the terminal: %w", err)
		}
	}
}
