package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// post sends a JSON body to the node and decodes the answer, which must be 201.
func (n *node) post(t *testing.T, key, path string, body any) map[string]any {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", n.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST %s: %d %v", path, resp.StatusCode, out)
	}
	return out
}

func TestExecutionsCLI(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	key := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "ada"))
	agent := n.post(t, key, "/julep/agents", map[string]any{"name": "runner"})["id"].(string)
	task := n.post(t, key, "/julep/agents/"+agent+"/tasks", map[string]any{"name": "ask", "main": []any{
		map[string]any{"evaluate": map[string]any{"n": "$ 41"}},
		map[string]any{"wait_for_input": map[string]any{"info": "more?"}},
		map[string]any{"evaluate": map[string]any{"n": "$ _.n + 1"}},
	}})["id"].(string)
	id := n.post(t, key, "/julep/tasks/"+task+"/executions", map[string]any{"input": map[string]any{}})["id"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(n.cli(t, key, "executions", "get", id), `"status": "awaiting_input"`) {
		if time.Now().After(deadline) {
			t.Fatal("the execution never waits for input")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out := n.cli(t, key, "executions", "list", task); !strings.Contains(out, id) || !strings.Contains(out, "awaiting_input") {
		t.Fatalf("executions list:\n%s", out)
	}
	if out := n.cli(t, key, "executions", "resume", id, "--input", `{"n": 1}`); !strings.Contains(out, id) {
		t.Fatalf("resume: %s", out)
	}
	for !strings.Contains(n.cli(t, key, "executions", "get", id), `"status": "succeeded"`) {
		if time.Now().After(deadline) {
			t.Fatal("the execution never ends")
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := n.cli(t, key, "replay", "execution", id)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"init", "step", "wait", "resume", "finish"}
	if len(lines) != len(want)+2 {
		t.Fatalf("replay execution printed:\n%s", out)
	}
	for i, typ := range want {
		if !strings.Contains(lines[i+1], " "+typ+" ") {
			t.Fatalf("line %d is not %s:\n%s", i+1, typ, out)
		}
	}
	if !strings.Contains(lines[5], `{"n":2}`) || !strings.Contains(lines[6], "5 transitions in") {
		t.Fatalf("replay execution printed:\n%s", out)
	}
	// Cancelling what has ended is refused, saying why.
	if _, stderr, code := n.run(t, key, "", "executions", "cancel", id); code == 0 || !strings.Contains(stderr, "succeeded") {
		t.Fatalf("cancel of a finished execution: exit %d: %s", code, stderr)
	}
}
