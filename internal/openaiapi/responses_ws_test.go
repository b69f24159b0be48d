package openaiapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// wsRun is what ws.mjs saw.
type wsRun struct {
	Two []struct {
		ID, Status, Text, Previous string
		Types                      []string
	} `json:"two"`
	Tool struct {
		Call struct {
			Name, Arguments string
			CallID          string `json:"call_id"`
			Types           []string
		} `json:"call"`
		Text  string   `json:"text"`
		Types []string `json:"types"`
	} `json:"tool"`
	Lane struct {
		Text      string `json:"text"`
		StreamIDs []any  `json:"streamIDs"`
	} `json:"lane"`
	BadField, BadJSON, BadType, NotFound wsFailure
	After                                struct{ Text, Status string }
	SocketErrors                         []string `json:"socketErrors"`
	AgentRun                             string   `json:"agentRun"`
	AgentStreamed                        struct{ Final, Text string }
	AgentSockets                         []string `json:"agentSockets"`
	AgentHTTP                            []string `json:"agentHTTP"`
}

type wsFailure struct {
	Unexpected string `json:"unexpected"`
	Message    string `json:"message"`
	Status     int    `json:"status"`
	Type       string `json:"type"`
	Param      string `json:"param"`
	Detail     string `json:"detail"`
}

// TestResponsesWebSocketWithNpmSDKs: openai 7.57.0's ResponsesWS and its lane helper over one socket: two
// responses, the second following the first; a function call and its output; a request on a lane of its own (its
// events carry its stream_id); requests the node refuses (a bad field, bad JSON, an unknown type, a previous
// response not found), each an error event naming the problem, with the socket serving the next request. Then the
// Agents SDK 0.20.0 with setOpenAIResponsesTransport('websocket'): a run with a function tool and a streamed run.
func TestResponsesWebSocketWithNpmSDKs(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		last := req.LastMessage()
		all := ""
		for _, m := range req.Messages {
			all += m.Content + "\n"
		}
		hasTool := slices.ContainsFunc(req.Tools, func(t llm.Tool) bool { return t.Name == "get_weather" })
		switch {
		case last.Role == llm.RoleTool:
			return llmtest.Text("It is " + last.Content + ".")
		case strings.Contains(last.Content, "weather") && hasTool:
			city := "Oslo"
			if strings.Contains(last.Content, "Bergen") {
				city = "Bergen"
			}
			return llmtest.ToolCalls(llm.ToolCall{ID: "call_w_" + city, Name: "get_weather", Arguments: `{"city":"` + city + `"}`})
		case strings.Contains(last.Content, "What is my name?"):
			if strings.Contains(all, "My name is Ada.") {
				return llmtest.Text("Your name is Ada.")
			}
			return llmtest.Text("I do not know your name.")
		case strings.Contains(last.Content, "My name is Ada."):
			return llmtest.Text("Hello Ada.")
		}
		return llmtest.Text("Answered: " + last.Content)
	})
	var out wsRun
	npmtest.RunJSON(t, agentsDir, "ws.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key}, &out)
	raw, _ := json.Marshal(out)
	t.Logf("ws.mjs: %s", raw)

	// The events of a text response, in the order the SSE stream has them.
	textEvents := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
		"response.output_text.delta", "response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if len(out.Two) != 2 {
		t.Fatalf("two responses on one socket: %s", raw)
	}
	first, second := out.Two[0], out.Two[1]
	if first.Status != "completed" || first.Text != "Hello Ada." || !slices.Equal(slices.Compact(first.Types), textEvents) {
		t.Errorf("first response: %+v", first)
	}
	if second.Status != "completed" || second.Text != "Your name is Ada." || second.Previous != first.ID ||
		!slices.Equal(slices.Compact(second.Types), textEvents) {
		t.Errorf("second response, following %s: %+v", first.ID, second)
	}
	call := out.Tool.Call
	if call.Name != "get_weather" || call.CallID != "call_w_Oslo" || call.Arguments != `{"city":"Oslo"}` ||
		!slices.Contains(call.Types, "response.function_call_arguments.done") || call.Types[len(call.Types)-1] != "response.completed" {
		t.Errorf("function call: %+v", call)
	}
	if out.Tool.Text != "It is sunny." {
		t.Errorf("the answer to the function's output: %q (%v)", out.Tool.Text, out.Tool.Types)
	}
	if out.Lane.Text != "Answered: on lane b" || len(out.Lane.StreamIDs) != 1 || out.Lane.StreamIDs[0] != "lane-b" {
		t.Errorf("a response on lane-b: %+v", out.Lane)
	}
	for name, f := range map[string]struct {
		got           wsFailure
		status        int
		param, detail string
	}{
		"a model that is a number":      {out.BadField, 400, "model", "model"},
		"bad JSON":                      {out.BadJSON, 400, "", "could not parse the JSON of your message"},
		"an unknown type":               {out.BadType, 400, "type", "response.bogus"},
		"a previous response not found": {out.NotFound, 404, "previous_response_id", "resp_01ARZ3NDEKTSV4RRFFQ69G5FAV"},
	} {
		if f.got.Unexpected != "" || f.got.Status != f.status || f.got.Param != f.param || f.got.Type != "invalid_request_error" ||
			!strings.Contains(f.got.Detail, f.detail) {
			t.Errorf("%s: error event %+v, want status %d naming %q", name, f.got, f.status, f.param)
		}
	}
	if out.After.Text != "Answered: still there?" || out.After.Status != "completed" {
		t.Errorf("a request after the refused ones: %+v", out.After)
	}
	// The runs went over sockets to the node, none over HTTP.
	wsURL := "ws" + strings.TrimPrefix(e.node.URL, "http") + "/v1/responses"
	if len(out.AgentSockets) == 0 || len(out.AgentHTTP) != 0 || slices.ContainsFunc(out.AgentSockets, func(u string) bool { return u != wsURL }) {
		t.Errorf("the Agents SDK opened sockets to %v (want %s) and made HTTP requests %v", out.AgentSockets, wsURL, out.AgentHTTP)
	}
	if out.AgentRun != "It is sunny in Oslo." {
		t.Errorf("Agents SDK run over the websocket transport: %q", out.AgentRun)
	}
	if out.AgentStreamed.Final != "It is sunny in Bergen." || out.AgentStreamed.Text != "It is sunny in Bergen." {
		t.Errorf("Agents SDK streamed run over the websocket transport: %+v", out.AgentStreamed)
	}
}

