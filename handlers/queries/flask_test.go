package queries_test

import (
	"context"
	"os/exec"
	"testing"

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
	url := startPythonAgent(t, "flask_agent.py")

	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	info, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: "hello", QueryURL: &url})
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
