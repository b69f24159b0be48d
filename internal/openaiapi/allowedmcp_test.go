package openaiapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAllowedToolsNamesAnMCPServerByItsLabel: a tool_choice allowed_tools entry {type: mcp, server_label} lets the
// model see that server's tools (and not a function left out), and one naming a server or function the request
// does not have is a 400 naming it. Before, an mcp entry was keyed by its type, which no offered tool is called by,
// so every MCP tool was silently withheld from the model.
func TestAllowedToolsNamesAnMCPServerByItsLabel(t *testing.T) {
	t.Parallel()
	srv := serveMCP(t)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) {
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	}))
	tools := `"tools":[{"type":"mcp","server_label":"calc","server_url":"` + srv.URL + `","require_approval":"never"},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}}]`
	post := func(choice string) (int, string) {
		return e.send(t, http.MethodPost, "/v1/responses", `{"model":"gpt-4o-mini","input":"Add 2 and 3.",`+tools+
			`,"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[`+choice+`]}}`)
	}
	e.model.Enqueue(llmtest.Text("5."))
	if status, body := post(`{"type":"mcp","server_label":"calc"}`); status != http.StatusOK {
		t.Fatalf("create: %d %s", status, body)
	}
	var offered []string
	for _, tool := range e.model.Requests()[0].Tools {
		offered = append(offered, tool.Name)
	}
	if !slices.Contains(offered, "add") || slices.Contains(offered, "get_time") {
		t.Errorf("the model was offered %v; want the calc server's tools (add) and not get_time", offered)
	}
	for choice, param := range map[string]string{
		`{"type":"mcp","server_label":"nope"}`:     "tool_choice.tools[0].server_label",
		`{"type":"function","name":"get_weather"}`: "tool_choice.tools[0].name",
	} {
		if status, body := post(choice); status != http.StatusBadRequest || errorParam(body) != param {
			t.Errorf("%s: %d %s; want a 400 naming %s", choice, status, body, param)
		}
	}
}

// TestInputTokensLeavesOutToolsAllowedToolsWithholds: input_tokens counts the tools an allowed_tools choice lets the
// model see, an mcp server's by its label as the model loop looks them up: an mcp tool left out by the choice is not
// counted (and so not refused as one it cannot count), and the function it names is.
func TestInputTokensLeavesOutToolsAllowedToolsWithholds(t *testing.T) {
	t.Parallel()
	srv := serveMCP(t)
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) {
		c.MCPHosts = []string{strings.TrimPrefix(srv.URL, "http://")}
	}))
	tools := `"tools":[{"type":"mcp","server_label":"calc","server_url":"` + srv.URL + `","require_approval":"never"},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}}]`
	count := func(choice string) (int, string) {
		return e.send(t, http.MethodPost, "/v1/responses/input_tokens", `{"model":"gpt-4o-mini","input":"What time is it?",`+tools+
			`,"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[`+choice+`]}}`)
	}
	if status, body := count(`{"type":"function","name":"get_time"}`); status != http.StatusOK {
		t.Errorf("allowed_tools naming the function only: %d %s; want a count", status, body)
	}
	if status, body := count(`{"type":"mcp","server_label":"calc"}`); status != http.StatusBadRequest || errorParam(body) != "tools[0].type" {
		t.Errorf("allowed_tools naming the mcp server: %d %s; want a 400 naming tools[0].type (its tools are not counted)", status, body)
	}
}
