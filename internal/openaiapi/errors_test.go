package openaiapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// do sends a request with the OpenAI-Beta header the SDKs send.
func do(t *testing.T, n *platformtest.Node, key, method, path string, body any, header ...string) platformtest.Response {
	t.Helper()
	var rd *bytes.Reader
	switch b := body.(type) {
	case nil:
		rd = bytes.NewReader(nil)
	case string:
		rd = bytes.NewReader([]byte(b))
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, n.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("OpenAI-Beta", "assistants=v2")
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return platformtest.Response{Status: resp.StatusCode, Header: resp.Header, Body: buf.Bytes()}
}

func multipartBody(t *testing.T, fields map[string]string, withFile bool) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for k, v := range fields {
		_ = mw.WriteField(k, v)
	}
	if withFile {
		fw, _ := mw.CreateFormFile("file", "a.txt")
		_, _ = fw.Write([]byte("hello"))
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

// TestBadInput sends what a careless or hostile client sends: every answer is a 4xx with OpenAI's error object,
// naming the param at fault where there is one; never a 5xx.
func TestBadInput(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.model.Enqueue(llmtest.Text("Done."))
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "hello")
	other := e.thread(t, "another")
	run := e.run(t, th.ID, a.ID)
	e.waitRun(t, th.ID, run.ID)
	runs := "/v1/threads/" + th.ID + "/runs"
	noPurpose, noPurposeCT := multipartBody(t, nil, true)
	badPurpose, badPurposeCT := multipartBody(t, map[string]string{"purpose": "bogus"}, true)
	noFile, noFileCT := multipartBody(t, map[string]string{"purpose": "assistants"}, false)

	cases := []struct {
		name, method, path string
		body               any
		header             []string
		status             int
		param              string // "" = don't care; "-" = must be null
	}{
		{"no model", "POST", "/v1/assistants", `{}`, nil, 400, "model"},
		{"model of the wrong type", "POST", "/v1/assistants", `{"model": 5}`, nil, 400, "model"},
		{"temperature not a number", "POST", "/v1/assistants", `{"model":"gpt-4o","temperature":"hot"}`, nil, 400, "temperature"},
		{"temperature out of range", "POST", "/v1/assistants", `{"model":"gpt-4o","temperature":3}`, nil, 400, "temperature"},
		{"function tool without a function", "POST", "/v1/assistants", `{"model":"gpt-4o","tools":[{"type":"function"}]}`, nil, 400, "tools[0].function"},
		{"function name of the wrong type", "POST", "/v1/assistants", `{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"a"}},{"type":"function","function":{"name":7}}]}`, nil, 400, "tools[1].function.name"},
		{"a tool of no known type", "POST", "/v1/assistants", `{"model":"gpt-4o","tools":[{"type":"retrieval"}]}`, nil, 400, "tools[0].type"},
		{"file_search given twice", "POST", "/v1/assistants", `{"model":"gpt-4o","tools":[{"type":"file_search"},{"type":"file_search"}]}`, nil, 400, "tools[1].type"},
		{"file_search returning 100 results", "POST", "/v1/assistants", `{"model":"gpt-4o","tools":[{"type":"file_search","file_search":{"max_num_results":100}}]}`, nil, 400, "tools[0].file_search.max_num_results"},
		{"metadata values must be strings", "POST", "/v1/assistants", `{"model":"gpt-4o","metadata":{"k":1}}`, nil, 400, ""},
		{"too much metadata", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","metadata":{%s}}`, manyPairs(17)), nil, 400, "metadata"},
		{"body is not JSON", "POST", "/v1/assistants", `model=gpt-4o`, nil, 400, "-"},
		{"body is a JSON array", "POST", "/v1/assistants", `[1,2]`, nil, 400, "-"},
		{"provider not configured", "POST", "/v1/assistants", `{"model":"anthropic/claude-3"}`, nil, 400, "model"},
		{"unknown assistant", "GET", "/v1/assistants/asst_nope", nil, nil, 404, "-"},
		{"limit too small", "GET", "/v1/assistants?limit=0", nil, nil, 400, "limit"},
		{"limit too large", "GET", "/v1/assistants?limit=101", nil, nil, 400, "limit"},
		{"limit not a number", "GET", "/v1/assistants?limit=ten", nil, nil, 400, "limit"},
		{"order unknown", "GET", "/v1/assistants?order=sideways", nil, nil, 400, "order"},
		{"message without a role", "POST", "/v1/threads", `{"messages":[{"content":"x"}]}`, nil, 400, "messages[0].role"},
		{"message without content", "POST", "/v1/threads", `{"messages":[{"role":"user"}]}`, nil, 400, "messages[0].content"},
		{"message content part unknown", "POST", "/v1/threads", `{"messages":[{"role":"user","content":[{"type":"audio"}]}]}`, nil, 400, "messages[0].content[0].type"},
		{"message role system", "POST", "/v1/threads/" + th.ID + "/messages", `{"role":"system","content":"x"}`, nil, 400, "role"},
		{"run without an assistant", "POST", runs, `{}`, nil, 400, "assistant_id"},
		{"run of an unknown assistant", "POST", runs, `{"assistant_id":"asst_nope"}`, nil, 404, "-"},
		{"run on an unknown thread", "POST", "/v1/threads/thread_nope/runs", fmt.Sprintf(`{"assistant_id":%q}`, a.ID), nil, 404, "-"},
		{"run looked up under another thread", "GET", "/v1/threads/" + other.ID + "/runs/" + run.ID, nil, nil, 404, "-"},
		{"unknown run", "GET", runs + "/run_nope", nil, nil, 404, "-"},
		{"submit to a run not waiting", "POST", runs + "/" + run.ID + "/submit_tool_outputs", `{"tool_outputs":[{"tool_call_id":"call_x","output":"1"}]}`, nil, 400, ""},
		{"submit without outputs", "POST", runs + "/" + run.ID + "/submit_tool_outputs", `{}`, nil, 400, "tool_outputs"},
		{"cancel a completed run", "POST", runs + "/" + run.ID + "/cancel", nil, nil, 400, ""},
		{"last_messages without a count", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"truncation_strategy":{"type":"last_messages"}}`, a.ID), nil, 400, "truncation_strategy.last_messages"},
		{"truncation type unknown", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"truncation_strategy":{"type":"middle"}}`, a.ID), nil, 400, "truncation_strategy.type"},
		{"tool_choice names no tool", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"tool_choice":{"type":"function","function":{"name":"nope"}}}`, a.ID), nil, 400, "tool_choice.function.name"},
		{"tool_choice unknown", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"tool_choice":"sometimes"}`, a.ID), nil, 400, "tool_choice"},
		{"max_completion_tokens not a number", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"max_completion_tokens":"many"}`, a.ID), nil, 400, "max_completion_tokens"},
		{"response_format unknown", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"response_format":{"type":"yaml"}}`, a.ID), nil, 400, "response_format.type"},
		{"additional message bad", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"additional_messages":[{"role":"user","content":7}]}`, a.ID), nil, 400, "additional_messages[0].content"},
		{"unknown step", "GET", runs + "/" + run.ID + "/steps/step_nope", nil, nil, 404, "-"},
		{"unknown message", "DELETE", "/v1/threads/" + th.ID + "/messages/msg_nope", nil, nil, 404, "-"},
		// An ID that is not one of this server's is refused by name, as OpenAI does ("Invalid 'thread_id'").
		{"ids that are not ids", "GET", "/v1/threads/a.b.c", nil, nil, 400, "thread_id"},
		{"wildcard ids", "GET", "/v1/threads/" + th.ID + "/messages/*", nil, nil, 400, "message_id"},
		{"an id of another kind", "GET", "/v1/assistants/" + th.ID, nil, nil, 400, "assistant_id"},
		{"modify a wildcard assistant", "POST", "/v1/assistants/*", `{"name":"x"}`, nil, 400, "assistant_id"},
		{"delete a wildcard assistant", "DELETE", "/v1/assistants/*", nil, nil, 400, "assistant_id"},
		{"an assistant id of 4000 characters", "GET", "/v1/assistants/asst_" + strings.Repeat("A", 4000), nil, nil, 400, "assistant_id"},
		{"a run of a wildcard assistant", "POST", runs, `{"assistant_id":"asst_*"}`, nil, 400, "assistant_id"},
		// Limits (issue 10, item 3): each a 400 naming the field, whose message does not repeat the value.
		{"a model name of 100 kB", "POST", "/v1/assistants", fmt.Sprintf(`{"model":%q}`, strings.Repeat("m", 100<<10)), nil, 400, "model"},
		{"instructions of 5 MB", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","instructions":%q}`, strings.Repeat("i", 5<<20)), nil, 400, "instructions"},
		{"a tool description of 100 kB", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","description":%q}}]}`, strings.Repeat("d", 100<<10)), nil, 400, "tools[0].function.description"},
		{"tool parameters of 100 kB", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","tools":[{"type":"function","function":{"name":"f","parameters":{"description":%q}}}]}`, strings.Repeat("p", 100<<10)), nil, 400, "tools[0].function.parameters"},
		{"a metadata key of 100 kB", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","metadata":{%q:"v"}}`, strings.Repeat("k", 100<<10)), nil, 400, "metadata"},
		{"reasoning effort unknown", "POST", "/v1/assistants", `{"model":"gpt-4o","reasoning_effort":"extreme"}`, nil, 400, "reasoning_effort"},
		{"message content of 5 MB", "POST", "/v1/threads/" + th.ID + "/messages", fmt.Sprintf(`{"role":"user","content":%q}`, strings.Repeat("c", 5<<20)), nil, 400, "content"},
		{"an image by a file URL", "POST", "/v1/threads/" + th.ID + "/messages", `{"role":"user","content":[{"type":"image_url","image_url":{"url":"file:///etc/passwd"}}]}`, nil, 400, "content[0].image_url.url"},
		{"an image by a URL without a host", "POST", "/v1/threads", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"http:///x.png"}}]}]}`, nil, 400, "messages[0].content[0].image_url.url"},
		{"an image file that is not a file ID", "POST", "/v1/threads/" + th.ID + "/messages", `{"role":"user","content":[{"type":"image_file","image_file":{"file_id":"*"}}]}`, nil, 400, "content[0].image_file.file_id"},
		{"additional instructions of 5 MB", "POST", runs, fmt.Sprintf(`{"assistant_id":%q,"additional_instructions":%q}`, a.ID, strings.Repeat("i", 5<<20)), nil, 400, "additional_instructions"},
		{"a tool call id of 100 kB", "POST", runs + "/" + run.ID + "/submit_tool_outputs", fmt.Sprintf(`{"tool_outputs":[{"tool_call_id":%q,"output":"1"}]}`, strings.Repeat("c", 100<<10)), nil, 400, "tool_outputs[0].tool_call_id"},
		{"a tool output of 5 MB", "POST", runs + "/" + run.ID + "/submit_tool_outputs", fmt.Sprintf(`{"tool_outputs":[{"tool_call_id":"call_1","output":%q}]}`, strings.Repeat("o", 5<<20)), nil, 400, "tool_outputs[0].output"},
		// Within every limit in characters, but four bytes each: the event would not fit in the log.
		{"an event too large for the log", "POST", "/v1/assistants", fmt.Sprintf(`{"model":"gpt-4o","instructions":%q,"tools":%s}`, strings.Repeat("💥", 256_000), bigTools(16)), nil, 413, "-"},
		{"unknown file", "GET", "/v1/files/file-nope", nil, nil, 404, "id"},
		{"an attachment of no file of the caller's", "POST", "/v1/threads/" + other.ID + "/messages", `{"role":"user","content":"x","attachments":[{"file_id":"file-nope","tools":[{"type":"file_search"}]}]}`, nil, 404, "attachments[0].file_id"},
		{"an attachment for a tool that takes none", "POST", "/v1/threads/" + other.ID + "/messages", `{"role":"user","content":"x","attachments":[{"file_id":"file-1","tools":[{"type":"retrieval"}]}]}`, nil, 400, "attachments[0].tools[0].type"},
		{"an attachment whose file ID is no ID", "POST", "/v1/threads", `{"messages":[{"role":"user","content":"x","attachments":[{"file_id":"*","tools":[]}]}]}`, nil, 400, "messages[0].attachments[0].file_id"},
		{"file upload as JSON", "POST", "/v1/files", `{"purpose":"assistants"}`, nil, 400, "-"},
		{"file upload without purpose", "POST", "/v1/files", noPurpose, []string{"Content-Type", noPurposeCT}, 400, "purpose"},
		{"file upload with a bogus purpose", "POST", "/v1/files", badPurpose, []string{"Content-Type", badPurposeCT}, 400, "purpose"},
		{"file upload without a file", "POST", "/v1/files", noFile, []string{"Content-Type", noFileCT}, 400, "file"},
		{"unknown vector store", "GET", "/v1/vector_stores/vs_nope", nil, nil, 404, "vector_store_id"},
		{"vector store file without file_id", "POST", "/v1/vector_stores/vs_nope/files", `{}`, nil, 400, "file_id"},
		{"static chunking without its sizes", "POST", "/v1/vector_stores", `{"chunking_strategy":{"type":"static"}}`, nil, 400, "chunking_strategy.static"},
		{"chunks overlapping by more than half", "POST", "/v1/vector_stores", `{"chunking_strategy":{"type":"static","static":{"max_chunk_size_tokens":100,"chunk_overlap_tokens":80}}}`, nil, 400, ""},
		{"a file ID that is no file ID", "POST", "/v1/vector_stores", `{"file_ids":["*"]}`, nil, 400, "file_ids[0]"},
		{"an unknown file in a store", "POST", "/v1/vector_stores", `{"file_ids":["file-nope"]}`, nil, 404, ""},
		{"an expiry of no days", "POST", "/v1/vector_stores", `{"expires_after":{"anchor":"last_active_at","days":0}}`, nil, 400, ""},
		{"a search without query", "POST", "/v1/vector_stores/vs_nope/search", `{}`, nil, 400, "query"},
		{"a search with a query of the wrong type", "POST", "/v1/vector_stores/vs_nope/search", `{"query":5}`, nil, 400, "query"},
		{"a search filter of an unknown type", "POST", "/v1/vector_stores/vs_nope/search", `{"query":"x","filters":{"type":"like","key":"a","value":1}}`, nil, 400, ""},
		{"a search threshold above 1", "POST", "/v1/vector_stores/vs_nope/search", `{"query":"x","ranking_options":{"score_threshold":2}}`, nil, 400, "ranking_options.score_threshold"},
		{"wrong method", "PUT", "/v1/assistants", `{}`, nil, 405, "-"},
		{"a method vector stores lack", "PATCH", "/v1/vector_stores", `{}`, nil, 405, "-"},
		{"a method vector store files lack", "PUT", "/v1/vector_stores/vs_1/files/file-1", `{}`, nil, 405, "-"},
		{"a path with a trailing slash", "GET", "/v1/assistants/", nil, nil, 404, "-"},
		{"unknown route", "GET", "/v1/nope", nil, nil, 404, "-"},
	}
	for _, c := range cases {
		resp := do(t, e.node, e.key, c.method, c.path, c.body, c.header...)
		if resp.Status != c.status {
			t.Errorf("%s: %s %.80s: want %d, got %d: %.300s", c.name, c.method, c.path, c.status, resp.Status, resp.Body)
			continue
		}
		body := checkErrorBody(t, resp.Status, resp.Body)
		if len(resp.Body) > 2000 {
			t.Errorf("%s: an error of %d bytes (it repeats the input?): %.300s", c.name, len(resp.Body), resp.Body)
		}
		switch c.param {
		case "":
		case "-":
			if string(body.Error.Param) != "null" {
				t.Errorf("%s: want param null, got %s", c.name, body.Error.Param)
			}
		default:
			if string(body.Error.Param) != `"`+c.param+`"` {
				t.Errorf("%s: want param %q, got %s (%s)", c.name, c.param, body.Error.Param, *body.Error.Message)
			}
		}
	}

	// No key, and a wrong one: 401 in the same shape.
	for _, key := range []string{"", "ctr_not-a-key"} {
		resp := do(t, e.node, key, "GET", "/v1/assistants", nil)
		if resp.Status != http.StatusUnauthorized {
			t.Fatalf("key %q: want 401, got %d", key, resp.Status)
		}
		body := checkErrorBody(t, resp.Status, resp.Body)
		if string(body.Error.Code) != `"invalid_api_key"` {
			t.Fatalf("401 code: %s", resp.Body)
		}
	}

	// Fields the API does not know are ignored.
	resp := do(t, e.node, e.key, "POST", "/v1/assistants", `{"model":"gpt-4o","frobnicate":{"x":1},"name":"ok"}`)
	if resp.Status != http.StatusOK || !strings.Contains(string(resp.Body), `"name":"ok"`) {
		t.Fatalf("unknown fields: %d %s", resp.Status, resp.Body)
	}
}

// bigTools is n function tools, each with a description at its limit in characters (1024) of four bytes each.
func bigTools(n int) string {
	tools := make([]map[string]any, n)
	for i := range tools {
		tools[i] = map[string]any{"type": "function", "function": map[string]any{"name": fmt.Sprintf("f%d", i), "description": strings.Repeat("💥", 1024)}}
	}
	raw, _ := json.Marshal(tools)
	return string(raw)
}

func manyPairs(n int) string {
	pairs := make([]string, n)
	for i := range pairs {
		pairs[i] = fmt.Sprintf(`"k%d":"v"`, i)
	}
	return strings.Join(pairs, ",")
}

// TestAnotherAccountsObjects: every object of one account is "not found" to another, on every route.
func TestAnotherAccountsObjects(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("ok"))
	a := e.assistant(t)
	th := e.thread(t, "mine")
	run := e.run(t, th.ID, a.ID)
	e.waitRun(t, th.ID, run.ID)
	msgs, _ := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	steps, _ := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	f, err := e.client.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader("x"), "x.txt", "text/plain"), Purpose: "assistants"})
	if err != nil {
		t.Fatal(apiErr(err))
	}

	_, stranger := e.node.NewAccount(t, "stranger")
	thr, msg, step := "/v1/threads/"+th.ID, msgs.Data[0].ID, steps.Data[0].ID
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/assistants/" + a.ID, ""},
		{"POST", "/v1/assistants/" + a.ID, `{"name":"mine now"}`},
		{"DELETE", "/v1/assistants/" + a.ID, ""},
		{"GET", thr, ""},
		{"POST", thr, `{"metadata":{"a":"b"}}`},
		{"DELETE", thr, ""},
		{"GET", thr + "/messages", ""},
		{"POST", thr + "/messages", `{"role":"user","content":"hi"}`},
		{"GET", thr + "/messages/" + msg, ""},
		{"POST", thr + "/messages/" + msg, `{"metadata":{}}`},
		{"DELETE", thr + "/messages/" + msg, ""},
		{"GET", thr + "/runs", ""},
		{"POST", thr + "/runs", fmt.Sprintf(`{"assistant_id":%q}`, a.ID)},
		{"GET", thr + "/runs/" + run.ID, ""},
		{"POST", thr + "/runs/" + run.ID, `{"metadata":{}}`},
		{"POST", thr + "/runs/" + run.ID + "/cancel", ""},
		{"POST", thr + "/runs/" + run.ID + "/submit_tool_outputs", `{"tool_outputs":[]}`},
		{"GET", thr + "/runs/" + run.ID + "/steps", ""},
		{"GET", thr + "/runs/" + run.ID + "/steps/" + step, ""},
		{"GET", "/v1/files/" + f.ID, ""},
		{"GET", "/v1/files/" + f.ID + "/content", ""},
		{"DELETE", "/v1/files/" + f.ID, ""},
	} {
		var body any
		if c.body != "" {
			body = c.body
		}
		resp := do(t, e.node, stranger, c.method, c.path, body)
		if resp.Status != http.StatusNotFound {
			t.Errorf("%s %s as another account: want 404, got %d: %s", c.method, c.path, resp.Status, resp.Body)
			continue
		}
		checkErrorBody(t, resp.Status, resp.Body)
	}
	// Their lists hold nothing of the owner's.
	for _, path := range []string{"/v1/assistants", "/v1/files"} {
		resp := do(t, e.node, stranger, "GET", path, nil)
		if resp.Status != http.StatusOK || strings.Contains(string(resp.Body), a.ID) || strings.Contains(string(resp.Body), f.ID) {
			t.Errorf("%s as another account: %d %s", path, resp.Status, resp.Body)
		}
	}
	// And the owner still has everything.
	if _, err := e.client.Beta.Assistants.Get(ctx, a.ID); err != nil {
		t.Fatalf("owner lost the assistant: %v", apiErr(err))
	}
	if _, err := e.client.Beta.Threads.Get(ctx, th.ID); err != nil {
		t.Fatalf("owner lost the thread: %v", apiErr(err))
	}
}
