package platform_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The route matrix's fixtures of the /v1 face (the OpenAI Assistants API and Files API). Runs use the model the
// node has without configuration, the offline model, so they complete without a model server.
//
// Intact reads each object through the API and also checks its aggregate's log: a write let through by a broken
// check lands in the log with the other account's name on it, where the read models (keyed by the account of each
// event) would not show it to the owner, but the owner's next run would read it.

// openAIErrorShape is the /v1 face's error shape: OpenAI's error object with all four fields, and the code
// OpenAI's SDKs read as a bad key.
func openAIErrorShape(body []byte) error {
	var e struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	want := fmt.Errorf(`want {"error":{"message":...,"type":...,"param":null,"code":"invalid_api_key"}}, got %.200s`, body)
	if err := json.Unmarshal(body, &e); err != nil || e.Error == nil {
		return want
	}
	var message, typ, code string
	for field, dst := range map[string]*string{"message": &message, "type": &typ, "code": &code} {
		if err := json.Unmarshal(e.Error[field], dst); err != nil {
			return want
		}
	}
	if _, ok := e.Error["param"]; !ok || message == "" || typ == "" || code != "invalid_api_key" {
		return want
	}
	return nil
}

// openAIModel is a model name the node runs on its offline model when no provider is configured.
const openAIModel = "gpt-4o-mini"

// v1Assistant is an assistant of the owner: another account must not read, change, delete or run it.
func v1Assistant() fixture {
	var (
		made assistantObject
		log  int
	)
	return fixture{
		Name:   "v1: assistant",
		Params: []string{"assistant_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			made = createAssistant(t, n, o)
			log = logLength(t, n, events.Ref{Type: "assistant", ID: made.ID})
			return objects{Params: map[string]string{"assistant_id": made.ID},
				Secrets: []string{made.ID, made.Name, made.Instructions, made.Metadata["note"]}}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			var a assistantObject
			r := n.Do(t, o.Key, "GET", "/v1/assistants/"+objs.Params["assistant_id"], nil)
			r.JSON(t, &a)
			if r.Status != 200 || a.Name != made.Name || a.Instructions != made.Instructions || len(a.Metadata) != 1 ||
				a.Metadata["note"] != made.Metadata["note"] {
				t.Errorf("account A's assistant after account B's requests: %d %s", r.Status, r.Body)
			}
			checkLog(t, n, o, events.Ref{Type: "assistant", ID: made.ID}, log)
			// A run reads its assistant from the log: the owner's still runs with the instructions it was given.
			var run struct {
				Instructions string `json:"instructions"`
			}
			r = n.Do(t, o.Key, "POST", "/v1/threads/runs", map[string]string{"assistant_id": made.ID})
			r.JSON(t, &run)
			if r.Status != 200 || run.Instructions != made.Instructions {
				t.Errorf("account A's run of its assistant after account B's requests: %d %s", r.Status, r.Body)
			}
		},
		Bodies: map[string]any{
			"POST /v1/assistants": map[string]string{"model": openAIModel, "name": "planted"},
			// Not the instructions: a run copies them, so that B's run of A's assistant (below) shows A's if it
			// is let through.
			"POST /v1/assistants/{assistant_id}": map[string]any{"name": "planted", "metadata": map[string]string{"planted": "yes"}},
			"POST /v1/threads/runs":              `{"assistant_id":"{assistant_id}"}`,
		},
		Probes: []probe{
			{Method: "GET", Path: "/v1/assistants?after={assistant_id}"},
			{Method: "GET", Path: "/v1/assistants?before={assistant_id}&order=asc"},
			{Method: "POST", Path: "/v1/threads/runs", Body: `{"assistant_id":"{assistant_id}","stream":true}`},
			{Method: "POST", Path: "/v1/threads/{caller.thread_id}/runs", Body: `{"assistant_id":"{assistant_id}"}`},
			{Method: "POST", Path: "/v1/threads/{caller.thread_id}/runs", Body: `{"assistant_id":"{assistant_id}","stream":true}`},
		},
	}
}

