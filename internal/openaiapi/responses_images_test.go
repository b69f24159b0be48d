package openaiapi_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// imageMessage is a user message of a text and an image given by file_id.
func imageMessage(text, fileID string) responses.ResponseInputItemUnionParam {
	return responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: text}},
		{OfInputImage: &responses.ResponseInputImageParam{FileID: openai.String(fileID), Detail: responses.ResponseInputImageDetailLow}},
	}, responses.EasyInputMessageRoleUser)
}

// upload uploads a file with the client and returns its ID.
func upload(t *testing.T, client openai.Client, name, contentType string, data []byte, purpose openai.FilePurpose) string {
	t.Helper()
	f, err := client.Files.New(ctxFor(t), openai.FileNewParams{File: openai.File(bytes.NewReader(data), name, contentType), Purpose: purpose})
	if err != nil {
		t.Fatalf("upload %s: %v", name, apiErr(err))
	}
	return f.ID
}

// TestResponsesImageFileReachesModel: an input_image given by the file_id of an uploaded image reaches the model as
// the image (a data URL of the file's bytes, its type known by the bytes, not by the upload's declared type), in
// the response's input and in a conversation's items; a file deleted since is a note to the model, not a failure.
func TestResponsesImageFileReachesModel(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	png := pixel(t)
	id := upload(t, e.client, "pixel.png", "application/octet-stream", png, openai.FilePurposeVision)
	wantImages := []llm.Image{{URL: pixelPNG, Detail: "low"}}

	e.model.Enqueue(llmtest.Text("A single pixel."))
	resp, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{imageMessage("What is this?", id)}}})
	if err != nil || resp.OutputText() != "A single pixel." {
		t.Fatalf("create: %v: %s", apiErr(err), raw(resp))
	}
	got := e.model.Requests()[0].LastMessage()
	if got.Content != "What is this?" || !reflect.DeepEqual(got.Images, wantImages) {
		t.Fatalf("the model got %+v, want the text and the image %+v", got, wantImages)
	}

	// user_data images are shown too, and from a conversation's items.
	id2 := upload(t, e.client, "pixel2.png", "image/png", png, openai.FilePurposeUserData)
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{imageMessage("Remember this.", id2)}})
	if err != nil {
		t.Fatalf("create conversation: %v", apiErr(err))
	}
	e.model.Enqueue(llmtest.Text("It was a pixel."), llmtest.Text("I cannot see it any more."))
	inConv := responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("What did I show you?"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}}
	if _, err := e.client.Responses.New(ctx, inConv); err != nil {
		t.Fatalf("response in conversation: %v", apiErr(err))
	}
	msgs := e.model.Requests()[1].Messages
	if len(msgs) < 2 || msgs[0].Content != "Remember this." || !reflect.DeepEqual(msgs[0].Images, wantImages) {
		t.Fatalf("the model got %+v, want the conversation's image first", msgs)
	}

	// Deleted since: the model reads that the image is gone, and the response still answers.
	if _, err := e.client.Files.Delete(ctx, id2); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	if _, err := e.client.Responses.New(ctx, inConv); err != nil {
		t.Fatalf("response after the delete: %v", apiErr(err))
	}
	first := e.model.Requests()[2].Messages[0]
	if len(first.Images) != 0 || !strings.Contains(first.Content, "[image "+id2+" is not shown") {
		t.Fatalf("the model got %+v, want a note in place of the deleted image", first)
	}
}

// TestResponsesImageFileRefusals: a file_id an input_image names must be the caller's file and an image within the
// bound; each refusal is a 4xx naming the field, and nothing is recorded nor sent to the model.
func TestResponsesImageFileRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	refused := refusedImages(t, e)
	theirs := refused[0].fileID
	for _, c := range refused {
		_, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{imageMessage("What is this?", c.fileID)}}})
		ae := wantAPIError(t, err, c.status, "input[0].content[1].file_id")
		if !strings.Contains(ae.Message, c.says) {
			t.Errorf("%s: message %q, want it to say %q", c.name, ae.Message, c.says)
		}
		_, err = e.client.Conversations.New(ctx, conversations.ConversationNewParams{
			Items: []responses.ResponseInputItemUnionParam{imageMessage("Remember this.", c.fileID)}})
		wantAPIError(t, err, c.status, "items[0].content[1].file_id")
	}
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatalf("create conversation: %v", apiErr(err))
	}
	_, err = e.client.Conversations.Items.New(ctx, conv.ID, conversations.ItemNewParams{
		Items: []responses.ResponseInputItemUnionParam{imageMessage("Remember this.", theirs)}})
	wantAPIError(t, err, 404, "items[0].content[1].file_id")
	items, err := e.client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil || len(items.Data) != 0 {
		t.Fatalf("the conversation holds %v (%v), want nothing", raw(items), apiErr(err))
	}
	wantUnasked(t, e)
}

