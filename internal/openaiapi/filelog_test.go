package openaiapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAFileIsReadFromTheLogWhileTheFilesReadModelStandsStill: while the files read model applies nothing, a file
// uploaded meanwhile is answered as uploaded (not as a timeout a client would retry into a second upload), got by
// ID and read; deleted, it is answered deleted and then not found: past the read wait the file is folded from the
// log, not answered as the model last showed it.
func TestAFileIsReadFromTheLogWhileTheFilesReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	kept := e.upload(t, "kept.txt", []byte("kept before"))

	release := e.node.HoldLease(t, "projection.files_v2")
	defer release()
	up, err := e.client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader([]byte("hello")),
		"notes.txt", "text/plain"), Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("upload: %v", apiErr(err))
	}
	if up.Filename != "notes.txt" || up.Bytes != 5 || !strings.HasPrefix(up.ID, "file-") {
		t.Fatalf("the upload: %s", up.RawJSON())
	}
	got, err := e.client.Files.Get(ctx, up.ID)
	if err != nil || got.ID != up.ID || got.Filename != "notes.txt" {
		t.Fatalf("the file by ID: %v %s", apiErr(err), got.RawJSON())
	}
	resp, err := e.client.Files.Content(ctx, up.ID)
	if err != nil {
		t.Fatalf("the file's content: %v", apiErr(err))
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || string(body) != "hello" {
		t.Fatalf("the file's content: %q %v", body, err)
	}

	del, err := e.client.Files.Delete(ctx, kept)
	if err != nil || !del.Deleted {
		t.Fatalf("delete: %v", apiErr(err))
	}
	_, err = e.client.Files.Get(ctx, kept)
	wantAPIError(t, err, http.StatusNotFound, "")
}

// TestAFileIs503WhenNeitherTheReadModelNorTheLogAnswers: past the read wait, a file whose log cannot be read (an
// event this build cannot decode stands in its history) is a 503 saying the read model is behind, not what the
// standing model holds.
func TestAFileIs503WhenNeitherTheReadModelNorTheLogAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	id := e.upload(t, "notes.txt", []byte("hello"))
	release := e.node.HoldLease(t, "projection.files_v2")
	defer release()
	e.node.AppendUndecodable(t, "file", id, "deleted")
	_, err := e.client.Files.Get(ctx, id)
	wantBehind(t, "get", err)
}

// TestCodeInterpretersFileIsSavedWhileTheFilesReadModelStandsStill: a file the run's code writes while the files
// read model stands still is kept, and its call does not fail for the model's wait running out: the step names the
// file, and the file is got by ID (from the log) and read.
func TestCodeInterpretersFileIsSavedWhileTheFilesReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	a := e.codeAssistant(t, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
		Tools: []openai.AssistantToolUnionParam{{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}}}})
	e.model.Enqueue(codeCall("call_w", "open('/mnt/data/out.txt', 'w').write('written')"), llmtest.Text("Done."))
	th := e.thread(t, "Write a file.")

	release := e.node.HoldLease(t, "projection.files_v2")
	defer release()
	run := e.completeRun(t, th.ID, a.ID)
	if out := e.model.Requests()[1].LastMessage().Content; !strings.Contains(out, "[file written: /mnt/data/out.txt (saved as file-") {
		t.Fatalf("the model was told %q", out)
	}
	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{
		Order: openai.BetaThreadRunStepListParamsOrderAsc})
	if err != nil || len(steps.Data) != 2 {
		t.Fatalf("the run's steps: %v %s", apiErr(err), steps.RawJSON())
	}
	out := e.model.Requests()[1].LastMessage().Content
	id := out[strings.Index(out, "file-"):]
	id = id[:strings.IndexAny(id, ") ")]
	f, err := e.client.Files.Get(ctx, id)
	if err != nil || f.Filename != "out.txt" || f.Purpose != "assistants_output" {
		t.Fatalf("the file by ID: %v %s", apiErr(err), f.RawJSON())
	}
	resp, err := e.client.Files.Content(ctx, id)
	if err != nil {
		t.Fatalf("the file's content: %v", apiErr(err))
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if string(body) != "written" {
		t.Fatalf("the file's content: %q", body)
	}
}
