package openaiapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

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
