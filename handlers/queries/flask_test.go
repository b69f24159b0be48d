package queries_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// debianPython is the interpreter `make deps` installs python3-flask for.
const debianPython = "/usr/bin/python3"

// TestSeedFlaskAgentAnswersInASession runs seed 000's simplest agent (Python, Flask: POST / only) and registers it
// by its URL: with no GET / it is a standalone agent, and its reply becomes the session's.
func TestSeedFlaskAgentAnswersInASession(t *testing.T) {
	t.Parallel()
	if err := exec.Command(debianPython, "-c", "import flask").Run(); err != nil {
		t.Skipf("%s cannot import flask (%v): `make deps` installs Debian's python3-flask", debianPython, err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(debianPython, "testdata/flask_agent.py", fmt.Sprint(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			break // up (GET / answers 405: the agent only takes POST)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Flask agent did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	info, err := n.Commands.CreateAgent(context.Background(), p, commands.AgentInput{Handle: "hello", QueryURL: &url})
	if err != nil {
		t.Fatal(err)
	}
	if info.Kind != "standalone" {
		t.Fatalf("an agent without GET / registered as %q, want standalone", info.Kind)
	}
	_, reply := ask(t, n, p, "hello", "Say hello")
	if reply.Type != events.MessageResponse || reply.Text != "Hello, world!" {
		t.Fatalf("reply %+v", reply)
	}
}
