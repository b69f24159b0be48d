package openaiapi_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

var searchMarker = regexp.MustCompile(`【[^】]*】`)

func TestResponsesFileSearchWithCitations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	pdf := e.upload(t, "manual.pdf", manual())
	store, err := e.client.VectorStores.New(ctx, openai.VectorStoreNewParams{FileIDs: []string{pdf}})
	if err != nil {
		t.Fatalf("create store: %v", apiErr(err))
	}
	if f, err := e.client.VectorStores.Files.PollStatus(ctx, store.ID, pdf, 20); err != nil || f.Status != "completed" {
		t.Fatalf("process the PDF: %v", apiErr(err))
	}
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		if last.Role == llm.RoleTool {
			return llmtest.Text("Descale it every three months" + searchMarker.FindString(last.Content) + ".")
		}
		return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs", Name: "file_search", Arguments: `{"queries":["how to descale the boiler"]}`})
	})
	tool := responses.ToolParamOfFileSearch([]string{store.ID})
	tool.OfFileSearch.MaxNumResults = openai.Int(2)
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("How do I descale?"),
		Tools: []responses.ToolUnionParam{tool}, Include: []responses.ResponseIncludable{"file_search_call.results"}})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if len(r.Output) != 2 || r.Output[0].Type != "file_search_call" || r.Output[1].Type != "message" {
		t.Fatalf("output: %s", r.RawJSON())
	}
	fs := r.Output[0]
	if len(fs.Queries) != 1 || len(fs.Results) == 0 || len(fs.Results) > 2 || fs.Results[0].FileID != pdf ||
		!strings.Contains(fs.Results[0].Text, "descaling") {
		t.Fatalf("file_search_call: %s", fs.RawJSON())
	}
	ann := r.Output[1].Content[0].Annotations
	if len(ann) != 1 || ann[0].Type != "file_citation" || ann[0].FileID != pdf || ann[0].Filename != "manual.pdf" {
		t.Fatalf("annotations: %s", r.Output[1].RawJSON())
	}
	// A response made with include shows the results when it is read again too.
	got, err := e.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	if err != nil || len(got.Output[0].Results) == 0 {
		t.Fatalf("get: %v: %s", apiErr(err), raw(got))
	}

	// Another account cannot search the store.
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		Tools: []responses.ToolUnionParam{responses.ToolParamOfFileSearch([]string{store.ID})}})
	wantAPIError(t, err, 404, "tools[0].vector_store_ids[0]")
}
