package queries_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// startPythonAgent runs an agent of testdata in Python on a free port (its one argument) with env, and returns its
// URL once it answers.
func startPythonAgent(t *testing.T, script string, env ...string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(debianPython, "testdata/"+script, fmt.Sprint(port))
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("the Python agent wrote:\n%s", stderr.String())
		}
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			return url + "/" // up, whatever it answers to GET / without a token
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Python agent did not start: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestAgentCheckingTokensAsTheFixieSDKDoes registers, with no audience given, an agent that checks tokens with PyJWT
// as the Fixie SDK does (its audiences, its FIXIE_ALLOWED_AGENT_ID = "<username>/<handle>"), asks it a query, and
// reads what it stored in user storage under that name. An agent set up for another agent ID, or unable to fetch
// the platform's keys, is refused at registration with its own words and what to change.
func TestAgentCheckingTokensAsTheFixieSDKDoes(t *testing.T) {
	t.Parallel()
	if err := exec.Command(debianPython, "-c", "import jwt, cryptography").Run(); err != nil {
		t.Skipf("%s cannot import jwt and cryptography (%v): install Debian's python3-jwt", debianPython, err)
	}
	n := platformtest.Start(t)
	ada, key := n.NewAccount(t, "ada")
	url := startPythonAgent(t, "fixie_sdk_agent.py", "FIXIE_API_URL="+n.URL, "FIXIE_ALLOWED_AGENT_ID=ada/randint")

	var created struct {
		CreateAgent struct {
			Agent struct{ AgentID, Kind string }
		}
	}
	gql(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "randint", funcUrl: $u}) { agent { agentId kind } } }`,
		map[string]any{"u": url}, &created)
	if created.CreateAgent.Agent.Kind != "codeshot" {
		t.Fatalf("registered %+v", created.CreateAgent.Agent)
	}
	if _, reply := ask(t, n, ada, "randint", "Generate a random number between 5 and 50"); reply.Text != "The random number is 23." {
		t.Fatalf("reply %+v", reply)
	}
	var stored struct{ Data string }
	r := n.Do(t, key, "GET", "/api/userstorage/"+created.CreateAgent.Agent.AgentID+"/last", nil)
	r.JSON(t, &stored)
	if r.Status != 200 || stored.Data != `"23"` {
		t.Fatalf("what the agent stored under its Fixie name, read by its ID: %d %s", r.Status, r.Body)
	}

	// The same agent registered under another handle: its tokens name "ada/other", which it refuses.
	errs := gqlErrors(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "other", funcUrl: $u}) { agent { agentId } } }`,
		map[string]any{"u": url}, nil)
	if len(errs) != 1 || !strings.Contains(errs[0], "Invalid token") || !strings.Contains(errs[0], `"ada/other"`) ||
		!strings.Contains(errs[0], "FIXIE_ALLOWED_AGENT_ID") {
		t.Fatalf("errors %v: want the agent's own words and the agent the token named", errs)
	}
	// An agent that fetches its keys from elsewhere cannot check the token and answers a bare 500.
	lost := startPythonAgent(t, "fixie_sdk_agent.py", "FIXIE_API_URL=http://127.0.0.1:9", "FIXIE_ALLOWED_AGENT_ID=ada/lost")
	errs = gqlErrors(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "lost", funcUrl: $u}) { agent { agentId } } }`,
		map[string]any{"u": lost}, nil)
	if len(errs) != 1 || !strings.Contains(errs[0], "Internal Server Error") || !strings.Contains(errs[0], "FIXIE_API_URL="+n.Config.Public()) {
		t.Fatalf("errors %v: want the agent's answer and how to point it at this platform's keys", errs)
	}
}
