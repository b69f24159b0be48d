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

// TestAddingConversationItemsTakesInclude: POST /v1/conversations/{id}/items answers the items added with what
// include asks for, as the item reads do, and refuses a value the API does not define with a 400 naming it, adding
// nothing. Before, include was ignored there: any value was taken, and a defined one not answered.
func TestAddingConversationItemsTakesInclude(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c, err := e.client.Conversations.New(ctxFor(t), conversations.ConversationNewParams{})
	if err != nil {
		t.Fatalf("create a conversation: %v", apiErr(err))
	}
	add := func(query string) (int, string) {
		return e.send(t, http.MethodPost, "/v1/conversations/"+c.ID+"/items"+query,
			`{"items":[{"type":"file_search_call","id":"fs_1","status":"completed","queries":["descale"]}]}`)
	}
	status, body := add("?include[]=bogus.value")
	if status != http.StatusBadRequest || errorParam(body) != "include[0]" {
		t.Errorf("include bogus.value: %d %s; want a 400 naming include[0]", status, body)
	}
	if status, body := e.send(t, http.MethodGet, "/v1/conversations/"+c.ID+"/items", ""); status != http.StatusOK || !strings.Contains(body, `"data":[]`) {
		t.Errorf("after a refused add, the conversation's items: %d %s; want none", status, body)
	}
	status, body = add("?include[]=file_search_call.results")
	var added struct {
		Data []struct {
			Results json.RawMessage `json:"results"`
		} `json:"data"`
	}
	_ = json.Unmarshal([]byte(body), &added)
	if status != http.StatusOK || len(added.Data) != 1 || string(added.Data[0].Results) != "[]" {
		t.Errorf("include file_search_call.results: %d %s; want the call with its results ([])", status, body)
	}
}