// v1Thread is a thread of the owner with a message and a completed run (and so a run step and the assistant's
// reply): another account must not read, change, delete, run or post to any of them.
func v1Thread() fixture {
	// What Make wrote, for Intact to find unchanged.
	var made struct {
		text, threadNote, runNote string
		log                       int
	}
	return fixture{
		Name:   "v1: thread, message, run, run step",
		Params: []string{"thread_id", "message_id", "run_id", "step_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			a := createAssistant(t, n, o)
			made.text, made.threadNote, made.runNote = "question-"+events.RandomToken(8), "thread-"+events.RandomToken(8), "run-"+events.RandomToken(8)
			var th struct {
				ID string `json:"id"`
			}
			r := n.Do(t, o.Key, "POST", "/v1/threads", map[string]any{
				"messages": []map[string]string{{"role": "user", "content": made.text}},
				"metadata": map[string]string{"note": made.threadNote},
			})
			r.JSON(t, &th)
			if r.Status != 200 {
				t.Fatalf("matrix fixture: create a thread: %d %s", r.Status, r.Body)
			}
			var run runObject
			r = n.Do(t, o.Key, "POST", "/v1/threads/"+th.ID+"/runs", map[string]any{
				"assistant_id": a.ID, "metadata": map[string]string{"note": made.runNote}})
			r.JSON(t, &run)
			if r.Status != 200 {
				t.Fatalf("matrix fixture: create a run: %d %s", r.Status, r.Body)
			}
			// Wait for the run to end, so that another account's requests meet it as it stays.
			if run = waitRun(t, n, o, th.ID, run.ID); run.Status != "completed" {
				t.Fatalf("matrix fixture: the run ended %s", run.Status)
			}
			msgs := listIDs(t, n, o, "/v1/threads/"+th.ID+"/messages")
			steps := listIDs(t, n, o, "/v1/threads/"+th.ID+"/runs/"+run.ID+"/steps")
			if len(msgs) != 2 || len(steps) == 0 {
				t.Fatalf("matrix fixture: want the question and the reply and a step, got messages %v, steps %v", msgs, steps)
			}
			question := msgs[len(msgs)-1] // lists are newest first
			made.log = logLength(t, n, events.Ref{Type: "thread", ID: th.ID})
			secrets := []string{th.ID, run.ID, made.text, made.threadNote, made.runNote, a.ID, a.Name, a.Instructions}
			return objects{
				Params:  map[string]string{"thread_id": th.ID, "message_id": question, "run_id": run.ID, "step_id": steps[0]},
				Secrets: append(append(secrets, msgs...), steps...),
			}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			p := objs.Params
			thread := "/v1/threads/" + p["thread_id"]
			var th struct {
				Metadata map[string]string `json:"metadata"`
			}
			r := n.Do(t, o.Key, "GET", thread, nil)
			r.JSON(t, &th)
			if r.Status != 200 || len(th.Metadata) != 1 || th.Metadata["note"] != made.threadNote {
				t.Errorf("account A's thread after account B's requests: %d %s", r.Status, r.Body)
			}
			var m struct {
				Content []struct {
					Text struct {
						Value string `json:"value"`
					} `json:"text"`
				} `json:"content"`
				Metadata map[string]string `json:"metadata"`
			}
			r = n.Do(t, o.Key, "GET", thread+"/messages/"+p["message_id"], nil)
			r.JSON(t, &m)
			if r.Status != 200 || len(m.Content) != 1 || m.Content[0].Text.Value != made.text || len(m.Metadata) != 0 {
				t.Errorf("account A's message after account B's requests: %d %s", r.Status, r.Body)
			}
			if msgs := listIDs(t, n, o, thread+"/messages"); len(msgs) != 2 {
				t.Errorf("account A's thread holds %d messages after account B's requests, want its 2", len(msgs))
			}
			var run runObject
			r = n.Do(t, o.Key, "GET", thread+"/runs/"+p["run_id"], nil)
			r.JSON(t, &run)
			if r.Status != 200 || run.Status != "completed" || len(run.Metadata) != 1 || run.Metadata["note"] != made.runNote {
				t.Errorf("account A's run after account B's requests: %d %s", r.Status, r.Body)
			}
			if runs := listIDs(t, n, o, thread+"/runs"); !slices.Equal(runs, []string{p["run_id"]}) {
				t.Errorf("account A's thread has runs %v after account B's requests, want only %s", runs, p["run_id"])
			}
			if r := n.Do(t, o.Key, "GET", thread+"/runs/"+p["run_id"]+"/steps/"+p["step_id"], nil); r.Status != 200 {
				t.Errorf("account A's run step after account B's requests: %d %s", r.Status, r.Body)
			}
			checkLog(t, n, o, events.Ref{Type: "thread", ID: p["thread_id"]}, made.log)
		},
		// B's own assistant and thread: B's run on A's thread names B's assistant, so that the thread is what
		// stops it; B's thread is where B tries A's assistant and looks for A's messages and runs.
		Caller: func(t *testing.T, n *platformtest.Node, o owner) map[string]string {
			a := createAssistant(t, n, o)
			var th struct {
				ID string `json:"id"`
			}
			r := n.Do(t, o.Key, "POST", "/v1/threads", nil)
			r.JSON(t, &th)
			if r.Status != 200 {
				t.Fatalf("matrix fixture: create the other account's thread: %d %s", r.Status, r.Body)
			}
			return map[string]string{"assistant_id": a.ID, "thread_id": th.ID}
		},
		Bodies: map[string]any{
			"POST /v1/threads/{thread_id}":                                   map[string]any{"metadata": map[string]string{"planted": "yes"}},
			"POST /v1/threads/{thread_id}/messages":                          map[string]string{"role": "user", "content": "planted"},
			"POST /v1/threads/{thread_id}/messages/{message_id}":             map[string]any{"metadata": map[string]string{"planted": "yes"}},
			"POST /v1/threads/{thread_id}/runs":                              `{"assistant_id":"{caller.assistant_id}"}`,
			"POST /v1/threads/{thread_id}/runs/{run_id}":                     map[string]any{"metadata": map[string]string{"planted": "yes"}},
			"POST /v1/threads/{thread_id}/runs/{run_id}/submit_tool_outputs": `{"tool_outputs":[{"tool_call_id":"call_planted","output":"planted"}]}`,
		},
		Probes: []probe{
			// A's objects named under B's own thread.
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/messages?run_id={run_id}"},
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/messages?after={message_id}"},
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/messages/{message_id}"},
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/runs/{run_id}"},
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/runs/{run_id}/steps"},
			{Method: "GET", Path: "/v1/threads/{caller.thread_id}/runs/{run_id}/steps/{step_id}"},
		},
	}
}

