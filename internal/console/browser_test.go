package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/cmd/agents/samples/calc"
	"github.com/contrailhq/contrail/cmd/agents/samples/chart"
	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// artifactsDir is where the browser test leaves its screenshots (git-ignored).
const artifactsDir = "web/artifacts"

// TestConsoleInABrowser runs web/test/console.test.mjs (playwright-core driving Debian's chromium) against a real
// node with the sample agents calc, genrand and chart, then checks on the node what the browser did.
func TestConsoleInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test takes seconds")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the browser test needs Node.js to run playwright-core")
	}
	if _, err := os.Stat("web/node_modules/playwright-core/package.json"); err != nil {
		t.Skip("playwright-core is not installed in internal/console/web: run `make deps` (npm ci)")
	}
	browser := os.Getenv("CONTRAIL_CHROMIUM")
	if browser == "" {
		if browser, err = exec.LookPath("chromium"); err != nil {
			t.Skip("chromium is not installed: `make deps` installs Debian's chromium")
		}
	}
	models := filepath.Dir(uselitetest.Dir(t)) // routing among the sample agents needs the neural embedder
	// A handler that fails on one account until the browser re-drives its event from the dead-letter queue.
	var broken atomic.Bool
	var greeted atomic.Int32
	broken.Store(true)
	greeter := runtime.Handler{Name: "greeter", EventTypes: []string{"account.created"}, MaxAttempts: 2,
		Handle: func(_ context.Context, e events.Envelope) error {
			if e.Event.(events.AccountCreated).Name != "poison" {
				return nil
			}
			if broken.Load() {
				return errors.New("greeter cannot greet poison")
			}
			greeted.Add(1)
			return nil
		}}
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) { c.ModelsPath = models }), platformtest.WithHandlers(greeter))
	adminAgents := map[string]string{
		"calc":    serveAgent(t, n, calc.Handler),
		"genrand": serveAgent(t, n, genrand.Handler),
		"chart":   serveAgent(t, n, chart.Handler),
	}
	for handle, url := range adminAgents {
		gql(t, n, n.AdminKey, `mutation($h: String!, $u: String!) { createAgent(agentData: {handle: $h, funcUrl: $u, published: true}) { agent { handle } } }`,
			map[string]any{"h": handle, "u": url}, nil)
	}
	ada, key := n.NewAccount(t, "ada")
	waitRoutable(t, n, key, "What is 12 times 7?", "calc")
	waitRoutable(t, n, key, "Generate a random number between 5 and 50", "genrand")
	waitRoutable(t, n, key, "Draw a bar chart of 4, 9 and 1.", "chart")
	spare := n.IssueKey(t, ada, ada.AccountID, "old laptop")
	thread := completedRun(t, n, key)
	julepAgent, execution := julepExecution(t, n, key)
	oldConv, conv, resp := conversationWithResponse(t, n, key)
	n.NewAccount(t, "poison")
	waitDeadLetter(t, n)
	broken.Store(false)

	if err := os.RemoveAll(artifactsDir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "web/test/console.test.mjs")
	cmd.Env = append(os.Environ(),
		"CONSOLE_URL="+n.URL, "ADMIN_KEY="+n.AdminKey, "USER_KEY="+key, "SPARE_KEY_ID="+spare.KeyID,
		"AGENT_URL="+serveAgent(t, n, genrand.Handler), "DEAD_AGENT_URL="+deadURL(t), "CHROMIUM="+browser, "ARTIFACTS="+artifactsDir,
		"JULEP_AGENT="+julepAgent, "JULEP_EXECUTION="+execution,
		"OLD_CONVERSATION="+oldConv, "CONVERSATION="+conv, "RESPONSE="+resp)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var result struct {
		Figures     map[string]any
		Session     string
		Screenshots []struct{ File, Shows string }
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Step  string
			OK    bool
			Error string
		}
		_ = json.Unmarshal(sc.Bytes(), &line)
		switch {
		case line.Step != "" && line.OK:
			t.Logf("browser: %s", line.Step)
		case line.Step != "":
			t.Errorf("browser: %s: %s", line.Step, line.Error)
		default:
			_ = json.Unmarshal(sc.Bytes(), &result)
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 77 {
		t.Skipf("%s", strings.TrimSpace(stderr.String()))
	}
	if err != nil {
		t.Fatalf("the browser script failed: %v\n%s(screenshot of the failure in internal/console/%s/failure.png)", err, stderr.String(), artifactsDir)
	}

	// What the browser did, as the node sees it.
	var keys struct{ Keys []projections.KeyView }
	n.Do(t, n.AdminKey, "GET", "/admin/keys?account="+ada.AccountID, nil).JSON(t, &keys)
	revoked := false
	for _, k := range keys.Keys {
		revoked = revoked || (k.ID == spare.KeyID && k.RevokedAt != nil)
	}
	if !revoked {
		t.Errorf("the key revoked in the browser is not revoked: %+v", keys.Keys)
	}
	if r := n.Do(t, spare.Key, "GET", "/admin/whoami", nil); r.Status != 401 {
		t.Errorf("the revoked key still works: %d", r.Status)
	}
	var dice struct {
		AgentByHandle *struct {
			Kind  string
			Owner struct{ Username string }
		}
	}
	gql(t, n, key, `{ agentByHandle(handle: "dice") { kind owner { username } } }`, nil, &dice)
	if dice.AgentByHandle == nil || dice.AgentByHandle.Owner.Username != "ada" || dice.AgentByHandle.Kind != "codeshot" {
		t.Errorf("the agent registered in the browser: %+v", dice.AgentByHandle)
	}
	events := string(n.Do(t, key, "GET", "/api/sessions/"+result.Session+"/events", nil).Body)
	for _, want := range []string{`"session.routed"`, `"chosen":"calc"`, `"kind":"ask_func"`, `"kind":"func_says"`} {
		if !strings.Contains(events, want) {
			t.Errorf("the session chatted in the browser (%s) has no %s in its log", result.Session, want)
		}
	}
	for deadline := time.Now().Add(10 * time.Second); greeted.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if greeted.Load() != 1 {
		t.Errorf("the event re-driven in the browser was handled %d times", greeted.Load())
	}
	for _, s := range result.Screenshots {
		t.Logf("screenshot internal/console/%s/%s: %s", artifactsDir, s.File, s.Shows)
	}
	figures, _ := json.Marshal(result.Figures)
	t.Logf("figures: %s (thread %s)", figures, thread)
}

