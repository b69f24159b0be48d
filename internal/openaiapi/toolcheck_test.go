package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// TestAResponsesFileSearchOptionsAndMaxToolCallsAreCheckedAtCreate: a file_search tool's filters and
// ranking_options, and max_tool_calls, are refused at create with a 400 naming the field, as a vector store search
// refuses them, and the model is not asked. Unchecked, a bad filter failed the search inside a completed response,
// wrong-typed ranking options were ignored, and max_tool_calls took any integer.
func TestAResponsesFileSearchOptionsAndMaxToolCallsAreCheckedAtCreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, store := e.manualStore(t)
	tool := func(extra string) string {
		return `{"model":"gpt-4o-mini","input":"How do I descale?","tools":[{"type":"file_search","vector_store_ids":["` +
			store.ID + `"]` + extra + `}]}`
	}
	for body, param := range map[string]string{
		tool(`,"filters":{"type":"bogus","key":"k","value":1}`):                                 "tools[0].filters.type",
		tool(`,"filters":"nonsense"`):                                                           "tools[0].filters",
		tool(`,"ranking_options":{"ranker":"no-such-ranker"}`):                                  "tools[0].ranking_options.ranker",
		tool(`,"ranking_options":{"score_threshold":7}`):                                        "tools[0].ranking_options.score_threshold",
		tool(`,"ranking_options":"nonsense"`):                                                   "tools[0].ranking_options",
		tool(`,"ranking_options":{"hybrid_search":{"embedding_weight":0.8,"text_weight":0.2}}`): "tools[0].ranking_options.hybrid_search",
		tool(`,"ranking_options":{"hybrid_search":{"embedding_weight":1}}`):                     "tools[0].ranking_options.hybrid_search.text_weight",
		`{"model":"gpt-4o-mini","input":"Hi.","max_tool_calls":0}`:                              "max_tool_calls",
		`{"model":"gpt-4o-mini","input":"Hi.","max_tool_calls":-5}`:                             "max_tool_calls",
	} {
		if status, raw := e.send(t, http.MethodPost, "/v1/responses", body); status != http.StatusBadRequest || errorParam(raw) != param {
			t.Errorf("%s: %d %s; want a 400 naming %s", body, status, raw, param)
		}
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for requests refused", n)
	}
	// Options the API defines are taken.
	e.model.Enqueue(llmtest.Text("Every three months."))
	if status, raw := e.send(t, http.MethodPost, "/v1/responses",
		tool(`,"filters":{"type":"eq","key":"kind","value":"manual"},"ranking_options":{"ranker":"auto","score_threshold":0.1,`+
			`"hybrid_search":{"embedding_weight":1,"text_weight":1}}`)); status != http.StatusOK {
		t.Errorf("defined options: %d %s", status, raw)
	}
}

// TestAResponsesFileSearchNullOptionsAreNone: a file_search tool's filters and ranking_options sent as null (as a
// client that serialises every field sends them) are no filter and no options, as the face took them at create: the
// search runs and finds the manual. Before, a null filter was parsed when the model searched, and the search failed
// inside a completed response.
func TestAResponsesFileSearchNullOptionsAreNone(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, store := e.manualStore(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if req.LastMessage().Role == llm.RoleTool {
			return llmtest.Text("Every three months.")
		}
		return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs", Name: "file_search", Arguments: `{"queries":["descale"]}`})
	})
	status, raw := e.send(t, http.MethodPost, "/v1/responses", `{"model":"gpt-4o-mini","input":"How do I descale?",`+
		`"include":["file_search_call.results"],"tools":[{"type":"file_search","vector_store_ids":["`+store.ID+`"],`+
		`"filters":null,"ranking_options":null}]}`)
	var got struct {
		Status string `json:"status"`
		Output []struct {
			Type    string            `json:"type"`
			Status  string            `json:"status"`
			Results []json.RawMessage `json:"results"`
		} `json:"output"`
	}
	if err := json.Unmarshal([]byte(raw), &got); err != nil || status != http.StatusOK {
		t.Fatalf("create: %d %s", status, raw)
	}
	if got.Status != "completed" || len(got.Output) == 0 || got.Output[0].Type != "file_search_call" ||
		got.Output[0].Status != "completed" || len(got.Output[0].Results) == 0 {
		t.Fatalf("want a completed search that found the manual: %s", raw)
	}
}
