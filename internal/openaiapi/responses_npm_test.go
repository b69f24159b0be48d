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

// agentsDir holds the Node program that drives openai 7.x's Responses helpers and the OpenAI Agents SDK.
const agentsDir = "testdata/agents"

type agentsRun struct {
	Stream struct {
		Events []string `json:"events"`
		Text   string   `json:"text"`
		ID     string   `json:"id"`
	} `json:"stream"`
	Replay         []string `json:"replay"`
	FunctionStream struct {
		Events []string `json:"events"`
		Output []struct {
			Type, Name, Arguments string
			CallID                string `json:"call_id"`
		} `json:"output"`
	} `json:"functionStream"`
	FunctionRun string `json:"functionRun"`
	StreamedRun struct {
		Final, Text string
	} `json:"streamedRun"`
	Handoff struct {
		Final, Last string
	} `json:"handoff"`
	Typed struct {
		City string  `json:"city"`
		Temp float64 `json:"temp"`
	} `json:"typed"`
	Session struct {
		Final string `json:"final"`
		ID    string `json:"id"`
		Items int    `json:"items"`
	} `json:"session"`
}

// TestResponsesWithNpmSDKs: openai 7.57.0's responses.stream() (whose accumulator throws on any event out of
// order or unknown) over a message and a function call, retrieve(id, {stream: true}) replaying from 0, and the
// Agents SDK 0.20.0: run() with a function tool, a streamed run, a handoff, outputType, and
// OpenAIConversationsSession over two runs; all against the node with only the base URL changed.
func TestResponsesWithNpmSDKs(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		system := ""
		if len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem {
			system = req.Messages[0].Content
		}
		hasTool := func(name string) bool {
			return slices.ContainsFunc(req.Tools, func(t llm.Tool) bool { return t.Name == name })
		}
		all := ""
		for _, m := range req.Messages {
			all += m.Content + "\n"
		}
		switch {
		case strings.Contains(system, "Spanish."):
			return llmtest.Text("¡Hola! ¿En qué puedo ayudarte?")
		case hasTool("transfer_to_Spanish"):
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_handoff", Name: "transfer_to_Spanish", Arguments: `{}`})
		case len(req.ResponseFormat) > 0:
			return llmtest.Text(`{"city":"Oslo","temp":21}`)
		case last.Role == llm.RoleTool:
			return llmtest.Text("It is " + last.Content + ".")
		case strings.Contains(last.Content, "weather") && hasTool("get_weather"):
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
		}
		return llmtest.Text("streamed words here")
	})
	var out agentsRun
	npmtest.RunJSON(t, agentsDir, "agents.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key}, &out)
	raw, _ := json.Marshal(out)
	if out.Stream.Text != "streamed words here" || len(out.Stream.Events) == 0 || out.Stream.Events[0] != "response.created" ||
		out.Stream.Events[len(out.Stream.Events)-1] != "response.completed" {
		t.Errorf("responses.stream(): %s", raw)
	}
	if !slices.Equal(out.Replay, out.Stream.Events) {
		t.Errorf("retrieve(id, {stream: true}) replayed %q, the stream was %q", out.Replay, out.Stream.Events)
	}
	fs := out.FunctionStream
	if len(fs.Output) != 1 || fs.Output[0].Type != "function_call" || fs.Output[0].Name != "get_weather" ||
		fs.Output[0].CallID != "call_w_Oslo" || !slices.Contains(fs.Events, "response.function_call_arguments.done") {
		t.Errorf("responses.stream() with a function call: %s", raw)
	}
	if out.FunctionRun != "It is sunny in Oslo." {
		t.Errorf("run() with a function tool: %q", out.FunctionRun)
	}
	if out.StreamedRun.Final != "It is sunny in Bergen." || out.StreamedRun.Text != "It is sunny in Bergen." {
		t.Errorf("streamed run: %+v", out.StreamedRun)
	}
	if out.Handoff.Last != "Spanish" || !strings.HasPrefix(out.Handoff.Final, "¡Hola!") {
		t.Errorf("handoff: %+v", out.Handoff)
	}
	if out.Typed.City != "Oslo" || out.Typed.Temp != 21 {
		t.Errorf("outputType: %+v", out.Typed)
	}
	if out.Session.Final != "Your name is Ada." || !strings.HasPrefix(out.Session.ID, "conv_") || out.Session.Items != 4 {
		t.Errorf("OpenAIConversationsSession: %+v", out.Session)
	}
}
