package openaiapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/tokens"
)

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

// roles lists a model request's messages as "role:content" (tool calls as "call:name", outputs as "tool:text").
func roles(req llmtest.Request) []string {
	var out []string
	for _, m := range req.Messages {
		switch {
		case len(m.ToolCalls) > 0:
			for _, c := range m.ToolCalls {
				out = append(out, "call:"+c.Name)
			}
		case m.Role == llm.RoleTool:
			out = append(out, "tool:"+m.Content)
		default:
			out = append(out, m.Role+":"+m.Content)
		}
	}
	return out
}

func TestResponsesPlainAndChained(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("Hello there."), llmtest.Text("You said hi."))
	first, err := e.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4o-mini", Instructions: openai.String("Be brief."), Input: textInput("hi"),
		Metadata: map[string]string{"k": "v"},
	})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if first.Status != "completed" || first.OutputText() != "Hello there." || !strings.HasPrefix(first.ID, "resp_") {
		t.Fatalf("response: %s", first.RawJSON())
	}
	if first.Temperature != 1 || first.TopP != 1 || first.Truncation != "disabled" || first.Usage.TotalTokens == 0 ||
		first.Metadata["k"] != "v" || first.Background {
		t.Fatalf("defaults: %s", first.RawJSON())
	}
	got, err := e.client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	if err != nil || got.OutputText() != "Hello there." {
		t.Fatalf("get: %v: %s", apiErr(err), raw(got))
	}

	second, err := e.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4o-mini", Input: textInput("again"), PreviousResponseID: openai.String(first.ID),
	})
	if err != nil || second.OutputText() != "You said hi." || second.PreviousResponseID != first.ID {
		t.Fatalf("chained: %v: %s", apiErr(err), raw(second))
	}
	reqs := e.model.Requests()
	want := []string{"user:hi", "assistant:Hello there.", "user:again"} // instructions not carried over
	if got := roles(reqs[1]); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("chained context: %q, want %q", got, want)
	}

	items, err := e.client.Responses.InputItems.List(ctx, second.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) != 1 || items.Data[0].ID == "" {
		t.Fatalf("input items: %v: %s", apiErr(err), raw(items))
	}

	if err := e.client.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	_, err = e.client.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	wantAPIError(t, err, 404, "")
	_, err = e.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4o-mini", Input: textInput("x"), PreviousResponseID: openai.String(first.ID)})
	wantAPIError(t, err, 404, "previous_response_id")
}

func weatherFunction() responses.ToolUnionParam {
	return responses.ToolParamOfFunction("get_weather", map[string]any{
		"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}},
		"required": []string{"city"}, "additionalProperties": false}, true)
}

func TestResponsesFunctionCallRoundTrip(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}),
		llmtest.Text("It is sunny in Oslo."))
	first, err := e.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4o-mini", Input: textInput("weather in Oslo?"), Tools: []responses.ToolUnionParam{weatherFunction()},
		ToolChoice:        responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)},
		ParallelToolCalls: openai.Bool(false),
	})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if len(first.Output) != 1 || first.Output[0].Type != "function_call" || first.Output[0].CallID != "call_1" ||
		first.Output[0].Arguments.OfString != `{"city":"Oslo"}` || !strings.HasPrefix(first.Output[0].ID, "fc_") {
		t.Fatalf("function call: %s", first.RawJSON())
	}
	req := e.model.Requests()[0]
	if len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" || string(req.ToolChoice) != `"required"` ||
		req.ParallelToolCalls == nil || *req.ParallelToolCalls {
		t.Fatalf("tools not passed on: %+v %s %v", req.Tools, req.ToolChoice, req.ParallelToolCalls)
	}
	out := responses.ResponseInputItemParamOfFunctionCallOutput("sunny")
	out.OfFunctionCallOutput.CallID = openai.String("call_1")
	second, err := e.client.Responses.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4o-mini", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}},
		Tools: []responses.ToolUnionParam{weatherFunction()},
	})
	if err != nil || second.OutputText() != "It is sunny in Oslo." {
		t.Fatalf("second: %v: %s", apiErr(err), raw(second))
	}
	want := "user:weather in Oslo?|call:get_weather|tool:sunny"
	if got := strings.Join(roles(e.model.Requests()[1]), "|"); got != want {
		t.Fatalf("history: %q, want %q", got, want)
	}
}