// wsDial opens a Responses socket on base (a node's URL) with key.
func wsDial(t *testing.T, ctx context.Context, base, key string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/v1/responses",
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	c.SetReadLimit(-1)
	return c
}

// wsExchange sends msg and reads the events of its answer, up to its terminal event.
func wsExchange(t *testing.T, ctx context.Context, c *websocket.Conn, typ websocket.MessageType, msg string) []map[string]any {
	t.Helper()
	if err := c.Write(ctx, typ, []byte(msg)); err != nil {
		t.Fatalf("write %.80s: %v", msg, err)
	}
	var evs []map[string]any
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("after %.80s, read: %v (events so far %v)", msg, err, evs)
		}
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("event %s: %v", raw, err)
		}
		evs = append(evs, ev)
		switch ev["type"] {
		case "response.completed", "response.failed", "response.incomplete", "error":
			return evs
		}
	}
}

// wsNext reads a socket's events until one of the types comes, and returns it; the events before are passed over.
func wsNext(t *testing.T, ctx context.Context, c *websocket.Conn, after string, types ...string) map[string]any {
	t.Helper()
	for {
		_, raw, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("%s, read: %v", after, err)
		}
		var ev map[string]any
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Fatalf("%s, event %s: %v", after, raw, err)
		}
		if typ, _ := ev["type"].(string); slices.Contains(types, typ) {
			return ev
		}
	}
}

