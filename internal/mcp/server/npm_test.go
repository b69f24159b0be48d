package server_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/npmtest"
)

// npmDir holds the Node program that drives the MCP npm SDK's client, its package.json and its lockfile.
const npmDir = "testdata/npm"

// The official npm SDK's client (@modelcontextprotocol/sdk 1.32.2, Client + StreamableHTTPClientTransport) against
// /mcp: initialize, tools/list, an agent and a task called, a task that waits for input, the errors, a resource,
// two accounts, no key and a wrong key.
func TestNpmClient(t *testing.T) {
	npmtest.Install(t, npmDir, filepath.Join("@modelcontextprotocol", "sdk", "package.json"), "the MCP npm SDK")
	e := start(t, false)
	var out struct {
		Server       struct{ Name string }
		Capabilities map[string]any
		Tools        []string
		DoubleSchema map[string]any
		Ask          result
		AskGreeter   result
		Task         result
		TaskWaits    result
		Errors       map[string]result
		Templates    []string
		Transcript   string
		ToolsB       []string
		BCallsA      map[string]result
		BReadsA      any
		NoKey        any
		WrongKey     any
	}
	npmtest.RunJSON(t, npmDir, "client.mjs", []string{"MCP_URL=" + e.node.URL + "/mcp", "MCP_KEY_A=" + e.keyA, "MCP_KEY_B=" + e.keyB}, &out)
	raw, _ := json.MarshalIndent(out, "", "  ")
	t.Logf("what the npm client saw:\n%s", raw)

	if out.Server.Name != "contrail" || out.Capabilities["tools"] == nil || out.Capabilities["resources"] == nil {
		t.Errorf("initialize: server %+v, capabilities %v", out.Server, out.Capabilities)
	}
	for _, want := range []string{"ask_fixie", "ask_greeter", "task_double", "task_ask_me"} {
		if !contains(out.Tools, want) {
			t.Errorf("tools/list lacks %s: %v", want, out.Tools)
		}
	}
	if req, _ := out.DoubleSchema["required"].([]any); len(req) != 1 || req[0] != "n" {
		t.Errorf("task_double's input schema: %v", out.DoubleSchema)
	}
	if out.Ask.IsError || out.Ask.ProtocolError != "" || out.Ask.Text == "" || out.Ask.Structured["status"] != "answered" {
		t.Errorf("ask_fixie: %+v", out.Ask)
	}
	if out.AskGreeter.IsError || !strings.Contains(out.AskGreeter.Text, "The random number is") {
		t.Errorf("ask_greeter: %+v", out.AskGreeter)
	}
	if out.Task.IsError || out.Task.Structured["status"] != "succeeded" || !strings.Contains(out.Task.Text, "10") {
		t.Errorf("task_double: %+v", out.Task)
	}
	if out.TaskWaits.IsError || out.TaskWaits.Structured["status"] != "awaiting_input" || out.TaskWaits.Structured["execution_id"] == "" {
		t.Errorf("task_ask_me: %+v", out.TaskWaits)
	}
	for name, field := range map[string]string{"missingQuery": "query", "badN": "n", "missingN": "n"} {
		r := out.Errors[name]
		if !r.IsError || r.ProtocolError != "" || !strings.Contains(r.Text, field) {
			t.Errorf("%s: %+v; want a tool error naming %s", name, r, field)
		}
	}
	if r := out.Errors["unknownTool"]; r.ProtocolError == "" {
		t.Errorf("an unknown tool: %+v, want a protocol error", r)
	}
	if len(out.Templates) != 2 || !strings.Contains(out.Transcript, "Hello from npm") {
		t.Errorf("resources: templates %v, transcript %q", out.Templates, out.Transcript)
	}
	if !contains(out.ToolsB, "ask_fixie") || contains(out.ToolsB, "ask_greeter") || contains(out.ToolsB, "task_double") {
		t.Errorf("b's tools: %v", out.ToolsB)
	}
	for name, r := range out.BCallsA {
		if r.ProtocolError == "" && !r.IsError {
			t.Errorf("b called a's %s: %+v", name, r)
		}
	}
	if out.BReadsA == "read" {
		t.Errorf("b read a's session")
	}
	for name, v := range map[string]any{"no key": out.NoKey, "wrong key": out.WrongKey} {
		if !strings.Contains(toJSON(v), "401") {
			t.Errorf("%s: %v, want a 401", name, v)
		}
	}
}

type result struct {
	IsError       bool           `json:"isError"`
	Text          string         `json:"text"`
	Structured    map[string]any `json:"structured"`
	ProtocolError string         `json:"protocolError"`
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func toJSON(v any) string {
	raw, _ := json.Marshal(v)
	return string(raw)
}