func TestResponsesStreamAndReplay(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("one two three"))
	stream := e.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("count")})
	var types []string
	var id, text string
	for stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(types) {
			t.Fatalf("sequence_number %d at %d", ev.SequenceNumber, len(types))
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.created":
			id = ev.Response.ID
		case "response.output_text.delta":
			text += ev.Delta
		case "response.completed":
			if ev.Response.ID != id || ev.Response.OutputText() != "one two three" {
				t.Fatalf("completed: %s", ev.RawJSON())
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", apiErr(err))
	}
	if text != "one two three" {
		t.Fatalf("deltas give %q", text)
	}
	want := []string{"response.created", "response.in_progress", "response.output_item.added", "response.content_part.added"}
	if strings.Join(types[:4], ",") != strings.Join(want, ",") {
		t.Fatalf("stream starts %q", types)
	}
	tail := []string{"response.output_text.done", "response.content_part.done", "response.output_item.done", "response.completed"}
	if strings.Join(types[len(types)-4:], ",") != strings.Join(tail, ",") {
		t.Fatalf("stream ends %q", types)
	}

	replay := e.client.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{StartingAfter: openai.Int(2)})
	var again []string
	for replay.Next() {
		ev := replay.Current()
		if int(ev.SequenceNumber) != 3+len(again) {
			t.Fatalf("replay sequence_number %d", ev.SequenceNumber)
		}
		again = append(again, ev.Type)
	}
	if err := replay.Err(); err != nil {
		t.Fatalf("replay: %v", apiErr(err))
	}
	if strings.Join(again, ",") != strings.Join(types[3:], ",") {
		t.Fatalf("replay %q, want %q", again, types[3:])
	}
}

func TestConversationsWithResponses(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items:    []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("My name is Ada.", responses.EasyInputMessageRoleUser)},
		Metadata: map[string]string{"topic": "names"},
	})
	if err != nil || !strings.HasPrefix(conv.ID, "conv_") {
		t.Fatalf("create conversation: %v: %s", apiErr(err), raw(conv))
	}
	e.model.Enqueue(llmtest.Text("Hello Ada."), llmtest.Text("Your name is Ada."))
	r1, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Greet me."),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	if err != nil || r1.Conversation.ID != conv.ID {
		t.Fatalf("response 1: %v: %s", apiErr(err), raw(r1))
	}
	// A follow-up at once sees every item of the first: they were committed before it was answered.
	r2, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("Name?"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	if err != nil {
		t.Fatalf("response 2: %v", apiErr(err))
	}
	want := "user:My name is Ada.|user:Greet me.|assistant:Hello Ada.|user:Name?"
	if got := strings.Join(roles(e.model.Requests()[1]), "|"); got != want {
		t.Fatalf("context: %q, want %q", got, want)
	}
	_ = r2
	page, err := e.client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc, Limit: openai.Int(2)})
	if err != nil || len(page.Data) != 2 || !page.HasMore || page.Data[0].Type != "message" {
		t.Fatalf("items page: %v: %s", apiErr(err), raw(page))
	}
	next, err := e.client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{Order: conversations.ItemListParamsOrderAsc, After: openai.String(page.LastID)})
	if err != nil || len(next.Data) != 3 || next.HasMore {
		t.Fatalf("items after: %v: %s", apiErr(err), raw(next))
	}
	item, err := e.client.Conversations.Items.Get(ctx, conv.ID, page.Data[0].ID, conversations.ItemGetParams{})
	if err != nil || item.ID != page.Data[0].ID {
		t.Fatalf("item: %v: %s", apiErr(err), raw(item))
	}
	if _, err := e.client.Conversations.Items.Delete(ctx, conv.ID, item.ID); err != nil {
		t.Fatalf("delete item: %v", apiErr(err))
	}
	_, err = e.client.Conversations.Items.Get(ctx, conv.ID, item.ID, conversations.ItemGetParams{})
	wantAPIError(t, err, 404, "")
	up, err := e.client.Conversations.Update(ctx, conv.ID, conversations.ConversationUpdateParams{Metadata: map[string]string{"topic": "x"}})
	if err != nil || !strings.Contains(up.RawJSON(), `"topic":"x"`) {
		t.Fatalf("update: %v: %s", apiErr(err), raw(up))
	}

	_, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		PreviousResponseID: openai.String(r1.ID),
		Conversation:       responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	wantAPIError(t, err, 400, "conversation")

	// Another account sees none of it.
	_, otherKey := e.node.NewAccount(t, "other")
	other := sdk(e.node, otherKey)
	_, err = other.Conversations.Get(ctx, conv.ID)
	wantAPIError(t, err, 404, "")
	_, err = other.Responses.Get(ctx, r1.ID, responses.ResponseGetParams{})
	wantAPIError(t, err, 404, "")
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	wantAPIError(t, err, 404, "conversation")
	_, err = other.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"),
		PreviousResponseID: openai.String(r1.ID)})
	wantAPIError(t, err, 404, "previous_response_id")

	if _, err := e.client.Conversations.Delete(ctx, conv.ID); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	_, err = e.client.Conversations.Get(ctx, conv.ID)
	wantAPIError(t, err, 404, "")
}

func TestResponsesStoreFalseWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	conv, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	e.model.Enqueue(llmtest.Text("ok"))
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x"), Store: openai.Bool(false),
		Conversation: responses.ResponseNewParamsConversationUnion{OfString: openai.String(conv.ID)}})
	if err != nil || r.OutputText() != "ok" || !strings.Contains(r.RawJSON(), `"store":false`) {
		t.Fatalf("create: %v: %s", apiErr(err), raw(r))
	}
	_, err = e.client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{})
	wantAPIError(t, err, 404, "")
	items, err := e.client.Conversations.Items.List(ctx, conv.ID, conversations.ItemListParams{})
	if err != nil || len(items.Data) != 0 {
		t.Fatalf("conversation items after store:false: %v: %s", apiErr(err), raw(items))
	}
}

func TestResponsesFormatAndLimits(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text(`{"a":1}`), llmtest.Text("a long answer that the limit cuts short"))
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("json"),
		Text: responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigParamOfJSONSchema("thing",
			map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}}})}})
	if err != nil || r.OutputText() != `{"a":1}` || r.Text.Format.Type != "json_schema" {
		t.Fatalf("json_schema: %v: %s", apiErr(err), raw(r))
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name string `json:"name"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(e.model.Requests()[0].ResponseFormat, &rf); err != nil || rf.Type != "json_schema" || rf.JSONSchema.Name != "thing" {
		t.Fatalf("response_format: %s", e.model.Requests()[0].ResponseFormat)
	}
	r, err = e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("long"),
		MaxOutputTokens: openai.Int(3)})
	if err != nil || r.Status != "incomplete" || r.IncompleteDetails.Reason != "max_output_tokens" {
		t.Fatalf("max_output_tokens: %v: %s", apiErr(err), raw(r))
	}
}

func TestResponsesBadInput(t *testing.T) {
	e := newEnv(t)
	cases := []struct {
		body, param string
		status      int
	}{
		{`{"input":"x"}`, "model", 400},
		{`{"model":"gpt-4o-mini","input":5}`, "input", 400},
		{`{"model":"gpt-4o-mini","input":[{"type":"message","role":"robot","content":"x"}]}`, "input[0].role", 400},
		{`{"model":"gpt-4o-mini","input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id", 400},
		{`{"model":"gpt-4o-mini","input":"x","temperature":"hot"}`, "temperature", 400},
		{`{"model":"gpt-4o-mini","input":"x","tools":[{"type":"mcp","server_label":"a","server_url":"http://x"}]}`, "tools[0].server_url", 400},
		{`{"model":"gpt-4o-mini","input":"x","tool_choice":{"type":"function","name":"nope"}}`, "tool_choice.name", 400},
		{`{"model":"gpt-4o-mini","input":"x","previous_response_id":"resp_*"}`, "previous_response_id", 400},
		{`{"model":"gpt-4o-mini","input":"x","previous_response_id":"resp_01NOSUCH"}`, "previous_response_id", 404},
		{`{"model":"gpt-4o-mini","input":"x","conversation":"conv_01NOSUCH"}`, "conversation", 404},
		{`{"model":"gpt-4o-mini","input":"x","text":{"format":{"type":"json_schema"}}}`, "text.format.name", 400},
		{`{"model":"gpt-4o-mini","input":"x","truncation":"some"}`, "truncation", 400},
		{`{"model":"gpt-4o-mini","input":"x","background":true,"store":false}`, "background", 400},
		{`{"model":"gpt-4o-mini","input":"x","max_output_tokens":0}`, "max_output_tokens", 400},
	}
	for _, c := range cases {
		req, _ := http.NewRequest("POST", e.node.URL+"/v1/responses", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d: %s", c.body, resp.StatusCode, c.status, body)
			continue
		}
		got := checkErrorBody(t, resp.StatusCode, body)
		if string(got.Error.Param) != `"`+c.param+`"` {
			t.Errorf("%s: param %s, want %q", c.body, got.Error.Param, c.param)
		}
	}
	for _, path := range []string{"/v1/responses/bad.id", "/v1/conversations/conv_*"} {
		req, _ := http.NewRequest("GET", e.node.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+e.key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		checkErrorBody(t, resp.StatusCode, body)
	}
}

