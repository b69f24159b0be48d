package openaiapi_test

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// pixel is the bytes of pixelPNG, a 1x1 PNG.
func pixel(t *testing.T) []byte {
	t.Helper()
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(pixelPNG, "data:image/png;base64,"))
	if err != nil {
		t.Fatal(err)
	}
	return png
}

// refusedImage is a file an image may not show, what the refusal's status is and what its message says.
type refusedImage struct {
	name, fileID string
	status       int
	says         string
}

// refusedImages uploads the files an image may not show: another account's, one that is not an image whatever
// its upload declared, one over the 20 MiB bound; and names one that is not there.
func refusedImages(t *testing.T, e *env) []refusedImage {
	t.Helper()
	png := pixel(t)
	_, otherKey := e.node.NewAccount(t, "other")
	theirs := upload(t, sdk(e.node, otherKey), "pixel.png", "image/png", png, openai.FilePurposeVision)
	text := upload(t, e.client, "notes.txt", "image/png", []byte("not an image, whatever its upload said"), openai.FilePurposeUserData)
	huge := upload(t, e.client, "huge.png", "image/png", append(png[:len(png):len(png)], make([]byte, 20<<20)...), openai.FilePurposeVision)
	return []refusedImage{
		{"another account's", theirs, 404, "No file found"},
		{"missing", "file-doesnotexist", 404, "No file found"},
		{"not an image", text, 400, "not an image"},
		{"too large", huge, 400, "larger than 20 MiB"},
	}
}

// wantUnasked fails the test if the model was asked anything.
func wantUnasked(t *testing.T, e *env) {
	t.Helper()
	if n := len(e.model.Requests()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
}

// textPart, imageFilePart and imageURLPart are a thread message's content parts.
func textPart(text string) openai.MessageContentPartParamUnion {
	return openai.MessageContentPartParamUnion{OfText: &openai.TextContentBlockParam{Text: text}}
}

func imageFilePart(id string, detail openai.ImageFileDetail) openai.MessageContentPartParamUnion {
	return openai.MessageContentPartParamUnion{OfImageFile: &openai.ImageFileContentBlockParam{
		ImageFile: openai.ImageFileParam{FileID: id, Detail: detail}}}
}

func imageURLPart(url string, detail openai.ImageURLDetail) openai.MessageContentPartParamUnion {
	return openai.MessageContentPartParamUnion{OfImageURL: &openai.ImageURLContentBlockParam{
		ImageURL: openai.ImageURLParam{URL: url, Detail: detail}}}
}

// imageThread creates a thread whose one user message has parts.
func (e *env) imageThread(t *testing.T, parts ...openai.MessageContentPartParamUnion) (*openai.Thread, error) {
	t.Helper()
	return e.client.Beta.Threads.New(ctxFor(t), openai.BetaThreadNewParams{
		Messages: []openai.BetaThreadNewParamsMessage{{Role: "user",
			Content: openai.BetaThreadNewParamsMessageContentUnion{OfArrayOfContentParts: parts}}},
	})
}

// TestRunImagesReachModel: a thread message's images reach the run's model after its text: an image_file as a
// data URL of the file's bytes (its type known by the bytes, not by the upload's declared type), an image_url as
// given, an http(s) URL or a data URL; a file deleted since is a note in the message's text, and the run still
// completes.
func TestRunImagesReachModel(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	id := upload(t, e.client, "pixel.png", "application/octet-stream", pixel(t), openai.FilePurposeVision)
	asst := e.assistant(t)
	th, err := e.imageThread(t, textPart("What is this?"), imageFilePart(id, openai.ImageFileDetailLow),
		imageURLPart(pixelPNG, openai.ImageURLDetailHigh), imageURLPart("https://example.test/b.png", ""))
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	e.model.Enqueue(llmtest.Text("A single pixel."), llmtest.Text("I cannot see the file any more."))
	e.completeRun(t, th.ID, asst.ID)
	got := e.model.Requests()[0].LastMessage()
	want := []llm.Image{{URL: pixelPNG, Detail: "low"}, {URL: pixelPNG, Detail: "high"}, {URL: "https://example.test/b.png"}}
	if got.Role != llm.RoleUser || got.Content != "What is this?" || !reflect.DeepEqual(got.Images, want) {
		t.Fatalf("the model got %+v, want the text and the images %+v", got, want)
	}

	// Deleted since: the model reads that the file's image is gone, sees the others, and the run completes.
	if _, err := e.client.Files.Delete(ctx, id); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	if _, err := e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("And now?")}}); err != nil {
		t.Fatalf("add message: %v", apiErr(err))
	}
	e.completeRun(t, th.ID, asst.ID)
	msgs := e.model.Requests()[1].Messages
	var first llm.Message
	for _, m := range msgs {
		if m.Role == llm.RoleUser {
			first = m
			break
		}
	}
	if !strings.HasPrefix(first.Content, "What is this?") || !strings.Contains(first.Content, "[image "+id+" is not shown") ||
		!reflect.DeepEqual(first.Images, want[1:]) {
		t.Fatalf("the model got %+v, want a note in place of the deleted file and the other images", first)
	}
}

