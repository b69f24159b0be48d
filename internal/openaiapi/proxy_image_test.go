package openaiapi_test

import (
	"reflect"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// TestOpenAIProxyPassesImagesOn: a chat message's image_url parts reach the model server as images beside the
// text, not dropped on the way through the proxy.
func TestOpenAIProxyPassesImagesOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	p, err := e.node.Keys.Authenticate(ctx, e.key)
	if err != nil {
		t.Fatal(err)
	}
	client := proxyClient(e.node, agentToken(t, e.node, p.AccountID))
	e.model.Enqueue(llmtest.Text("A red heart."))
	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: "gpt-4o-mini",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage([]openai.ChatCompletionContentPartUnionParam{
			openai.TextContentPart("What is this?"),
			openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: pixelPNG, Detail: "low"}),
		})}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	got := e.model.Requests()[0].Messages
	want := []llm.Message{{Role: llm.RoleUser, Content: "What is this?", Images: []llm.Image{{URL: pixelPNG, Detail: "low"}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the model server got %+v\nwant %+v", got, want)
	}
}
