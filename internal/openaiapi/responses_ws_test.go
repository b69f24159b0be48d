package openaiapi_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
)

// wsRun is what ws.mjs saw.
type wsRun struct {
	Two []struct {
		ID, Status, Text, Previous string
		Types                      []string
	} `json:"two"`
	Tool struct {
		Call struct {
			Name, Arguments string
			CallID          string `json:"call_id"`
			Types           []string
		} `json:"call"`
		Text  string   `json:"text"`
		Types []string `json:"types"`
	} `json:"tool"`
	Lane struct {
		Text      string `json:"text"`
		StreamIDs []any  `json:"streamIDs"`
	} `json:"lane"`
	BadField, BadJSON, BadType, NotFound wsFailure
	After                                struct{ Text, Status string }
	SocketErrors                         []string `json:"socketErrors"`
	AgentRun                             string   `json:"agentRun"`
	AgentStreamed                        struct{ Final, Text string }
	AgentSockets                         int      `json:"agentSockets"`
	AgentHTTP                            []string `json:"agentHTTP"`
}

type wsFailure struct {
	Unexpected string `json:"unexpected"`
	Message    string `json:"message"`
	Status     int    `json:"status"`
	Type       string `json:"type"`
	Param      string `json:"param"`
	Detail     string `json:"detail"`
}

// TestResponsesWebSocketWithNpmSDKs: openai 7.57.0's ResponsesWS and its lane helper over one socket: two
// responses, the second following the first; a function call and its output; a request on a lane of its own (its
// events carry its stream_id); requests the node refuses (a bad field, bad JSON, an unknown type, a previous
// response not found), each an error event naming the problem, with the socket serving the next request. Then the
// Agents SDK 0.20.0 with setOpenAIResponsesTransport('websocket'): a run with a function tool and a streamed run.
func TestResponsesWebSocketWithNpmSDKs(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		all := ""
		for _, m := range req.Messages {
			all += m.Content + "\n"
		}
		hasTool := slices.ContainsFunc(req.Tools, func(t llm.Tool) bool { return t.Name == "get_weather" })
		switch {
		case last.Role == llm.RoleTool:
			return llmtest.Text("It is " + last.Content + ".")
		case strings.Contains(last.Content, "weather") && hasTool:
			city := "Oslo"
			if strings.Contains(last.Content, "Bergen") {
				city = "Bergen"
			}
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_w_" + city, Name: "get_weather", Arguments: `{"city":"` + city + `"}`})
		case strings.Contains(last.Content, "What is my name?"):
			if strings.Contains(all, "My name is Ada.") {
				return llmtest.Text("Your name is Ada.")
			}
			return llmtest.Text("I do not know your name.")
		case strings.Contains(last.Content, "My name is Ada."):
			return llmtest.Text("Hello Ada.")
		}
		return llmtest.Text("Answered: " + last.Content)
	})
	var out wsRun
	npmtest.RunJSON(t, agentsDir, "ws.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key}, &out)
	raw, _ := json.Marshal(out)
	t.Logf("ws.mjs: %s", raw)

	// The events of a text response, in the order the SSE stream has them.
	textEvents := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(out.Two) != 2 {
		t.Fatalf("two responses on one socket: %s", raw)
	}
	first, second := out.Two[0], out.Two[1]
	if first.Status != "completed" || first.Text != "Hello Ada." || !slices.Equal(slices.Compact(first.Types), textEvents) {
		t.Errorf("first response: %+v", first)
	}
	if second.Status != "completed" || second.Text != "Your name is Ada." || second.Previous != first.ID ||
		!slices.Equal(slices.Compact(second.Types), textEvents) {
		t.Errorf("second response, following %s: %+v", first.ID, second)
	}
	call := out.Tool.Call
	if call.Name != "get_weather" || call.CallID != "call_w_Oslo" || call.Arguments != `{"city":"Oslo"}` ||
		!slices.Contains(call.Types, "response.function_call_arguments.done") || call.Types[len(call.Types)-1] != "response.completed" {
		t.Errorf("function call: %+v", call)
	}
	if out.Tool.Text != "It is sunny." {
		t.Errorf("the answer to the function's output: %q (%v)", out.Tool.Text, out.Tool.Types)
	}
	if out.Lane.Text != "Answered: on lane b" || len(out.Lane.StreamIDs) != 1 || out.Lane.StreamIDs[0] != "lane-b" {
		t.Errorf("a response on lane-b: %+v", out.Lane)
	}
	for name, f := range map[string]struct {
		got           wsFailure
		status        int
		param, detail string
	}{
		"a model that is a number":      {out.BadField, 400, "model", "model"},
		"bad JSON":                      {out.BadJSON, 400, "", "could not parse the JSON of your message"},
		"an unknown type":               {out.BadType, 400, "type", "response.bogus"},
		"a previous response not found": {out.NotFound, 404, "previous_response_id", "resp_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
	} {
		if f.got.Unexpected != "" || f.got.Status != f.status || f.got.Param != f.param || f.got.Type != "invalid_request_error" ||
			!strings.Contains(f.got.Detail, f.detail) {
			t.Errorf("%s: error event %+v, want status %d naming %q", name, f.got, f.status, f.param)
		}
	}
	if out.After.Text != "Answered: still there?" || out.After.Status != "completed" {
		t.Errorf("a request after the refused ones: %+v", out.After)
	}
	// The runs went over sockets (the SDK keeps one per model), none over HTTP.
	if out.AgentSockets == 0 || len(out.AgentHTTP) != 0 {
		t.Errorf("the Agents SDK opened %d sockets and made HTTP requests %v", out.AgentSockets, out.AgentHTTP)
	}
	if out.AgentRun != "It is sunny in Oslo." {
		t.Errorf("Agents SDK run over the websocket transport: %q", out.AgentRun)
	}
	if out.AgentStreamed.Final != "It is sunny in Bergen." || out.AgentStreamed.Text != "It is sunny in Bergen." {
		t.Errorf("Agents SDK streamed run over the websocket transport: %+v", out.AgentStreamed)
	}
}
