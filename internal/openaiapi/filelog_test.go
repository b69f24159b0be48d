package openaiapi_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAFileIsReadFromTheLogWhileTheFilesReadModelStandsStill: while the files read model applies nothing, a file
// uploaded meanwhile is answered as uploaded (not as a timeout a client would retry into a second upload), got by
// ID and read; deleted, it is answered deleted and then not found: past the read wait the file is folded from the
// log, not answered as the model last showed it.
func TestAFileIsReadFromTheLogWhileTheFilesReadModelStandsStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ReadWait = 200 * time.Millisecond }))
	ctx := ctxFor(t)
	kept := e.upload(t, "kept.txt", []byte("kept before"))

	release := e.holdLease(t, "projection.files_v2")
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
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ReadWait = 200 * time.Millisecond }))
	ctx := ctxFor(t)
	id := e.upload(t, "notes.txt", []byte("hello"))
	release := e.holdLease(t, "projection.files_v2")
	defer release()
	if _, err := e.node.JS.Publish(ctx, e.node.Layout.Names.EventSubject("file", id, "deleted"),
		[]byte("not an event")); err != nil {
		t.Fatalf("append an undecodable event: %v", err)
	}
	_, err := e.client.Files.Get(ctx, id)
	if ae := wantAPIError(t, err, http.StatusServiceUnavailable, ""); !strings.Contains(ae.Message, "read model is behind") {
		t.Fatalf("get: %s", ae.RawJSON())
	}
}
