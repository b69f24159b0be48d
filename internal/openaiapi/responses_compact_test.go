package openaiapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

func compactInput(items ...responses.ResponseInputItemUnionParam) responses.ResponseCompactParamsInputUnion {
	return responses.ResponseCompactParamsInputUnion{OfResponseInputItemArray: items}
}

func compactionParam(id, content string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemUnionParam{OfCompaction: &responses.ResponseCompactionItemParam{
		ID: openai.String(id), EncryptedContent: content}}
}

// TestResponsesCompact: openai-go's Responses.Compact of a chain summarizes it with the named model; its answer
// keeps the user's messages and adds a compaction item whose content is sealed (the summary is not in it); a
// follow-up that sends the compacted items has the model read the summary in place of the compacted turns.
func TestResponsesCompact(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	hello := responses.ResponseInputItemParamOfMessage("hello", responses.EasyInputMessageRoleUser)
	e.model.Enqueue(llmtest.Text("Noted, Ada."), llmtest.Text("SUMMARY: the user is Ada; her number is 42."),
		llmtest.Text("Your number is 42."))
	first, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: textInput("My name is Ada and my number is 42.")})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	c, err := e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
		PreviousResponseID: openai.String(first.ID)})
	if err != nil {
		t.Fatalf("compact: %v", apiErr(err))
	}
	if c.Object != "response.compaction" || !strings.HasPrefix(c.ID, "resp_") || c.CreatedAt == 0 || c.Usage.TotalTokens == 0 ||
		len(c.Output) != 2 {
		t.Fatalf("compacted: %s", c.RawJSON())
	}
	msg, item := c.Output[0].AsMessage(), c.Output[1].AsCompaction()
	if c.Output[0].Type != "message" || msg.Role != "user" || len(msg.Content) != 1 ||
		msg.Content[0].Text != "My name is Ada and my number is 42." {
		t.Fatalf("the user's message is not kept: %s", c.RawJSON())
	}
	if c.Output[1].Type != "compaction" || item.ID == "" || item.EncryptedContent == "" ||
		strings.Contains(item.EncryptedContent, "SUMMARY") {
		t.Fatalf("compaction item: %s", c.RawJSON())
	}
	reqs := e.model.Requests()
	asked := roles(reqs[1])
	if len(asked) != 2 || !strings.HasPrefix(asked[0], "system:") ||
		!strings.Contains(asked[1], "user: My name is Ada and my number is 42.") || !strings.Contains(asked[1], "assistant: Noted, Ada.") {
		t.Fatalf("the model was asked %q", asked)
	}

	next, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("My name is Ada and my number is 42.", responses.EasyInputMessageRoleUser),
			compactionParam(item.ID, item.EncryptedContent),
			responses.ResponseInputItemParamOfMessage("What is my number?", responses.EasyInputMessageRoleUser),
		}}})
	if err != nil || next.OutputText() != "Your number is 42." {
		t.Fatalf("create after compact: %v: %s", apiErr(err), raw(next))
	}
	got := roles(e.model.Requests()[2])
	if len(got) != 3 || !strings.HasPrefix(got[1], "user:Summary of the earlier conversation") ||
		!strings.HasSuffix(got[1], "SUMMARY: the user is Ada; her number is 42.") || got[2] != "user:What is my number?" {
		t.Fatalf("the model read %q", got)
	}
	items, err := e.client.Responses.InputItems.List(ctx, next.ID, responses.InputItemListParams{Order: "asc"})
	if err != nil || len(items.Data) != 3 || items.Data[1].Type != "compaction" ||
		items.Data[1].AsCompaction().EncryptedContent != item.EncryptedContent {
		t.Fatalf("input items: %v: %s", apiErr(err), raw(items))
	}

	// input_tokens counts the summary a compaction item stands for, as it would a message of that text.
	plain, err := e.client.Responses.InputTokens.Count(ctx, responses.InputTokenCountParams{Model: openai.String("gpt-4o-mini"),
		Input: responses.InputTokenCountParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{hello,
			responses.ResponseInputItemParamOfMessage("SUMMARY: the user is Ada; her number is 42.", responses.EasyInputMessageRoleUser)}}})
	if err != nil {
		t.Fatalf("input_tokens: %v", apiErr(err))
	}
	with, err := e.client.Responses.InputTokens.Count(ctx, responses.InputTokenCountParams{Model: openai.String("gpt-4o-mini"),
		Input: responses.InputTokenCountParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{
			hello, compactionParam(item.ID, item.EncryptedContent)}}})
	if err != nil || with.InputTokens != plain.InputTokens {
		t.Fatalf("input_tokens with a compaction item: %v: %s (with the summary as a message: %d)", apiErr(err), raw(with), plain.InputTokens)
	}

	// Chained on: the follow-up's compaction item is in the context the next response reads.
	e.model.Enqueue(llmtest.Text("Ada."))
	if _, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: textInput("And my name?"), PreviousResponseID: openai.String(next.ID)}); err != nil {
		t.Fatalf("chained: %v", apiErr(err))
	}
	if got := roles(e.model.Requests()[3]); len(got) < 2 || !strings.HasSuffix(got[1], "her number is 42.") {
		t.Fatalf("chained context: %q", got)
	}

	// In a conversation's items: opened when added, read by the conversation's responses.
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{compactionParam(item.ID, item.EncryptedContent)}})
	if err != nil {
		t.Fatalf("conversation: %v", apiErr(err))
	}
	e.model.Enqueue(llmtest.Text("42."))
	if _, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("My number?"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}}); err != nil {
		t.Fatalf("in the conversation: %v", apiErr(err))
	}
	if got := roles(e.model.Requests()[4]); len(got) != 2 || !strings.HasSuffix(got[0], "her number is 42.") {
		t.Fatalf("conversation context: %q", got)
	}
}