// TestRunImageRefusals: an image_file must be the caller's file and an image within the bound, and an image_url an
// http(s) URL or a data URL of an image, wherever a message is given (a message, a new thread's messages, a run's
// additional_messages); each refusal is a 4xx naming the part, and the model is never asked.
func TestRunImageRefusals(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	asst := e.assistant(t)
	th := e.thread(t, "hello")

	refuse := func(name string, part openai.MessageContentPartParamUnion, status int, field, says string) {
		t.Helper()
		_, err := e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
			Content: openai.BetaThreadMessageNewParamsContentUnion{OfArrayOfContentParts: []openai.MessageContentPartParamUnion{textPart("Look."), part}}})
		if ae := wantAPIError(t, err, status, "content[1]."+field); !strings.Contains(ae.Message, says) {
			t.Errorf("%s: message %q, want it to say %q", name, ae.Message, says)
		}
		_, err = e.imageThread(t, textPart("Look."), part)
		wantAPIError(t, err, status, "messages[0].content[1]."+field)
		_, err = e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: asst.ID,
			AdditionalMessages: []openai.BetaThreadRunNewParamsAdditionalMessage{{Role: "user",
				Content: openai.BetaThreadRunNewParamsAdditionalMessageContentUnion{OfArrayOfContentParts: []openai.MessageContentPartParamUnion{textPart("Look."), part}}}}})
		wantAPIError(t, err, status, "additional_messages[0].content[1]."+field)
	}
	for _, c := range refusedImages(t, e) {
		refuse(c.name, imageFilePart(c.fileID, ""), c.status, "image_file.file_id", c.says)
	}
	for _, c := range []struct{ name, url, says string }{
		{"an ftp URL", "ftp://example.test/a.png", "data URL of an image"},
		{"a file URL", "file:///etc/passwd", "data URL of an image"},
		{"a data URL of text", "data:text/plain;base64,aGVsbG8=", "data:image/<type>;base64"},
		{"a data URL of bytes that are no image", "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("not an image")), "not an image"},
		{"a data URL that is not base64", "data:image/png;base64,*not base64*", "not base64"},
	} {
		refuse(c.name, imageURLPart(c.url, ""), 400, "image_url.url", c.says)
	}
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 1 {
		t.Fatalf("the thread holds %v (%v), want its first message only", raw(msgs), apiErr(err))
	}
	wantUnasked(t, e)
}

// TestRunCountsImages: a message's images count toward the run's prompt tokens by the fixed estimate of
// tokens.ImageTokens (85 at low detail, 765 otherwise), in the usage of a run whose model server reports none (the
// provider counts the request itself).
func TestRunCountsImages(t *testing.T) {
	e := newEnv(t)
	id := upload(t, e.client, "pixel.png", "image/png", pixel(t), openai.FilePurposeVision)
	asst := e.assistant(t)
	prompt := func(parts ...openai.MessageContentPartParamUnion) int64 {
		t.Helper()
		th, err := e.imageThread(t, parts...)
		if err != nil {
			t.Fatalf("create thread: %v", apiErr(err))
		}
		e.model.Enqueue(llmtest.Text("Seen.").WithoutUsage())
		return e.completeRun(t, th.ID, asst.ID).Usage.PromptTokens
	}
	plain := prompt(textPart("What is this?"))
	if got := prompt(textPart("What is this?"), imageURLPart(pixelPNG, openai.ImageURLDetailLow)) - plain; got != 85 {
		t.Errorf("a low-detail image by URL adds %d prompt tokens, want 85", got)
	}
	if got := prompt(textPart("What is this?"), imageFilePart(id, openai.ImageFileDetailHigh)) - plain; got != 765 {
		t.Errorf("a high-detail image file adds %d prompt tokens, want 765", got)
	}
}

// TestRunImagesReadOncePerRun: the image files of a run's thread are read once for all the turns the worker takes
// in one go, not again for the turn that follows a tool's output: a file deleted while the model chose a tool
// is still shown on the next turn, as it was read before.
func TestRunImagesReadOncePerRun(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	id := upload(t, e.client, "pixel.png", "image/png", pixel(t), openai.FilePurposeVision)
	asst := e.assistant(t, openai.AssistantToolUnionParam{OfFileSearch: &openai.FileSearchToolParam{}})
	th, err := e.imageThread(t, textPart("What is this?"), imageFilePart(id, openai.ImageFileDetailLow))
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	asked := 0
	e.model.HandleFunc(func(llmtest.Request) llmtest.Reply {
		if asked++; asked > 1 {
			return llmtest.Text("A single pixel.")
		}
		if _, err := e.client.Files.Delete(ctx, id); err != nil {
			t.Errorf("delete: %v", apiErr(err))
		}
		return llmtest.ToolCalls(llm.ToolCall{ID: "call_fs_1", Name: "file_search", Arguments: `{"queries":["pixel"]}`})
	})
	e.completeRun(t, th.ID, asst.ID)
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was asked %d times, want 2 (a search, then the answer)", len(reqs))
	}
	want := []llm.Image{{URL: pixelPNG, Detail: "low"}}
	for i, req := range reqs {
		var user llm.Message
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				user = m
				break
			}
		}
		if user.Content != "What is this?" || !reflect.DeepEqual(user.Images, want) {
			t.Errorf("turn %d: the model got %+v, want the text and the image read at the run's start", i+1, user)
		}
	}
}