// wsRefusal checks that evs are one error event with the status and param a POST would have had.
func wsRefusal(t *testing.T, name string, evs []map[string]any, status int, param, detail string) {
	t.Helper()
	if len(evs) != 1 || evs[0]["type"] != "error" {
		t.Errorf("%s: events %v, want one error event", name, evs)
		return
	}
	e, _ := evs[0]["error"].(map[string]any)
	var gotParam string
	if p, ok := e["param"].(string); ok {
		gotParam = p
	}
	msg, _ := e["message"].(string)
	if evs[0]["status"] != float64(status) || gotParam != param || e["type"] != "invalid_request_error" || !strings.Contains(msg, detail) {
		t.Errorf("%s: error event %v, want status %d naming %q (%q)", name, evs[0], status, param, detail)
	}
}

// TestResponsesWebSocketRefusals: an upgrade without a key or with a wrong one is answered 401, never upgraded; a
// GET that is not an upgrade is 405. On a socket, what cannot be served gets one error event naming the problem,
// and the socket serves the next request: another account's response as previous_response_id (not found, as over
// HTTP), a binary message, background, generate false, a bad stream_id, no type; a response.steer is refused with
// response.steer.failed. A response that fails ends with response.failed alone (its
// clients take an error event as the end too); one deleted while streamed ends with an error event saying so;
// stream false is answered with the stream all the same. A message
// larger than a POST's body closes the socket with 1009.
func TestResponsesWebSocketRefusals(t *testing.T) {
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		switch req.LastMessage().Content {
		case "fail":
			return llmtest.Error(http.StatusBadRequest, "This model cannot answer that.")
		case "hang":
			return llmtest.Text("never finished").HangAfter(1)
		}
		return llmtest.Text("Answered: " + req.LastMessage().Content)
	})
	ctx := ctxFor(t)
	url := "ws" + strings.TrimPrefix(e.node.URL, "http") + "/v1/responses"
	for name, header := range map[string]http.Header{"no key": nil, "a wrong key": {"Authorization": {"Bearer sk-not-a-key"}}} {
		c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header})
		if err == nil {
			c.CloseNow()
			t.Errorf("%s: upgraded", name)
			continue
		}
		if resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: %v, %+v", name, err, resp)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		if e := checkErrorBody(t, resp.StatusCode, body); string(e.Error.Code) != `"invalid_api_key"` {
			t.Errorf("%s: %s", name, body)
		}
	}
	if resp := do(t, e.node, e.key, http.MethodGet, "/v1/responses", nil); resp.Status != http.StatusMethodNotAllowed {
		t.Errorf("GET /v1/responses without an upgrade: %d %s", resp.Status, resp.Body)
	}

	theirs, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("mine")})
	if err != nil {
		t.Fatal(err)
	}
	_, other := e.node.NewAccount(t, "other")
	c := wsDial(t, ctx, e.node.URL, other)
	wsRefusal(t, "another account's previous response", wsExchange(t, ctx, c, websocket.MessageText,
		`{"type":"response.create","model":"gpt-4o-mini","input":"x","previous_response_id":"`+theirs.ID+`"}`), 404, "previous_response_id", theirs.ID)
	wsRefusal(t, "a binary message", wsExchange(t, ctx, c, websocket.MessageBinary, `{"type":"response.create"}`), 400, "", "text message")
	wsRefusal(t, "background", wsExchange(t, ctx, c, websocket.MessageText,
		`{"type":"response.create","model":"gpt-4o-mini","input":"x","background":true}`), 400, "background", "not supported")
	wsRefusal(t, "a bad stream_id", wsExchange(t, ctx, c, websocket.MessageText,
		`{"type":"response.create","model":"gpt-4o-mini","input":"x","stream_id":"a b"}`), 400, "stream_id", "a b")
	wsRefusal(t, "generate false", wsExchange(t, ctx, c, websocket.MessageText,
		`{"type":"response.create","model":"gpt-4o-mini","input":"x","generate":false}`), 400, "generate", "not supported")
	wsRefusal(t, "no type", wsExchange(t, ctx, c, websocket.MessageText, `{"model":"gpt-4o-mini","input":"x"}`), 400, "type", "type")

	// Steering is refused as openai-node types the refusal (not an error event, which would end a response in
	// progress), the input given back.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.steer","previous_response_id":"`+theirs.ID+`","input":"and more"}`)); err != nil {
		t.Fatal(err)
	}
	var steer struct {
		Type  string
		Error struct{ Code, Type string }
		Steer struct {
			Input              string
			PreviousResponseID string `json:"previous_response_id"`
		}
	}
	if _, raw, err := c.Read(ctx); err != nil || json.Unmarshal(raw, &steer) != nil || steer.Type != "response.steer.failed" ||
		steer.Error.Code != "steering_not_supported" || steer.Steer.Input != "and more" || steer.Steer.PreviousResponseID != theirs.ID {
		t.Errorf("response.steer: %s, %v", raw, err)
	}

	evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"fail","stream_id":"s-1"}`)
	var types []string
	for _, ev := range evs {
		types = append(types, ev["type"].(string))
		if ev["stream_id"] != "s-1" {
			t.Errorf("event %v without the request's stream_id", ev)
		}
	}
	if types[0] != "response.created" || types[len(types)-1] != "response.failed" || slices.Contains(types, "error") {
		t.Errorf("a failed response's events: %v", types)
	}
	if r, _ := evs[len(evs)-1]["response"].(map[string]any); r["status"] != "failed" || !strings.Contains(fmt.Sprint(r["error"]), "This model cannot answer that.") {
		t.Errorf("response.failed: %v", evs[len(evs)-1])
	}

	// A response deleted while it is streamed ends with an error event saying so, not with silence.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"gpt-4o-mini","input":"hang"}`)); err != nil {
		t.Fatal(err)
	}
	var created struct {
		Type     string
		Response struct{ ID string }
	}
	if _, raw, err := c.Read(ctx); err != nil || json.Unmarshal(raw, &created) != nil || created.Type != "response.created" {
		t.Fatalf("first event of a response: %s, %v", raw, err)
	}
	if resp := do(t, e.node, other, http.MethodDelete, "/v1/responses/"+created.Response.ID, nil); resp.Status != http.StatusOK {
		t.Fatalf("delete %s: %d %s", created.Response.ID, resp.Status, resp.Body)
	}
	end := wsNext(t, ctx, c, "after the delete", "error", "response.completed", "response.failed", "response.incomplete")
	if detail, _ := end["error"].(map[string]any); end["type"] != "error" || detail["code"] != "response_deleted" ||
		!strings.Contains(fmt.Sprint(detail["message"]), created.Response.ID) {
		t.Errorf("the end of a deleted response: %v", end)
	}

	evs = wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"still here","stream":false}`)
	last := evs[len(evs)-1]
	if r, _ := last["response"].(map[string]any); last["type"] != "response.completed" || r["status"] != "completed" || evs[0]["type"] != "response.created" ||
		!strings.Contains(fmt.Sprint(r["output"]), "Answered: still here") {
		t.Errorf("a request after the refusals: %v", evs)
	}
	for _, ev := range evs {
		if _, ok := ev["stream_id"]; ok {
			t.Errorf("event %v has a stream_id the request did not give", ev)
		}
	}

	big := `{"type":"response.create","model":"gpt-4o-mini","input":"` + strings.Repeat("x", 8<<20) + `"}`
	if err := c.Write(ctx, websocket.MessageText, []byte(big)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("after a message over the limit: %v, want a close with 1009", err)
	}
}

// TestResponsesWebSocketShutdown: a node that stops closes its sockets with 1001 (going away), once what it was
// serving has ended (the request contexts end first, as cmd/contrail's serve ends them).
func TestResponsesWebSocketShutdown(t *testing.T) {
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	base, stop := context.WithCancel(context.Background())
	defer stop()
	srv := httptest.NewUnstartedServer(e.node.Platform.Handler())
	srv.Config.BaseContext = func(net.Listener) context.Context { return base }
	srv.Start()
	defer srv.Close()
	ctx := ctxFor(t)
	c := wsDial(t, ctx, srv.URL, e.key)
	if evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"hi"}`); evs[len(evs)-1]["type"] != "response.completed" {
		t.Fatalf("events %v", evs)
	}
	stop()
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after the server's stop: %v, want a close with 1001", err)
	}
}