// TestResponsesCompactRefusals: a compaction item that is not this platform's for the caller (another account's,
// or garbled) is refused naming it, in a create and in a compact; a compact with nothing to compact, with no
// model, with a model that cannot summarize (the offline model), or of another account's response is refused
// naming the field; the model is not asked.
func TestResponsesCompactRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("SUMMARY: Ada."))
	c, err := e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
		Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("My name is Ada.")}})
	if err != nil || len(c.Output) != 2 {
		t.Fatalf("compact: %v: %s", apiErr(err), raw(c))
	}
	mine := c.Output[1].AsCompaction()
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)

	hello := responses.ResponseInputItemParamOfMessage("hello", responses.EasyInputMessageRoleUser)
	for name, content := range map[string]string{
		"another account's": mine.EncryptedContent,
		"garbled":           "ctc1.bm90IGEgc2VhbGVkIHN1bW1hcnk",
		"not ours at all":   "gAAAAABn-opaque-from-elsewhere",
	} {
		_, err := other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{hello, compactionParam("cmp_1", content)}}})
		ae := wantAPIError(t, err, http.StatusBadRequest, "input[1].encrypted_content")
		if !strings.Contains(ae.Message, "compaction item") {
			t.Errorf("%s: the message does not say what is wrong: %s", name, ae.RawJSON())
		}
		_, err = other.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
			Input: compactInput(compactionParam("cmp_1", content), hello)})
		wantAPIError(t, err, http.StatusBadRequest, "input[0].encrypted_content")
	}
	_, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{compactionParam("cmp_1", "")}}})
	wantAPIError(t, err, http.StatusBadRequest, "input[0].encrypted_content")
	_, err = other.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{hello, compactionParam("cmp_1", mine.EncryptedContent)}})
	wantAPIError(t, err, http.StatusBadRequest, "items[1].encrypted_content")

	_, err = e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini"})
	wantAPIError(t, err, http.StatusBadRequest, "input")
	_, err = e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini", Input: compactInput()})
	wantAPIError(t, err, http.StatusBadRequest, "input")
	_, err = e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
		Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("hi")}, Instructions: openai.String("x"),
		PreviousResponseID: openai.String("resp_nothere")})
	wantAPIError(t, err, http.StatusNotFound, "previous_response_id")
	_, err = e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
		PreviousResponseID: openai.String("not a response")})
	wantAPIError(t, err, http.StatusBadRequest, "previous_response_id")
	ae := func() *openai.Error {
		_, err := e.client.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "offline",
			Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("My name is Ada.")}})
		return wantAPIError(t, err, http.StatusBadRequest, "model")
	}()
	if !strings.Contains(ae.Message, "OPENAI_BASE_URL") {
		t.Errorf("the offline model's refusal does not say how to set a real model: %s", ae.RawJSON())
	}
	// A node with no model server: every bare model name is the offline model's.
	bare := platformtest.Start(t)
	_, bareKey := bare.NewAccount(t, "bare")
	bareClient := sdk(bare, bareKey)
	_, err = bareClient.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-4o-mini",
		Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("My name is Ada.")}})
	if ae := wantAPIError(t, err, http.StatusBadRequest, "model"); !strings.Contains(ae.Message, "offline model") {
		t.Errorf("no model server: %s", ae.RawJSON())
	}

	// Fields of the wrong type, and no model, read without the SDK.
	for body, param := range map[string]string{
		`{"input":"hi"}`:                                                "model",
		`{"model":"gpt-4o-mini","input":3}`:                             "input",
		`{"model":"gpt-4o-mini","input":"hi","instructions":[1]}`:       "instructions",
		`{"model":"gpt-4o-mini","input":[{"type":"compaction"}]}`:       "input[0].encrypted_content",
		`{"model":"gpt-4o-mini","input":"hi","previous_response_id":5}`: "previous_response_id",
		`{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-nope"}]}]}`: "input[0].content[0].file_id",
	} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.node.URL+"/v1/responses/compact", bytes.NewBufferString(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if got := checkErrorBody(t, resp.StatusCode, b); string(got.Error.Param) != `"`+param+`"` {
			t.Errorf("%s: param %s, want %q: %s", body, got.Error.Param, param, b)
		}
	}
	// Unauthenticated: as every /v1 route.
	resp, err := http.Post(e.node.URL+"/v1/responses/compact", "application/json", strings.NewReader(`{"model":"gpt-4o-mini","input":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no key: %d", resp.StatusCode)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once (the first compact)", n)
	}
}
