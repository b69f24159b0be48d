package platform_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/sandbox"
	"github.com/contrailhq/contrail/internal/waittest"
)

// codeNode is a node whose model calls code_interpreter with the code it is given, then answers "ran", and an
// account's key on it; it skips the test on a machine that cannot run a sandbox.
func codeNode(t *testing.T, opts ...platformtest.Option) (*platformtest.Node, *llmtest.Server, string) {
	t.Helper()
	if _, err := sandbox.New(context.Background(), sandbox.Config{}); errors.Is(err, sandbox.ErrUnsupported) {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	model := llmtest.NewServer(t)
	n := platformtest.Start(t, append([]platformtest.Option{platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test"
	})}, opts...)...)
	_, key := n.NewAccount(t, "coder")
	return n, model, key
}

// newContainer makes a container and returns its ID.
func newContainer(t *testing.T, n *platformtest.Node, key string) string {
	t.Helper()
	r := n.Do(t, key, "POST", "/v1/containers", map[string]any{"name": "box"})
	var c struct{ ID string }
	r.JSON(t, &c)
	if r.Status != http.StatusOK || c.ID == "" {
		t.Fatalf("create a container: %d %s", r.Status, r.Body)
	}
	return c.ID
}

// codeRequest is a response whose model runs code in container.
func codeRequest(model *llmtest.Server, container, code string) map[string]any {
	args, _ := jsonString(map[string]string{"code": code})
	model.Enqueue(llmtest.ToolCalls(llm.ToolCall{ID: "call_" + container, Name: "code_interpreter", Arguments: args}), llmtest.Text("ran"))
	return map[string]any{"model": "gpt-4o-mini", "input": "run", "include": []string{"code_interpreter_call.outputs"},
		"tools": []any{map[string]any{"type": "code_interpreter", "container": container}}}
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// TestSweepClosesADeletedContainersSandbox: a node that did not hear a container's deletion (its subscription gone,
// as on a lost connection) still closes the container's warm sandbox, at its next sweep, and says why once.
func TestSweepClosesADeletedContainersSandbox(t *testing.T) {
	t.Parallel()
	n, model, key := codeNode(t, platformtest.WithConfig(func(c *config.Config) { c.ContainerSweep = 20 * time.Millisecond }))
	id := newContainer(t, n, key)
	if r := n.Do(t, key, "POST", "/v1/responses", codeRequest(model, id, "x = 1")); r.Status != http.StatusOK {
		t.Fatalf("run: %d %s", r.Status, r.Body)
	}
	if !n.WarmSandbox(id) {
		t.Fatalf("no warm sandbox after a call: %+v", n.WarmCodeSandboxes())
	}
	if !n.StopHearingContainerDeletions() {
		t.Fatal("the node was not hearing containers' deletions")
	}
	if r := n.Do(t, key, "DELETE", "/v1/containers/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	waittest.Until(t, "the deleted container's sandbox closed and logged", func() bool {
		return !n.WarmSandbox(id) && n.SandboxClosed(id, "its container was deleted") > 0
	})
	if c := n.SandboxClosed(id, "its container was deleted"); c != 1 {
		t.Errorf("the close is logged %d times:\n%s", c, n.Logs)
	}
}

// TestCallEndingAfterItsContainersDeletionRecordsNoFile: a code_interpreter call that began before its container
// was deleted and wrote a file after it records nothing on the deleted container (the node says so in its log);
// the call itself completes, its file the account's.
func TestCallEndingAfterItsContainersDeletionRecordsNoFile(t *testing.T) {
	t.Parallel()
	// The node does not hear the deletion (the sweep is an hour away), so that the call runs on past it, as one
	// does whose sandbox a node made before it heard of the deletion.
	n, model, key := codeNode(t, platformtest.WithConfig(func(c *config.Config) { c.ContainerSweep = time.Hour }))
	id := newContainer(t, n, key)
	if r := n.Do(t, key, "POST", "/v1/responses", codeRequest(model, id, "x = 1")); r.Status != http.StatusOK {
		t.Fatalf("warm up: %d %s", r.Status, r.Body)
	}
	if !n.StopHearingContainerDeletions() {
		t.Fatal("the node was not hearing containers' deletions")
	}
	// The call writes its file after a pause long enough for the deletion to land in it; that it did is checked
	// (the call still in its sandbox once the deletion is answered), not assumed.
	body, _ := jsonString(codeRequest(model, id, "import time\ntime.sleep(6)\nopen('/mnt/data/late.txt', 'w').write('late')\nprint('wrote')"))
	type answer struct {
		status int
		body   []byte
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		req, err := http.NewRequestWithContext(t.Context(), "POST", n.URL+"/v1/responses", strings.NewReader(body))
		if err != nil {
			done <- answer{err: err}
			return
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		done <- answer{resp.StatusCode, raw, err}
	}()
	waittest.Until(t, "the call in its sandbox", func() bool { return n.CallInSandbox(id) })
	if r := n.Do(t, key, "DELETE", "/v1/containers/"+id, nil); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if !n.CallInSandbox(id) {
		t.Fatalf("the call ended before the deletion was answered: the machine is too slow for this test's pause")
	}
	a := <-done
	if a.err != nil || a.status != http.StatusOK || !strings.Contains(string(a.body), "wrote") || !strings.Contains(string(a.body), `"status":"completed"`) {
		t.Fatalf("the call: %d %s (%v)", a.status, a.body, a.err)
	}
	history, _, err := n.Store.Load(t.Context(), events.Ref{Type: "container", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	deleted := false
	for _, e := range history {
		switch {
		case e.Type == "container.deleted":
			deleted = true
		case deleted:
			t.Errorf("the deleted container recorded %s %s", e.Type, e.Data)
		}
	}
	if !deleted {
		t.Fatalf("the container's log has no deletion")
	}
	if !strings.Contains(n.Logs.String(), "a code_interpreter call ended after its container was deleted") {
		t.Errorf("the node did not say why the call's files were not recorded:\n%s", n.Logs)
	}
}
