package openaiapi_test

import (
	"net/http"
	"testing"

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
		tool(`,"filters":{"type":"bogus","key":"k","value":1}`):     "tools[0].filters.type",
		tool(`,"filters":"nonsense"`):                               "tools[0].filters",
		tool(`,"ranking_options":{"ranker":"no-such-ranker"}`):      "tools[0].ranking_options.ranker",
		tool(`,"ranking_options":{"score_threshold":7}`):            "tools[0].ranking_options.score_threshold",
		tool(`,"ranking_options":"nonsense"`):                       "tools[0].ranking_options",
		`{"model":"gpt-4o-mini","input":"Hi.","max_tool_calls":0}`:  "max_tool_calls",
		`{"model":"gpt-4o-mini","input":"Hi.","max_tool_calls":-5}`: "max_tool_calls",
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
		tool(`,"filters":{"type":"eq","key":"kind","value":"manual"},"ranking_options":{"ranker":"auto","score_threshold":0.1}`)); status != http.StatusOK {
		t.Errorf("defined options: %d %s", status, raw)
	}
}