// v1File is a file the owner uploaded: another account must not read its object or its bytes, list it or
// delete it.
func v1File() fixture {
	var made struct {
		name, content string
		log           int
	}
	return fixture{
		Name:   "v1: file",
		Params: []string{"file_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			made.name, made.content = "notes-"+events.RandomToken(6)+".txt", "content-"+events.RandomToken(12)
			f := struct{ ID string }{uploadFile(t, n, o.Key, made.name, made.content)}
			made.log = logLength(t, n, events.Ref{Type: "file", ID: f.ID})
			return objects{Params: map[string]string{"file_id": f.ID}, Secrets: []string{f.ID, made.name, made.content}}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			id := objs.Params["file_id"]
			var f struct {
				Filename string `json:"filename"`
			}
			r := n.Do(t, o.Key, "GET", "/v1/files/"+id, nil)
			r.JSON(t, &f)
			if r.Status != 200 || f.Filename != made.name {
				t.Errorf("account A's file after account B's requests: %d %s", r.Status, r.Body)
			}
			if r := n.Do(t, o.Key, "GET", "/v1/files/"+id+"/content", nil); r.Status != 200 || string(r.Body) != made.content {
				t.Errorf("account A's file content after account B's requests: %d %.200s", r.Status, r.Body)
			}
			checkLog(t, n, o, events.Ref{Type: "file", ID: id}, made.log)
		},
		Probes: []probe{
			{Method: "GET", Path: "/v1/files?purpose=assistants"},
			{Method: "GET", Path: "/v1/files?after={file_id}&order=asc"},
		},
	}
}

