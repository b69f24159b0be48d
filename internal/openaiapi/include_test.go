package openaiapi_test

import (
	"net/http"
	"testing"

	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// TestAReadsIncludeIsCheckedAsACreatesIs: a GET of a response, of its input items, of a conversation's items or of
// one of them refuses an include value the API does not define with a 400 naming it, as a create does, rather than
// answer without what was asked; the values it defines are still answered.
func TestAReadsIncludeIsCheckedAsACreatesIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("Hello."))
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Hi.")})
	if err != nil {
		t.Fatalf("create a response: %v", apiErr(err))
	}
	c, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("Hi.", responses.EasyInputMessageRoleUser)},
	})
	if err != nil {
		t.Fatalf("create a conversation: %v", apiErr(err))
	}
	items, err := e.client.Conversations.Items.List(ctx, c.ID, conversations.ItemListParams{})
	if err != nil || len(items.Data) != 1 {
		t.Fatalf("the conversation's items: %v", apiErr(err))
	}
	for _, path := range []string{
		"/v1/responses/" + r.ID,
		"/v1/responses/" + r.ID + "/input_items",
		"/v1/conversations/" + c.ID + "/items",
		"/v1/conversations/" + c.ID + "/items/" + items.Data[0].ID,
	} {
		if status, body := e.send(t, http.MethodGet, path+"?include[]=file_search_call.results", ""); status != http.StatusOK {
			t.Errorf("GET %s with a defined include: %d %s", path, status, body)
		}
		status, body := e.send(t, http.MethodGet, path+"?include[]=file_search_call.results&include[]=bogus.value", "")
		if status != http.StatusBadRequest || errorParam(body) != "include[1]" {
			t.Errorf("GET %s with include bogus.value: %d %s; want a 400 naming include[1]", path, status, body)
		}
	}
}
