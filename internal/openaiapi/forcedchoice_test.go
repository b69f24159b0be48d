package openaiapi_test

import (
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// obeyingModel is a model that does what tool_choice says: a forced choice ("required", or file_search by name)
// makes it search, anything else makes it answer.
func obeyingModel(e *env) {
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		switch string(req.ToolChoice) {
		case `"required"`, `"file_search"`, `{"type":"function","function":{"name":"file_search"}}`:
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_s", Name: "file_search", Arguments: `{"queries":["descale"]}`})
		}
		return llmtest.Text("Descale it every three months.")
	})
}

// TestAForcedToolChoiceHoldsUntilTheModelHasCalled: a response whose tool_choice forces a call ("required") gets
// the call on its first turn and then an answer: once the model has called, it may answer (tool_choice "auto"), as
// OpenAI's does. Left forced, a model that obeys searched on every turn until the response ended incomplete.
func TestAForcedToolChoiceHoldsUntilTheModelHasCalled(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	_, store := e.manualStore(t)
	obeyingModel(e)

	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("How do I descale?"),
		Tools:      []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{store.ID})},
		ToolChoice: responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
	})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if r.Status != responses.ResponseStatusCompleted || len(r.Output) != 2 || r.Output[0].Type != "file_search_call" ||
		r.Output[1].Type != "message" {
		t.Fatalf("want a search then an answer: %s", r.RawJSON())
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 || string(reqs[0].ToolChoice) != `"required"` || string(reqs[1].ToolChoice) != `"auto"` {
		t.Fatalf("the model was asked %d times; want twice, forced then auto", len(reqs))
	}
}

// TestAForcedToolChoiceHoldsUntilTheModelHasCalledInARun: the same for an Assistants run.
func TestAForcedToolChoiceHoldsUntilTheModelHasCalledInARun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	_, store := e.manualStore(t)
	obeyingModel(e)
	a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools:         []openai.AssistantToolUnionParam{{OfFileSearch: &openai.FileSearchToolParam{}}},
		ToolResources: openai.BetaAssistantNewParamsToolResources{FileSearch: openai.BetaAssistantNewParamsToolResourcesFileSearch{VectorStoreIDs: []string{store.ID}}},
	})
	if err != nil {
		t.Fatalf("create assistant: %v", apiErr(err))
	}
	th := e.thread(t, "How do I descale?")
	run, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID,
		ToolChoice: openai.AssistantToolChoiceOptionUnionParam{OfAuto: openai.String("required")}})
	if err != nil {
		t.Fatalf("create run: %v", apiErr(err))
	}
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("want completed: %s", run.RawJSON())
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 || string(reqs[0].ToolChoice) != `"required"` || string(reqs[1].ToolChoice) != `"auto"` {
		t.Fatalf("the model was asked %d times; want twice, forced then auto", len(reqs))
	}
}