type assistantObject struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	Instructions string            `json:"instructions"`
	Metadata     map[string]string `json:"metadata"`
}

// createAssistant makes an assistant of o whose name, instructions and note are its own.
func createAssistant(t *testing.T, n *platformtest.Node, o owner) assistantObject {
	t.Helper()
	var a assistantObject
	r := n.Do(t, o.Key, "POST", "/v1/assistants", map[string]any{
		"model": openAIModel, "name": "helper-" + events.RandomToken(6), "instructions": "instructions-" + events.RandomToken(8),
		"metadata": map[string]string{"note": "note-" + events.RandomToken(8)},
	})
	r.JSON(t, &a)
	if r.Status != 200 || a.ID == "" {
		t.Fatalf("matrix fixture: create an assistant: %d %s", r.Status, r.Body)
	}
	return a
}

type runObject struct {
	ID       string            `json:"id"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata"`
}

// waitRun polls a run until it leaves the states a run passes through.
func waitRun(t *testing.T, n *platformtest.Node, o owner, threadID, runID string) runObject {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var run runObject
		r := n.Do(t, o.Key, "GET", "/v1/threads/"+threadID+"/runs/"+runID, nil)
		r.JSON(t, &run)
		if r.Status != 200 {
			t.Fatalf("matrix fixture: poll run %s: %d %s", runID, r.Status, r.Body)
		}
		if !slices.Contains([]string{"queued", "in_progress", "cancelling"}, run.Status) {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("matrix fixture: run %s still %s after 30s", runID, run.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listIDs reads the IDs of a list's first page as o.
func listIDs(t *testing.T, n *platformtest.Node, o owner, path string) []string {
	t.Helper()
	var page struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	r := n.Do(t, o.Key, "GET", path, nil)
	r.JSON(t, &page)
	if r.Status != 200 {
		t.Fatalf("list %s: %d %s", path, r.Status, r.Body)
	}
	ids := make([]string, 0, len(page.Data))
	for _, d := range page.Data {
		ids = append(ids, d.ID)
	}
	return ids
}

// logLength is the number of events in an aggregate's log.
// uploadFile uploads a file for assistants as o, through the API, and returns its ID.
func uploadFile(t *testing.T, n *platformtest.Node, key, name, content string) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("purpose", "assistants")
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(fw, content)
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", n.URL+"/v1/files", &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("upload a file: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var f struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &f); err != nil || resp.StatusCode != 200 || f.ID == "" {
		t.Fatalf("upload a file: %d %s", resp.StatusCode, raw)
	}
	return f.ID
}

func logLength(t *testing.T, n *platformtest.Node, ref events.Ref) int {
	t.Helper()
	history, _, err := n.Store.Load(t.Context(), ref)
	if err != nil {
		t.Fatalf("load %s %s: %v", ref.Type, ref.ID, err)
	}
	return len(history)
}

// checkLog checks that an aggregate's log holds the events it had when its fixture was made, all the owner's.
func checkLog(t *testing.T, n *platformtest.Node, o owner, ref events.Ref, want int) {
	t.Helper()
	history, _, err := n.Store.Load(t.Context(), ref)
	if err != nil {
		t.Fatalf("load %s %s: %v", ref.Type, ref.ID, err)
	}
	for _, e := range history {
		if e.Account != o.AccountID {
			t.Errorf("account A's %s %s holds an event of account %s: %s %s", ref.Type, ref.ID, e.Account, e.Type, e.Data)
		}
	}
	if len(history) != want {
		t.Errorf("account A's %s %s has %d events after account B's requests, want its %d", ref.Type, ref.ID, len(history), want)
	}
}

// v1Response is the owner's response (offline model) and a conversation with an item: another account reads,
// cancels, deletes, chains from or writes to none of them.
func v1Response() fixture {
	var made struct{ respLog, convLog, contLog int }
	return fixture{
		Name:   "v1: response, conversation, item",
		Params: []string{"response_id", "conversation_id", "item_id", "container_id"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			secret := "secret-" + events.RandomToken(10)
			var conv struct{ ID string }
			r := n.Do(t, o.Key, "POST", "/v1/conversations", map[string]any{
				"items": []any{map[string]any{"role": "user", "content": secret}}, "metadata": map[string]string{"m": secret}})
			r.JSON(t, &conv)
			if r.Status != 200 {
				t.Fatalf("matrix fixture: create conversation: %d %s", r.Status, r.Body)
			}
			var items struct {
				Data []struct{ ID string } `json:"data"`
			}
			r = n.Do(t, o.Key, "GET", "/v1/conversations/"+conv.ID+"/items", nil)
			r.JSON(t, &items)
			if r.Status != 200 || len(items.Data) != 1 {
				t.Fatalf("matrix fixture: list items: %d %s", r.Status, r.Body)
			}
			var resp struct{ ID, Status string }
			r = n.Do(t, o.Key, "POST", "/v1/responses", map[string]any{"model": "offline", "input": secret})
			r.JSON(t, &resp)
			if r.Status != 200 || resp.Status != "completed" {
				t.Fatalf("matrix fixture: create response: %d %s", r.Status, r.Body)
			}
			var cont struct{ ID string }
			r = n.Do(t, o.Key, "POST", "/v1/containers", map[string]any{"name": secret})
			r.JSON(t, &cont)
			if r.Status != 200 {
				t.Fatalf("matrix fixture: create container: %d %s", r.Status, r.Body)
			}
			made.contLog = logLength(t, n, events.Ref{Type: "container", ID: cont.ID})
			made.respLog = logLength(t, n, events.Ref{Type: "response", ID: resp.ID})
			made.convLog = logLength(t, n, events.Ref{Type: "conversation", ID: conv.ID})
			return objects{Params: map[string]string{"response_id": resp.ID, "conversation_id": conv.ID, "item_id": items.Data[0].ID,
				"container_id": cont.ID}, Secrets: []string{resp.ID, conv.ID, cont.ID, secret}}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			if r := n.Do(t, o.Key, "GET", "/v1/responses/"+objs.Params["response_id"], nil); r.Status != 200 {
				t.Errorf("account A's response after account B's requests: %d %s", r.Status, r.Body)
			}
			if r := n.Do(t, o.Key, "GET", "/v1/conversations/"+objs.Params["conversation_id"]+"/items/"+objs.Params["item_id"], nil); r.Status != 200 {
				t.Errorf("account A's conversation item after account B's requests: %d %s", r.Status, r.Body)
			}
			checkLog(t, n, o, events.Ref{Type: "response", ID: objs.Params["response_id"]}, made.respLog)
			checkLog(t, n, o, events.Ref{Type: "conversation", ID: objs.Params["conversation_id"]}, made.convLog)
			checkLog(t, n, o, events.Ref{Type: "container", ID: objs.Params["container_id"]}, made.contLog)
		},
		Bodies: map[string]any{
			"POST /v1/conversations/{conversation_id}":       `{"metadata":{"k":"v"}}`,
			"POST /v1/conversations/{conversation_id}/items": `{"items":[{"role":"user","content":"x"}]}`,
		},
		Probes: []probe{
			{Method: "POST", Path: "/v1/responses", Body: `{"model":"offline","input":"x","previous_response_id":"{response_id}"}`},
			{Method: "POST", Path: "/v1/responses", Body: `{"model":"offline","input":"x","conversation":"{conversation_id}"}`},
			{Method: "POST", Path: "/v1/responses", Body: `{"model":"offline","input":"x","conversation":{"id":"{conversation_id}"}}`},
			{Method: "GET", Path: "/v1/responses/{response_id}?stream=true"},
			{Method: "GET", Path: "/v1/containers"},
			{Method: "POST", Path: "/v1/responses", Body: `{"model":"offline","input":"x","tools":[{"type":"code_interpreter","container":"{container_id}"}]}`},
		},
	}
}