// TestResponsesWebSocketLanes: a socket's lanes (stream_ids) are served side by side, each in order, as openai-node's
// lane helper expects: a response on lane a that the model holds does not hold lane b's, and each event names its
// lane. A socket has at most 8 lanes: a ninth is refused with an error event naming stream_id.
func TestResponsesWebSocketLanes(t *testing.T) {
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if req.LastMessage().Content == "hang" {
			return llmtest.Text("never finished").HangAfter(1)
		}
		return llmtest.Text("Answered: " + req.LastMessage().Content)
	})
	ctx := ctxFor(t)
	c := wsDial(t, ctx, e.node.URL, e.key)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"gpt-4o-mini","input":"hang","stream_id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	var held struct {
		Type     string
		StreamID string `json:"stream_id"`
		Response struct{ ID string }
	}
	if _, raw, err := c.Read(ctx); err != nil || json.Unmarshal(raw, &held) != nil || held.Type != "response.created" || held.StreamID != "a" {
		t.Fatalf("first event on lane a: %s, %v", raw, err)
	}
	evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"quick","stream_id":"b"}`)
	var onB []string
	for _, ev := range evs {
		switch ev["stream_id"] {
		case "b":
			onB = append(onB, ev["type"].(string))
		case "a":
			if ev["type"] == "response.completed" {
				t.Fatalf("the held response completed: %v", ev)
			}
		default:
			t.Errorf("an event of no lane: %v", ev)
		}
	}
	if len(onB) == 0 || onB[0] != "response.created" || onB[len(onB)-1] != "response.completed" {
		t.Errorf("lane b while lane a is held: %v", onB)
	}
	for _, lane := range []string{"c", "d", "e", "f", "g", "h"} {
		evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"quick","stream_id":"`+lane+`"}`)
		if last := evs[len(evs)-1]; last["type"] != "response.completed" || last["stream_id"] != lane {
			t.Errorf("lane %s: %v", lane, evs)
		}
	}
	evs = wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"quick","stream_id":"i"}`)
	wsRefusal(t, "a ninth lane", evs, 400, "stream_id", "at most 8")
	if evs[0]["stream_id"] != "i" {
		t.Errorf("the refusal of lane i does not name it: %v", evs[0])
	}
	// A steer of the held response is refused in its lane, where openai-node's lane helper looks for it.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.steer","previous_response_id":"`+held.Response.ID+`","input":"more"}`)); err != nil {
		t.Fatal(err)
	}
	if ev := wsNext(t, ctx, c, "after the steer", "response.steer.failed"); ev["stream_id"] != "a" {
		t.Errorf("the steer's refusal is in lane %v, want the held response's, a: %v", ev["stream_id"], ev)
	}
	// The held response, deleted, ends on its lane.
	if resp := do(t, e.node, e.key, http.MethodDelete, "/v1/responses/"+held.Response.ID, nil); resp.Status != http.StatusOK {
		t.Fatalf("delete %s: %d %s", held.Response.ID, resp.Status, resp.Body)
	}
	if ev := wsNext(t, ctx, c, "after the delete", "error"); ev["stream_id"] != "a" {
		t.Errorf("the end of the held response: %v", ev)
	}
}

