package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// TestInputTokensCountsTheContextAndTheTools: POST /v1/responses/input_tokens counts what a response made with the
// same request would show the model: the previous response's context or the conversation's items before the
// input, and the tools. A previous response or conversation that is not the caller's is a 404 naming the field, a
// bad tool a 400, as on create. Before, these fields were ignored: the count left them out, and any ID was taken.
func TestInputTokensCountsTheContextAndTheTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	long := strings.Repeat("The boiler is descaled every three months with a citric acid solution. ", 30)
	e.model.Enqueue(llmtest.Text("Noted."))
	prev, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput(long)})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(long, responses.EasyInputMessageRoleUser)},
	})
	if err != nil {
		t.Fatalf("create a conversation: %v", apiErr(err))
	}
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	theirs, err := other.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatalf("another account's conversation: %v", apiErr(err))
	}

	count := func(extra string) (int, float64, string) {
		t.Helper()
		status, raw := e.send(t, http.MethodPost, "/v1/responses/input_tokens", `{"model":"gpt-4o-mini","input":"When?"`+extra+`}`)
		var got struct {
			InputTokens float64 `json:"input_tokens"`
		}
		_ = json.Unmarshal([]byte(raw), &got)
		return status, got.InputTokens, errorParam(raw)
	}
	_, plain, _ := count("")
	for name, extra := range map[string]string{
		"previous_response_id": `,"previous_response_id":"` + prev.ID + `"`,
		"conversation":         `,"conversation":"` + conv.ID + `"`,
	} {
		// the long message is some 400 tokens
		if status, n, _ := count(extra); status != http.StatusOK || n < plain+300 {
			t.Errorf("with %s: %d, %v tokens; want over %v (the input's alone)", name, status, n, plain+300)
		}
	}
	fn := `,"tools":[{"type":"function","name":"get_weather","description":"The weather in a city now.",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]`
	if status, n, _ := count(fn); status != http.StatusOK || n <= plain {
		t.Errorf("with a function tool: %d, %v tokens; want more than %v", status, n, plain)
	}
	for extra, param := range map[string]string{
		`,"previous_response_id":"resp_nope"`: "previous_response_id",
		`,"conversation":"conv_nope"`:         "conversation",
		`,"conversation":"` + theirs.ID + `"`: "conversation",
		`,"tools":[{"type":"nonsense"}]`:      "tools[0].type",
	} {
		status, _, got := count(extra)
		if status < 400 || status > 404 || got != param {
			t.Errorf("%s: %d naming %q; want a 4xx naming %s", extra, status, got, param)
		}
	}
}

// TestInputTokensChecksAndCountsAsACreate: input_tokens refuses what a create refuses (a model no provider here
// runs, another account's or no vector store, a tool_choice or text format the API does not define), naming the
// field, and counts what a create sends the model: a json_schema format's schema, and of the tools only those an
// allowed_tools choice lets the model see. Before, these fields were ignored: any value got a 200 and a count.
func TestInputTokensChecksAndCountsAsACreate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	_, store := e.manualStore(t)
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	theirs, err := other.VectorStores.New(ctx, openai.VectorStoreNewParams{})
	if err != nil {
		t.Fatalf("another account's vector store: %v", apiErr(err))
	}
	count := func(body string) (int, float64, string) {
		t.Helper()
		status, raw := e.send(t, http.MethodPost, "/v1/responses/input_tokens", body)
		var got struct {
			InputTokens float64 `json:"input_tokens"`
		}
		_ = json.Unmarshal([]byte(raw), &got)
		return status, got.InputTokens, errorParam(raw)
	}
	fs := func(id string) string {
		return `{"model":"gpt-4o-mini","input":"When?","tools":[{"type":"file_search","vector_store_ids":["` + id + `"]}]}`
	}
	for body, want := range map[string]struct {
		status int
		param  string
	}{
		`{"model":"anthropic/claude-3-5-haiku","input":"When?"}`: {400, "model"},
		fs("vs_nope"): {404, "tools[0].vector_store_ids[0]"},
		fs(theirs.ID): {404, "tools[0].vector_store_ids[0]"},
		`{"model":"gpt-4o-mini","input":"When?","tool_choice":"bogus"}`:              {400, "tool_choice"},
		`{"model":"gpt-4o-mini","input":"When?","text":{"format":{"type":"bogus"}}}`: {400, "text.format.type"},
	} {
		if status, _, param := count(body); status != want.status || param != want.param {
			t.Errorf("%s: %d naming %q; want a %d naming %s", body, status, param, want.status, want.param)
		}
	}
	if status, _, _ := count(fs(store.ID)); status != http.StatusOK {
		t.Errorf("with the caller's vector store: %d", status)
	}

	_, plain, _ := count(`{"model":"gpt-4o-mini","input":"When?"}`)
	schema := `{"model":"gpt-4o-mini","input":"When?","text":{"format":{"type":"json_schema","name":"answer","schema":` +
		`{"type":"object","properties":{"interval_in_months":{"type":"integer","description":"How often the boiler is descaled."}}}}}}`
	if status, n, _ := count(schema); status != http.StatusOK || n <= plain+10 {
		t.Errorf("with a json_schema format: %d, %v tokens; want over %v", status, n, plain+10)
	}
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},` +
		`{"type":"function","name":"get_time","parameters":{"type":"object","properties":{"zone":{"type":"string"}}}}]`
	_, both, _ := count(`{"model":"gpt-4o-mini","input":"When?",` + tools + `}`)
	_, one, _ := count(`{"model":"gpt-4o-mini","input":"When?",` + tools + `,"tool_choice":{"type":"allowed_tools","mode":"auto",` +
		`"tools":[{"type":"function","name":"get_time"}]}}`)
	if one <= plain || one >= both {
		t.Errorf("allowed_tools naming one of two tools: %v tokens; want between %v (none) and %v (both)", one, plain, both)
	}
}

// TestInputTokensCountsAnInputFilesText: an input_file by file_id is counted as the text the model is shown of it.
// Before, only the part's name was: the count left out the file the model reads.
func TestInputTokensCountsAnInputFilesText(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.upload(t, "notes.txt", []byte(strings.Repeat("The boiler is descaled every three months with a citric acid solution. ", 30)))
	count := func(parts string) float64 {
		t.Helper()
		status, raw := e.send(t, http.MethodPost, "/v1/responses/input_tokens",
			`{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_text","text":"When?"}`+parts+`]}]}`)
		var got struct {
			InputTokens float64 `json:"input_tokens"`
		}
		if err := json.Unmarshal([]byte(raw), &got); err != nil || status != http.StatusOK {
			t.Fatalf("count: %d %s", status, raw)
		}
		return got.InputTokens
	}
	plain := count("")
	// the file is some 400 tokens
	if n := count(`,{"type":"input_file","file_id":"` + id + `"}`); n < plain+300 {
		t.Errorf("with the file: %v tokens; want over %v", n, plain+300)
	}
}