// TestResponsesCountImages: an image counts toward a request's input tokens, by the fixed estimate of
// tokens.ImageTokens (85 at low detail, 765 otherwise), in POST /v1/responses/input_tokens and in the usage of a
// response whose model server reports none (the provider counts the request itself).
func TestResponsesCountImages(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	id := upload(t, e.client, "pixel.png", "image/png", pixel(t), openai.FilePurposeVision)
	text := responses.ResponseInputItemParamOfMessage("What is this?", responses.EasyInputMessageRoleUser)
	withURL := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: "What is this?"}},
		{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(pixelPNG), Detail: responses.ResponseInputImageDetailLow}},
	}, responses.EasyInputMessageRoleUser)
	withFile := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: "What is this?"}},
		{OfInputImage: &responses.ResponseInputImageParam{FileID: openai.String(id), Detail: responses.ResponseInputImageDetailHigh}},
	}, responses.EasyInputMessageRoleUser)

	counter := e.client.Responses.InputTokens
	count := func(item responses.ResponseInputItemUnionParam) int64 {
		t.Helper()
		n, err := counter.Count(ctx, responses.InputTokenCountParams{Model: openai.String("gpt-4o-mini"),
			Input: responses.InputTokenCountParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{item}}})
		if err != nil {
			t.Fatalf("count: %v", apiErr(err))
		}
		return n.InputTokens
	}
	plain := count(text)
	if got := count(withURL) - plain; got != 85 {
		t.Errorf("a low-detail image by URL adds %d tokens, want 85", got)
	}
	if got := count(withFile) - plain; got != 765 {
		t.Errorf("a high-detail image by file adds %d tokens, want 765", got)
	}
	_, otherKey := e.node.NewAccount(t, "other")
	theirs := sdk(e.node, otherKey).Responses.InputTokens
	_, err := theirs.Count(ctx, responses.InputTokenCountParams{Model: openai.String("gpt-4o-mini"),
		Input: responses.InputTokenCountParamsInputUnion{OfResponseInputItemArray: []responses.ResponseInputItemUnionParam{withFile}}})
	wantAPIError(t, err, 404, "input[0].content[1].file_id")

	e.model.Enqueue(llmtest.Text("A question.").WithoutUsage(), llmtest.Text("A pixel.").WithoutUsage())
	usage := func(item responses.ResponseInputItemUnionParam) int64 {
		t.Helper()
		r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item}}})
		if err != nil {
			t.Fatalf("create: %v", apiErr(err))
		}
		return r.Usage.InputTokens
	}
	if got := usage(withURL) - usage(text); got != 85 {
		t.Errorf("a low-detail image adds %d input tokens to the usage, want 85", got)
	}
}

// TestResponsesImageDetailOriginal: "original", the detail openai-node 7 and openai-go v3 offer beside low, high
// and auto, is taken: the response keeps it as sent, and a Chat Completions model server, which has no such
// value, is asked for the nearest one, "high".
func TestResponsesImageDetailOriginal(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("A single pixel."))
	item := responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
		{OfInputText: &responses.ResponseInputTextParam{Text: "What is this?"}},
		{OfInputImage: &responses.ResponseInputImageParam{ImageURL: openai.String(pixelPNG), Detail: responses.ResponseInputImageDetailOriginal}},
	}, responses.EasyInputMessageRoleUser)
	resp, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item}}})
	if err != nil || resp.OutputText() != "A single pixel." {
		t.Fatalf("create: %v: %s", apiErr(err), raw(resp))
	}
	if got, want := e.model.Requests()[0].LastMessage().Images, []llm.Image{{URL: pixelPNG, Detail: "high"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("the model was shown %+v, want %+v", got, want)
	}
	items, err := e.client.Responses.InputItems.List(ctx, resp.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) != 1 || len(items.Data[0].Content.OfInputItemContentList) != 2 {
		t.Fatalf("input items: %v: %s", apiErr(err), raw(items))
	}
	if got := items.Data[0].Content.OfInputItemContentList[1].Detail; got != "original" {
		t.Errorf("the input image's detail is %q, want it kept as sent, original", got)
	}
}