// TestResponsesWebSocketRateLimit: each response.create on a socket counts against the key's request rate as a POST
// does: past it, the request is refused with an error event (429, rate_limit_exceeded, the Retry-After a POST would
// have had) and the socket answers the next message. With 3 requests a minute, of the upgrade and 8 creates at least
// one is refused even if a minute ends meanwhile.
func TestResponsesWebSocketRateLimit(t *testing.T) {
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.RequestsPerMinute = 3 }))
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	ctx := ctxFor(t)
	c := wsDial(t, ctx, e.node.URL, e.key)
	refused, answered := 0, 0
	for range 8 {
		evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"hi"}`)
		last := evs[len(evs)-1]
		if last["type"] != "error" {
			answered++
			continue
		}
		refused++
		detail, _ := last["error"].(map[string]any)
		headers, _ := detail["headers"].(map[string]any)
		if len(evs) != 1 || last["status"] != float64(http.StatusTooManyRequests) || detail["code"] != "rate_limit_exceeded" ||
			headers["retry-after"] == nil {
			t.Errorf("a request past the rate: %v", evs)
		}
	}
	if refused == 0 || answered == 0 {
		t.Errorf("%d answered, %d refused: want some of each", answered, refused)
	}
}

// TestResponsesWebSocketRevokedKey: a socket's key is checked at each response.create, as at each POST: once it is
// revoked, the socket's next request is refused with a 401 error event (invalid_api_key).
func TestResponsesWebSocketRevokedKey(t *testing.T) {
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	ctx := ctxFor(t)
	p, key := e.node.NewAccount(t, "revoked")
	c := wsDial(t, ctx, e.node.URL, key)
	create := `{"type":"response.create","model":"gpt-4o-mini","input":"hi"}`
	if evs := wsExchange(t, ctx, c, websocket.MessageText, create); evs[len(evs)-1]["type"] != "response.completed" {
		t.Fatalf("before the revocation: %v", evs)
	}
	res, err := e.node.Commands.Accounts.RevokeKey(ctx, p, p.AccountID, p.KeyID)
	e.node.Shown(t, "revoke key", res, err, projections.Accounts{})
	evs := wsExchange(t, ctx, c, websocket.MessageText, create)
	if detail, _ := evs[0]["error"].(map[string]any); len(evs) != 1 || evs[0]["status"] != float64(http.StatusUnauthorized) ||
		detail["code"] != "invalid_api_key" {
		t.Errorf("after the revocation: %v", evs)
	}
	// The socket is then closed: a key no longer valid is served nothing more on it.
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("after the refusal, read: %v, want the socket closed with 1008", err)
	}
}

// TestResponsesWebSocketCountsEveryMessage: every message on a socket counts against the key's rate, as a POST
// does, whatever it turns out to be: bad messages and steers sent past the rate leave no room for a response.
func TestResponsesWebSocketCountsEveryMessage(t *testing.T) {
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.RequestsPerMinute = 3 }))
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply { return llmtest.Text("ok") })
	ctx := ctxFor(t)
	c := wsDial(t, ctx, e.node.URL, e.key)
	for _, bad := range []string{`{"type":"nope"}`, `{"type":"response.create","model":7}`, `not json`, `{"type":"nope"}`} {
		wsExchange(t, ctx, c, websocket.MessageText, bad)
	}
	evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"hi"}`)
	if last := evs[len(evs)-1]; last["type"] != "error" || last["status"] != float64(http.StatusTooManyRequests) {
		t.Errorf("a response asked for after the rate was spent on bad messages: %v", evs)
	}
}

