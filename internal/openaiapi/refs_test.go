package openaiapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// Every place a request body names a file, a vector store or an assistant refuses another account's, as it refuses
// an ID that names nothing: a 404 or a 400 whose param names the field. Account A owns the objects; account B names
// them.
func TestReferencesStayInTheAccount(t *testing.T) {
	t.Parallel()
	a := newEnv(t)
	_, bKey := a.node.NewAccount(t, "other")
	b := &env{node: a.node, model: a.model, client: sdk(a.node, bKey), key: bKey}
	ctx := ctxFor(t)

	aFile := a.upload(t, "secret.txt", []byte("A's secret"))
	aStore, err := a.client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("A's")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	aAsst := a.assistant(t)
	bFile := b.upload(t, "mine.txt", []byte("B's own"))
	bStore, err := b.client.VectorStores.New(ctx, openai.VectorStoreNewParams{Name: openai.String("B's")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	bAsst := b.assistant(t)
	bThread := b.thread(t, "hello")

	codeFiles := func(id string) map[string]any {
		return map[string]any{"code_interpreter": map[string]any{"file_ids": []string{bFile, id}}}
	}
	stores := func(id string) map[string]any {
		return map[string]any{"file_search": map[string]any{"vector_store_ids": []string{id}}}
	}
	attach := func(id string) map[string]any {
		return map[string]any{"role": "user", "content": "see the file",
			"attachments": []any{map[string]any{"file_id": id, "tools": []any{map[string]any{"type": "file_search"}}}}}
	}
	image := func(id string) map[string]any {
		return map[string]any{"role": "user", "content": []any{map[string]any{"type": "image_file", "image_file": map[string]any{"file_id": id}}}}
	}
	cases := []struct {
		name, method, path string
		body               func(id string) any
		id, param          string
	}{
		{"assistant code files", "POST", "/v1/assistants", func(id string) any {
			return map[string]any{"model": "gpt-4o-mini", "tool_resources": codeFiles(id)}
		}, aFile, "tool_resources.code_interpreter.file_ids[1]"},
		{"assistant stores", "POST", "/v1/assistants", func(id string) any {
			return map[string]any{"model": "gpt-4o-mini", "tool_resources": stores(id)}
		}, aStore.ID, "tool_resources.file_search.vector_store_ids[0]"},
		{"modified assistant", "POST", "/v1/assistants/" + bAsst.ID, func(id string) any {
			return map[string]any{"tool_resources": codeFiles(id)}
		}, aFile, "tool_resources.code_interpreter.file_ids[1]"},
		{"thread code files", "POST", "/v1/threads", func(id string) any {
			return map[string]any{"tool_resources": codeFiles(id)}
		}, aFile, "tool_resources.code_interpreter.file_ids[1]"},
		{"thread stores", "POST", "/v1/threads", func(id string) any {
			return map[string]any{"tool_resources": stores(id)}
		}, aStore.ID, "tool_resources.file_search.vector_store_ids[0]"},
		{"modified thread", "POST", "/v1/threads/" + bThread.ID, func(id string) any {
			return map[string]any{"tool_resources": stores(id)}
		}, aStore.ID, "tool_resources.file_search.vector_store_ids[0]"},
		{"thread-and-run resources", "POST", "/v1/threads/runs", func(id string) any {
			return map[string]any{"assistant_id": bAsst.ID, "tool_resources": codeFiles(id)}
		}, aFile, "tool_resources.code_interpreter.file_ids[1]"},
		{"thread-and-run thread resources", "POST", "/v1/threads/runs", func(id string) any {
			return map[string]any{"assistant_id": bAsst.ID, "thread": map[string]any{"tool_resources": stores(id)}}
		}, aStore.ID, "thread.tool_resources.file_search.vector_store_ids[0]"},
		{"thread-and-run assistant", "POST", "/v1/threads/runs", func(id string) any {
			return map[string]any{"assistant_id": id}
		}, aAsst.ID, ""},
		{"run assistant", "POST", "/v1/threads/" + bThread.ID + "/runs", func(id string) any {
			return map[string]any{"assistant_id": id}
		}, aAsst.ID, ""},
		{"thread attachments", "POST", "/v1/threads", func(id string) any {
			return map[string]any{"messages": []any{attach(id)}}
		}, aFile, "messages[0].attachments[0].file_id"},
		{"message attachments", "POST", "/v1/threads/" + bThread.ID + "/messages", func(id string) any { return attach(id) }, aFile,
			"attachments[0].file_id"},
		{"message image", "POST", "/v1/threads/" + bThread.ID + "/messages", func(id string) any { return image(id) }, aFile,
			"content[0].image_file.file_id"},
		{"run additional messages", "POST", "/v1/threads/" + bThread.ID + "/runs", func(id string) any {
			return map[string]any{"assistant_id": bAsst.ID, "additional_messages": []any{attach(id)}}
		}, aFile, "additional_messages[0].attachments[0].file_id"},
		{"vector store files", "POST", "/v1/vector_stores", func(id string) any {
			return map[string]any{"file_ids": []string{id}}
		}, aFile, "file_ids[0]"},
		{"vector store file", "POST", "/v1/vector_stores/" + bStore.ID + "/files", func(id string) any {
			return map[string]any{"file_id": id}
		}, aFile, "file_id"},
		{"file batch", "POST", "/v1/vector_stores/" + bStore.ID + "/file_batches", func(id string) any {
			return map[string]any{"file_ids": []string{bFile, id}}
		}, aFile, "file_ids[1]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := do(t, b.node, b.key, c.method, c.path, c.body(c.id))
			e := checkErrorBody(t, r.Status, r.Body)
			if r.Status != http.StatusNotFound && r.Status != http.StatusBadRequest {
				t.Fatalf("%s %s naming A's %s: %d %s, want 404 or 400", c.method, c.path, c.id, r.Status, r.Body)
			}
			if c.param != "" && string(e.Error.Param) != `"`+c.param+`"` {
				t.Errorf("param %s, want %q: %s", e.Error.Param, c.param, r.Body)
			}
			if !strings.Contains(*e.Error.Message, c.id) {
				t.Errorf("the message does not name %s: %s", c.id, r.Body)
			}
		})
	}
	// B's assistant lists no file of A's.
	got, err := b.client.Beta.Assistants.Get(ctx, bAsst.ID)
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if strings.Contains(got.RawJSON(), aFile) || strings.Contains(got.RawJSON(), aStore.ID) {
		t.Errorf("B's assistant names A's objects: %s", got.RawJSON())
	}
}