// raw shows an SDK object as the JSON it was read from.
func raw(v interface{ RawJSON() string }) (s string) {
	defer func() {
		if recover() != nil {
			s = "<nil>" // a nil pointer: the call failed
		}
	}()
	return v.RawJSON()
}

// TestResponsesStreamLiveDeltas: a streamed response sends the model's text as it comes, before its message is in
// the log (here the model stops half way and the message never is), numbered as the committed message would be.
func TestResponsesStreamLiveDeltas(t *testing.T) {
	e := newEnv(t)
	// Bounded: without live frames nothing comes until the (never) committed message.
	ctx, cancel := context.WithTimeout(ctxFor(t), 15*time.Second)
	defer cancel()
	e.model.Enqueue(llmtest.Text("one two three four five").HangAfter(2))
	stream := e.client.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("count")})
	var types []string
	var id, text string
	for len(types) < 5 && stream.Next() {
		ev := stream.Current()
		if int(ev.SequenceNumber) != len(types) {
			t.Fatalf("sequence_number %d at %d", ev.SequenceNumber, len(types))
		}
		types = append(types, ev.Type)
		switch ev.Type {
		case "response.created":
			id = ev.Response.ID
		case "response.output_item.added":
			if !strings.HasPrefix(ev.Item.ID, "msg_") || ev.OutputIndex != 0 {
				t.Fatalf("item added: %s", ev.RawJSON())
			}
		case "response.output_text.delta":
			text += ev.Delta
		}
	}
	want := "response.created,response.in_progress,response.output_item.added,response.content_part.added,response.output_text.delta"
	if strings.Join(types, ",") != want || text == "" || !strings.HasPrefix("one two three four five", text) {
		t.Fatalf("live frames %q with text %q (%v)", types, text, stream.Err())
	}
	history, _, err := e.node.Store.Load(ctx, events.Ref{Type: "response", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range history {
		if _, ok := ev.Event.(events.ResponseItemAdded); ok {
			t.Fatalf("the message is in the log already: the delta did not come live")
		}
	}
}

// TestResponsesLenientInput: input as the Agents SDK re-sends it (earlier output items with their IDs and fields of
// its own, assistant messages with output_text parts, an item_reference) is taken, and input_tokens counts.
func TestResponsesLenientInput(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(llmtest.Text("Noted."), llmtest.Text("Still noted."))
	post := func(path, body string) map[string]any {
		req, _ := http.NewRequest("POST", e.node.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d %s", path, resp.StatusCode, raw)
		}
		var out map[string]any
		_ = json.Unmarshal(raw, &out)
		return out
	}
	first := post("/v1/responses", `{"model":"gpt-4o-mini","input":[
		{"role":"user","content":"Remember 7.","providerData":{"x":1}},
		{"type":"message","role":"assistant","id":"msg_earlier","status":"completed",
		 "content":[{"type":"output_text","text":"I will.","annotations":[],"providerData":{"y":2}}]},
		{"role":"user","content":[{"type":"input_text","text":"Good."}]}]}`)
	if first["status"] != "completed" {
		t.Fatalf("first: %v", first)
	}
	want := "user:Remember 7.|assistant:I will.|user:Good."
	if got := strings.Join(roles(e.model.Requests()[0]), "|"); got != want {
		t.Fatalf("model saw %q, want %q", got, want)
	}
	post("/v1/responses", `{"model":"gpt-4o-mini","previous_response_id":"`+first["id"].(string)+`",
		"input":[{"type":"item_reference","id":"msg_earlier"},{"role":"user","content":"Again."}]}`)
	want = "user:Remember 7.|assistant:I will.|user:Good.|assistant:Noted.|assistant:I will.|user:Again."
	if got := strings.Join(roles(e.model.Requests()[1]), "|"); got != want {
		t.Fatalf("model saw %q, want %q", got, want)
	}
	n := post("/v1/responses/input_tokens", `{"model":"gpt-4o-mini","input":"How many tokens is this?"}`)
	if n["object"] != "response.input_tokens" || n["input_tokens"].(float64) < 5 {
		t.Fatalf("input_tokens: %v", n)
	}
}

// TestResponsesAllowedTools: tool_choice allowed_tools reaches the model as the tools it may call and the mode.
func TestResponsesAllowedTools(t *testing.T) {
	e := newEnv(t)
	e.model.Enqueue(llmtest.Text("ok"))
	body := `{"model":"gpt-4o-mini","input":"x","tools":[
		{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{}}},
		{"type":"function","name":"get_time","parameters":{"type":"object","properties":{}}}],
		"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"get_time"}]}}`
	req, _ := http.NewRequest("POST", e.node.URL+"/v1/responses", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(raw), `"type":"allowed_tools"`) {
		t.Fatalf("create: %d %s", resp.StatusCode, raw)
	}
	got := e.model.Requests()[0]
	if len(got.Tools) != 1 || got.Tools[0].Name != "get_time" || string(got.ToolChoice) != `"required"` {
		t.Fatalf("the model was offered %+v with tool_choice %s", got.Tools, got.ToolChoice)
	}
}

// TestResponsesAutoTruncationFitsTheContextWindow: with "truncation": "auto" the oldest items are dropped until the
// request fits the model's context window with room for the answer; the newest stays. "disabled" sends them all.
func TestResponsesAutoTruncationFitsTheContextWindow(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	// gpt-4 takes 8,192 tokens; twelve messages of about a thousand do not fit.
	var input responses.ResponseInputParam
	for i := range 12 {
		text := fmt.Sprintf("message %d: %s", i, strings.Repeat("lorem ipsum ", 500))
		input = append(input, responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser))
	}
	e.model.Enqueue(llmtest.Text("fits"), llmtest.Text("all of it"))
	for _, mode := range []responses.ResponseNewParamsTruncation{responses.ResponseNewParamsTruncationAuto, responses.ResponseNewParamsTruncationDisabled} {
		r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4", Instructions: openai.String("Be brief."),
			Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input}, Truncation: mode})
		if err != nil || r.Status != "completed" || string(r.Truncation) != string(mode) {
			t.Fatalf("%s: %v: %s", mode, apiErr(err), raw(r))
		}
	}
	reqs := e.model.Requests()
	auto, all := reqs[len(reqs)-2], reqs[len(reqs)-1]
	if len(all.Messages) != 13 {
		t.Fatalf("disabled sent %d messages, want the instructions and all 12", len(all.Messages))
	}
	n := len(auto.Messages)
	if n < 2 || n >= 13 || auto.Messages[0].Content != "Be brief." || !strings.HasPrefix(auto.Messages[n-1].Content, "message 11:") ||
		!strings.HasPrefix(auto.Messages[1].Content, fmt.Sprintf("message %d:", 12-(n-1))) {
		t.Fatalf("auto sent %d messages: the instructions, then the newest ones in order, were expected", n)
	}
	msgs := make([]llm.Message, n)
	for i, m := range auto.Messages {
		msgs[i] = llm.Message{Role: m.Role, Content: m.Content}
	}
	if used := tokens.CountMessages("gpt-4", msgs); used > 8192-4096 {
		t.Fatalf("auto sent %d tokens; gpt-4 takes 8,192 with 4,096 left for the answer", used)
	}
}