// serveAgent runs a sample agent on a real HTTP server that verifies the node's tokens, and returns its URL.
func serveAgent(t *testing.T, n *platformtest.Node, handler func(...agentkit.Option) (http.Handler, error)) string {
	t.Helper()
	v, err := agentkit.NewVerifier(n.URL+"/.well-known/jwks.json", n.URL)
	if err != nil {
		t.Fatal(err)
	}
	h, err := handler(agentkit.WithVerifier(v))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func gql(t *testing.T, n *platformtest.Node, key, query string, vars map[string]any, out any) {
	t.Helper()
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	n.Do(t, key, "POST", "/graphql", map[string]any{"query": query, "variables": vars}).JSON(t, &r)
	if len(r.Errors) > 0 {
		t.Fatalf("graphql %s: %+v", query, r.Errors)
	}
	if out != nil {
		if err := json.Unmarshal(r.Data, out); err != nil {
			t.Fatal(err)
		}
	}
}

// waitRoutable waits until the router picks handle for a query (the routing index follows the registry).
func waitRoutable(t *testing.T, n *platformtest.Node, key, query, handle string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var r struct {
			Route []struct {
				Agent struct{ Handle string }
			}
		}
		gql(t, n, key, `query($q: String!) { route(query: $q, first: 1) { agent { handle } } }`, map[string]any{"q": query}, &r)
		if len(r.Route) == 1 && r.Route[0].Agent.Handle == handle {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%q is not routed to %s: %+v", query, handle, r.Route)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitDeadLetter waits until the dead-letter queue holds an entry.
func waitDeadLetter(t *testing.T, n *platformtest.Node) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list struct {
			DeadLetters []deadletter.DeadLetter `json:"dead_letters"`
		}
		n.Do(t, n.AdminKey, "GET", "/admin/dlq", nil).JSON(t, &list)
		if len(list.DeadLetters) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no dead letter after 20s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// completedRun makes an assistant, a thread and a run of it on the offline model, for the Assistants page.
func completedRun(t *testing.T, n *platformtest.Node, key string) string {
	t.Helper()
	var a, th, run struct{ ID, Status string }
	n.Do(t, key, "POST", "/v1/assistants", map[string]any{"model": "offline", "name": "helper", "instructions": "You help."}).JSON(t, &a)
	n.Do(t, key, "POST", "/v1/threads", map[string]any{"messages": []map[string]string{{"role": "user", "content": "Hello, who are you?"}}}).JSON(t, &th)
	n.Do(t, key, "POST", "/v1/threads/"+th.ID+"/runs", map[string]any{"assistant_id": a.ID}).JSON(t, &run)
	deadline := time.Now().Add(20 * time.Second)
	for run.Status != "completed" {
		if time.Now().After(deadline) || run.Status == "failed" {
			t.Fatalf("run %s: %s", run.ID, run.Status)
		}
		time.Sleep(50 * time.Millisecond)
		n.Do(t, key, "GET", "/v1/threads/"+th.ID+"/runs/"+run.ID, nil).JSON(t, &run)
	}
	return th.ID
}

// julepExecution makes, on the Julep face, an agent with a doc and a task, a user, and an execution of the task that
// has finished, for the Julep pages. It returns the agent's and the execution's IDs.
func julepExecution(t *testing.T, n *platformtest.Node, key string) (string, string) {
	t.Helper()
	var agent, task, exec struct{ ID, Status string }
	n.Do(t, key, "POST", "/julep/agents", map[string]any{"name": "counter", "about": "counts for the console's test"}).JSON(t, &agent)
	n.Do(t, key, "POST", "/julep/users", map[string]any{"name": "Ann", "about": "a user of the counter"})
	n.Do(t, key, "POST", "/julep/agents/"+agent.ID+"/docs", map[string]any{"title": "Counting", "content": "One, two, three."})
	n.Do(t, key, "POST", "/julep/agents/"+agent.ID+"/tasks", map[string]any{"name": "count",
		"main": []any{map[string]any{"evaluate": map[string]any{"n": "$ _.n + 1"}}, map[string]any{"evaluate": map[string]any{"n": "$ _.n * 2"}}}}).JSON(t, &task)
	n.Do(t, key, "POST", "/julep/tasks/"+task.ID+"/executions", map[string]any{"input": map[string]any{"n": 20}}).JSON(t, &exec)
	deadline := time.Now().Add(20 * time.Second)
	for exec.Status != "succeeded" {
		if time.Now().After(deadline) || exec.Status == "failed" {
			t.Fatalf("execution %s: %s", exec.ID, exec.Status)
		}
		time.Sleep(50 * time.Millisecond)
		n.Do(t, key, "GET", "/julep/executions/"+exec.ID, nil).JSON(t, &exec)
	}
	return agent.ID, exec.ID
}

// conversationWithResponse makes, on the OpenAI face, two conversations: an older one, and one whose items are a
// user's message, a function call and its output, followed by a response of the offline model in it, for the
// Responses page. It returns the older conversation's ID, the other's, and the response's.
func conversationWithResponse(t *testing.T, n *platformtest.Node, key string) (string, string, string) {
	t.Helper()
	var old, conv, resp struct{ ID, Status string }
	n.Do(t, key, "POST", "/v1/conversations", map[string]any{"items": []any{
		map[string]any{"role": "user", "content": "An older conversation about tea"}}}).JSON(t, &old)
	n.Do(t, key, "POST", "/v1/conversations", map[string]any{"metadata": map[string]string{"from": "console test"}, "items": []any{
		map[string]any{"role": "user", "content": "Plan a trip to Lisbon with three stops and check the weather there"},
		map[string]any{"type": "function_call", "call_id": "call_weather", "name": "get_weather", "arguments": `{"city":"Lisbon"}`},
		map[string]any{"type": "function_call_output", "call_id": "call_weather", "output": "sunny, 24C"},
	}}).JSON(t, &conv)
	r := n.Do(t, key, "POST", "/v1/responses", map[string]any{"model": "offline", "conversation": conv.ID, "input": "Thanks, what should I pack?"})
	r.JSON(t, &resp)
	if old.ID == "" || conv.ID == "" || resp.Status != "completed" {
		t.Fatalf("conversations %q, %q; response: %d %s", old.ID, conv.ID, r.Status, r.Body)
	}
	return old.ID, conv.ID, resp.ID
}

// deadURL is the URL of an agent that does not answer: a loopback port nothing listens on.
func deadURL(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/"
	srv.Close()
	return url
}
