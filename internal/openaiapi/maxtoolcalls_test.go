package openaiapi_test

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// TestMaxToolCallsBoundsTheServerToolCalls: with max_tool_calls 1, a model that searches twice at once has one
// search processed, and is then asked again without the tool, and answers. Before, the bound was echoed and not
// applied: every call ran, and a model that kept searching was asked until the turns ran out.
func TestMaxToolCallsBoundsTheServerToolCalls(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	_, store := e.manualStore(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if len(req.Tools) > 0 {
			return llmtest.ToolCalls(llm.ToolCall{ID: "c1", Name: "file_search", Arguments: `{"queries":["descale"]}`},
				llm.ToolCall{ID: "c2", Name: "file_search", Arguments: `{"queries":["boiler"]}`})
		}
		return llmtest.Text("Every three months.")
	})
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("How often do I descale?"),
		Tools:        []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{store.ID})},
		MaxToolCalls: openai.Int(1),
	})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if r.Status != responses.ResponseStatusCompleted || len(r.Output) != 2 || r.Output[0].Type != "file_search_call" ||
		r.Output[1].Type != "message" || r.MaxToolCalls != 1 {
		t.Fatalf("want one search, then an answer: %s", r.RawJSON())
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 || len(reqs[1].Tools) != 0 {
		t.Fatalf("the model was asked %d times; want twice, the second without the tool", len(reqs))
	}
}
