package openaiapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
)

// fileQuestion is a create request whose one message asks a question of the file part given.
func fileQuestion(part string) string {
	return `{"model":"gpt-4o-mini","input":[{"role":"user","content":[{"type":"input_text","text":"What does the file say?"},` +
		part + `]}]}`
}

// TestAnInputFileIsShownToTheModel: an input_file by file_id puts the file's text (a text file's, a PDF's) into the
// message the model reads, named; a file whose text cannot be read is a note in its place, so that the model can say
// it did not read it rather than answer as if it had. Before, the part was taken and the model never saw the file.
func TestAnInputFileIsShownToTheModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	secret := e.upload(t, "secret.txt", []byte("The launch code is PINEAPPLE-42."))
	pdf := e.upload(t, "manual.pdf", manual())
	blob := e.upload(t, "blob.bin", []byte{0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7, 8, 9, 0})
	for _, c := range []struct{ id, want string }{
		{secret, "[file secret.txt (" + secret + ")]\nThe launch code is PINEAPPLE-42."},
		{pdf, "Every three months run the descaling solution"},
		{blob, "[file blob.bin is not shown:"},
	} {
		e.model.Enqueue(llmtest.Text("Noted."))
		status, raw := e.send(t, http.MethodPost, "/v1/responses", fileQuestion(`{"type":"input_file","file_id":"`+c.id+`","filename":"`+
			map[string]string{secret: "secret.txt", pdf: "manual.pdf", blob: "blob.bin"}[c.id]+`"}`))
		if status != http.StatusOK {
			t.Fatalf("create with file %s: %d %s", c.id, status, raw)
		}
		reqs := e.model.Requests()
		got := reqs[len(reqs)-1].LastMessage().Content
		if !strings.HasPrefix(got, "What does the file say?") || !strings.Contains(got, c.want) {
			t.Errorf("the model read, for file %s:\n%s\nwant it to hold %q", c.id, got, c.want)
		}
	}
}

// TestAnInputFileByURLOrInlineIsRefused: an input_file by file_url or file_data is refused with a 400 naming the
// field and saying to upload the file, not taken and then never shown to the model.
func TestAnInputFileByURLOrInlineIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for part, param := range map[string]string{
		`{"type":"input_file","file_url":"https://example.com/a.pdf"}`:                       "input[0].content[1].file_url",
		`{"type":"input_file","filename":"a.txt","file_data":"data:text/plain;base64,aGk="}`: "input[0].content[1].file_data",
		`{"type":"input_file","filename":"a.txt"}`:                                           "input[0].content[1].file_id",
	} {
		if status, raw := e.send(t, http.MethodPost, "/v1/responses", fileQuestion(part)); status != http.StatusBadRequest ||
			errorParam(raw) != param {
			t.Errorf("%s: %d %s; want a 400 naming %s", part, status, raw, param)
		}
	}
	if n := len(e.model.Requests()); n != 0 {
		t.Errorf("the model was asked %d times for requests refused", n)
	}
}