// heldModel answers "hold" once release is closed (or the test ends), everything else at once.
func heldModel(e *env) (release func()) {
	ch := make(chan struct{})
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if req.LastMessage().Content == "hold" {
			<-ch
			return llmtest.Text("released")
		}
		return llmtest.Text("Answered: " + req.LastMessage().Content)
	})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	return release
}

// wsClosed reads c until it is closed, and returns the close the server sent (code -1: it ended otherwise).
func wsClosed(t *testing.T, ctx context.Context, c *websocket.Conn) websocket.CloseError {
	t.Helper()
	for {
		_, raw, err := c.Read(ctx)
		if err == nil {
			t.Logf("before the close: %s", raw)
			continue
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			return websocket.CloseError{Code: -1, Reason: err.Error()}
		}
		return ce
	}
}

// TestResponsesWebSocketIdle: a socket on which nothing is sent and nothing is in progress is closed after the idle
// timeout with 1000 "idle timeout"; one whose response is in progress for longer is not (the response completes),
// and the idle time counts from the end of the last response.
func TestResponsesWebSocketIdle(t *testing.T) {
	// Long enough for the first message to be read before it runs out, however loaded the machine.
	const idle = 2 * time.Second
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ResponsesSocketIdle = idle }))
	release := heldModel(e)
	t.Cleanup(release)
	ctx := ctxFor(t)
	c := wsDial(t, ctx, e.node.URL, e.key)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"gpt-4o-mini","input":"hold"}`)); err != nil {
		t.Fatal(err)
	}
	wsNext(t, ctx, c, "the held response", "response.created")
	// The wait only sharpens the check: a socket busy with a response must stay open however long it waits.
	time.Sleep(3 * idle)
	release()
	if ev := wsNext(t, ctx, c, "the released response", "response.completed", "error"); ev["type"] != "response.completed" {
		t.Fatalf("a response in progress past the idle timeout: %v", ev)
	}
	if ce := wsClosed(t, ctx, c); ce.Code != websocket.StatusNormalClosure || ce.Reason != "idle timeout" {
		t.Errorf("an idle socket: closed with %d %q, want 1000 \"idle timeout\"", ce.Code, ce.Reason)
	}
}

// TestResponsesWebSocketLifetime: a socket past its lifetime takes no new request (each is answered, in its lane's
// turn, with an error event websocket_connection_limit_reached), lets the response in progress complete, then
// closes with 1001 and a reason saying why.
func TestResponsesWebSocketLifetime(t *testing.T) {
	// Long enough for the held request to be served before it ends, however loaded the machine.
	const lifetime = 5 * time.Second
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.ResponsesSocketLifetime = lifetime }))
	release := heldModel(e)
	t.Cleanup(release)
	ctx := ctxFor(t)
	c := wsDial(t, ctx, e.node.URL, e.key)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"gpt-4o-mini","input":"hold","stream_id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	held := wsNext(t, ctx, c, "the held response", "response.created")
	if held["stream_id"] != "a" {
		t.Fatalf("the held response's first event: %v", held)
	}
	// Requests on lane b are served until the lifetime has passed; then the next is refused.
	var refusal map[string]any
	for served := 0; refusal == nil; served++ {
		evs := wsExchange(t, ctx, c, websocket.MessageText, `{"type":"response.create","model":"gpt-4o-mini","input":"quick","stream_id":"b"}`)
		switch last := evs[len(evs)-1]; {
		case last["stream_id"] != "b":
			t.Fatalf("an event of lane %v while lane b was asked: %v", last["stream_id"], last)
		case last["type"] == "error":
			refusal = last
			t.Logf("lane b: %d served before the lifetime's end", served)
		case last["type"] != "response.completed":
			t.Fatalf("lane b before the lifetime's end: %v", evs)
		default:
			time.Sleep(lifetime / 10) // paces the probes, well within the key's request rate
		}
	}
	detail, _ := refusal["error"].(map[string]any)
	if refusal["code"] != "websocket_connection_limit_reached" || detail["code"] != "websocket_connection_limit_reached" ||
		refusal["status"] != float64(http.StatusBadRequest) || !strings.Contains(fmt.Sprint(detail["message"]), "new websocket connection") {
		t.Errorf("a request past the lifetime: %v", refusal)
	}
	// A request behind the held one on its lane is refused in its turn, after the held response's end.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"gpt-4o-mini","input":"late","stream_id":"a"}`)); err != nil {
		t.Fatal(err)
	}
	// A steer's refusal, answered at once and in order, says the late request is in its lane's queue before the
	// held response ends (else the socket might close, its lanes quiet, before the request was read).
	heldResponse, _ := held["response"].(map[string]any)
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"response.steer","previous_response_id":"`+fmt.Sprint(heldResponse["id"])+`","input":"x"}`)); err != nil {
		t.Fatal(err)
	}
	wsNext(t, ctx, c, "the steer behind the late request", "response.steer.failed")
	release()
	done := wsNext(t, ctx, c, "the released response", "response.completed", "response.failed", "error")
	if r, _ := done["response"].(map[string]any); done["type"] != "response.completed" || done["stream_id"] != "a" || r["status"] != "completed" ||
		!strings.Contains(fmt.Sprint(r["output"]), "released") {
		t.Fatalf("the response in progress at the lifetime's end: %v", done)
	}
	late := wsNext(t, ctx, c, "the late request", "error", "response.created")
	if d, _ := late["error"].(map[string]any); late["stream_id"] != "a" || d["code"] != "websocket_connection_limit_reached" {
		t.Errorf("the late request on lane a: %v", late)
	}
	if ce := wsClosed(t, ctx, c); ce.Code != websocket.StatusGoingAway || !strings.Contains(ce.Reason, "lifetime") {
		t.Errorf("a socket past its lifetime: closed with %d %q, want 1001 naming its lifetime", ce.Code, ce.Reason)
	}
}
