package openaiapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/projections"
)

// A run's view maps to the API's object with every key the API shows, its defaults for what the run was not given,
// and the same object whether the view comes from the fold or from the read model's stored JSON.
func TestRunWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	expires := created.Add(10 * time.Minute)
	three, half := 3, 0.5
	base := events.Envelope{Time: created, AggregateID: "thread_1"}
	cases := []struct {
		name   string
		events []events.Event
		want   map[string]any // keys whose values are checked; every case also checks the full key set
	}{
		{"queued, nothing optional", nil, map[string]any{
			"object": "thread.run", "created_at": float64(created.Unix()), "expires_at": float64(expires.Unix()),
			"status": "queued", "started_at": nil, "completed_at": nil, "required_action": nil, "last_error": nil,
			"incomplete_details": nil, "usage": nil, "temperature": 1.0, "top_p": 1.0, "tools": []any{},
			"metadata": map[string]any{}, "response_format": "auto", "tool_choice": "auto",
			"truncation_strategy": map[string]any{"type": "auto", "last_messages": nil}, "max_prompt_tokens": nil,
		}},
		{"waiting for tool outputs", []events.Event{
			events.RunStarted{RunID: "run_1"},
			events.RunRequiresAction{RunID: "run_1", ToolCalls: []events.ToolCall{{ID: "call_1", Type: "function", Name: "f", Arguments: `{"a":1}`}}},
		}, map[string]any{
			"status": "requires_action", "started_at": float64(created.Unix()),
			"required_action": map[string]any{"type": "submit_tool_outputs", "submit_tool_outputs": map[string]any{
				"tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": "f", "arguments": `{"a":1}`}}}}},
		}},
		{"stopped short", []events.Event{
			events.RunStarted{RunID: "run_1"},
			events.RunIncomplete{RunID: "run_1", Reason: "max_completion_tokens", Usage: events.TokenUsage{PromptTokens: 5}},
		}, map[string]any{
			"status": "incomplete", "expires_at": nil, "required_action": nil,
			"incomplete_details": map[string]any{"reason": "max_completion_tokens"},
		}},
		{"failed", []events.Event{events.RunFailed{RunID: "run_1", Code: "server_error", Message: "boom"}}, map[string]any{
			"status": "failed", "failed_at": float64(created.Unix()), "expires_at": nil,
			"last_error": map[string]any{"code": "server_error", "message": "boom"},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			created := events.RunCreated{RunID: "run_1", AssistantID: "asst_1", Model: "m", ExpiresAt: expires}
			if c.name == "failed" {
				created.Temperature, created.MaxPromptTokens = &half, &three
				created.Truncation = events.Truncation{Type: "last_messages", LastMessages: &three}
			}
			view := thread.NewRunView(base, created)
			for _, ev := range c.events {
				e := base
				e.Event = ev
				thread.ApplyRun(&view, e)
			}
			got := wireMap(t, runWire(view))
			if len(got) != 27 {
				t.Fatalf("the object has %d keys, the API shows 27: %v", len(got), got)
			}
			for k, want := range c.want {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%s = %#v, want %#v", k, got[k], want)
				}
			}
			if c.name == "failed" && (got["temperature"] != 0.5 || got["max_prompt_tokens"] != 3.0 ||
				!reflect.DeepEqual(got["truncation_strategy"], map[string]any{"type": "last_messages", "last_messages": 3.0})) {
				t.Errorf("settings given to the run: %v", got)
			}
			// The read model stores the view as JSON: what it reads back shows the same.
			if again := wireMap(t, runWire(roundTrip(t, view))); !reflect.DeepEqual(again, got) {
				t.Fatalf("stored and read back:\n%v\nfolded:\n%v", again, got)
			}
		})
	}
}

func wireMap(t *testing.T, v any) map[string]any {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A thread's view maps to the API's object: "thread", Unix time, and {} for metadata and tool resources it was not
// given, whether from the fold or from the stored JSON.
func TestThreadWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	e := events.Envelope{Time: created, AggregateID: "thread_1"}
	bare := thread.NewThreadView(e, events.ThreadCreated{})
	given := thread.NewThreadView(e, events.ThreadCreated{Metadata: map[string]string{"k": "v"},
		ToolResources: json.RawMessage(`{"file_search":{"vector_store_ids":["vs_1"]}}`)})
	e.Event = events.ThreadModified{Metadata: map[string]string{"k": "w"}}
	modified := given
	thread.ApplyThread(&modified, e)
	for _, c := range []struct {
		name string
		view thread.ThreadView
		want map[string]any
	}{
		{"bare", bare, map[string]any{"id": "thread_1", "object": "thread", "created_at": float64(created.Unix()),
			"metadata": map[string]any{}, "tool_resources": map[string]any{}}},
		{"given", given, map[string]any{"id": "thread_1", "object": "thread", "created_at": float64(created.Unix()),
			"metadata":       map[string]any{"k": "v"},
			"tool_resources": map[string]any{"file_search": map[string]any{"vector_store_ids": []any{"vs_1"}}}}},
		{"modified without resources", modified, map[string]any{"id": "thread_1", "object": "thread",
			"created_at": float64(created.Unix()), "metadata": map[string]any{"k": "w"}, "tool_resources": map[string]any{}}},
	} {
		for _, v := range []thread.ThreadView{c.view, roundTrip(t, c.view)} {
			if got := wireMap(t, threadWire(v)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// An assistant's view maps to the API's object with the API's defaults for what was not set.
func TestAssistantWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	half := 0.5
	name := "helper"
	bare := projections.AssistantView{ID: "asst_1", CreatedAt: created, AssistantSpec: events.AssistantSpec{Model: "m"}}
	set := bare
	set.Name, set.Temperature, set.Metadata = &name, &half, map[string]string{"k": "v"}
	set.ResponseFormat = json.RawMessage(`{"type":"json_object"}`)
	for _, c := range []struct {
		view projections.AssistantView
		want map[string]any
	}{
		{bare, map[string]any{"id": "asst_1", "object": "assistant", "created_at": float64(created.Unix()), "name": nil,
			"description": nil, "model": "m", "instructions": nil, "tools": []any{}, "tool_resources": map[string]any{},
			"metadata": map[string]any{}, "temperature": 1.0, "top_p": 1.0, "response_format": "auto"}},
		{set, map[string]any{"id": "asst_1", "object": "assistant", "created_at": float64(created.Unix()), "name": "helper",
			"description": nil, "model": "m", "instructions": nil, "tools": []any{}, "tool_resources": map[string]any{},
			"metadata": map[string]any{"k": "v"}, "temperature": 0.5, "top_p": 1.0,
			"response_format": map[string]any{"type": "json_object"}}},
	} {
		for _, v := range []projections.AssistantView{c.view, roundTrip(t, c.view)} {
			if got := wireMap(t, assistantWire(v)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v, want %v", got, c.want)
			}
		}
	}
}

// roundTrip is v as the read model gives it back: stored as JSON and read again.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// A step's view maps to the API's object: its details by type, a function call's output once submitted, and usage
// only once the step is no longer in progress, whether from the fold or from the stored JSON.
func TestStepWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	ended := created.Add(time.Minute)
	at := func(ev events.Event, when time.Time) events.Envelope {
		return events.Envelope{Time: when, AggregateID: "thread_1", Event: ev}
	}
	used := &events.TokenUsage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}
	message := thread.NewStepView(at(nil, created), events.StepCreated{StepID: "step_1", RunID: "run_1",
		AssistantID: "asst_1", Type: events.StepTypeMessageCreation, MessageID: "msg_1", Usage: used})
	messageDone := message
	thread.ApplyStep(&messageDone, at(events.StepCompleted{StepID: "step_1", RunID: "run_1"}, ended))
	calls := thread.NewStepView(at(nil, created), events.StepCreated{StepID: "step_2", RunID: "run_1",
		AssistantID: "asst_1", Type: events.StepTypeToolCalls, ToolCalls: []events.ToolCall{
			{ID: "call_1", Type: "function", Name: "f", Arguments: `{"a":1}`},
			{ID: "call_2", Type: "file_search", FileSearch: &events.FileSearchCall{Ranker: "auto", ScoreThreshold: 0.1,
				Results: []events.FileSearchResult{{FileID: "file_1", FileName: "a.txt", Score: 0.9, Text: "found"}}}},
		}})
	callsAnswered := calls
	callsAnswered.ToolCalls = append([]thread.StepCall(nil), calls.ToolCalls...)
	thread.ApplyStep(&callsAnswered, at(events.RunToolOutputsSubmitted{RunID: "run_1", StepID: "step_2",
		Outputs: []events.ToolOutput{{ToolCallID: "call_1", Output: "42"}}}, ended))
	failed := message
	thread.ApplyStep(&failed, at(events.StepEnded{StepID: "step_1", RunID: "run_1", Status: events.StepStatusFailed,
		Code: "server_error", Message: "model down"}, ended))

	base := func(id, typ, status string) map[string]any {
		return map[string]any{"id": id, "object": "thread.run.step", "created_at": float64(created.Unix()),
			"run_id": "run_1", "assistant_id": "asst_1", "thread_id": "thread_1", "type": typ, "status": status,
			"cancelled_at": nil, "completed_at": nil, "expired_at": nil, "failed_at": nil, "last_error": nil,
			"usage": nil, "metadata": map[string]any{}}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	usage := map[string]any{"prompt_tokens": 3.0, "completion_tokens": 2.0, "total_tokens": 5.0}
	created2 := map[string]any{"type": "message_creation", "message_creation": map[string]any{"message_id": "msg_1"}}
	searchCall := map[string]any{"id": "call_2", "type": "file_search", "file_search": map[string]any{
		"ranking_options": map[string]any{"ranker": "auto", "score_threshold": 0.1},
		"results": []any{map[string]any{"file_id": "file_1", "file_name": "a.txt", "score": 0.9,
			"content": []any{map[string]any{"type": "text", "text": "found"}}}}}}
	toolDetails := func(output any) map[string]any {
		return map[string]any{"type": "tool_calls", "tool_calls": []any{
			map[string]any{"id": "call_1", "type": "function",
				"function": map[string]any{"name": "f", "arguments": `{"a":1}`, "output": output}},
			searchCall}}
	}
	for _, c := range []struct {
		name string
		view thread.StepView
		want map[string]any
	}{
		{"message step in progress", message, with(base("step_1", "message_creation", "in_progress"),
			"step_details", created2)},
		{"message step completed", messageDone, with(base("step_1", "message_creation", "completed"),
			"step_details", created2, "completed_at", float64(ended.Unix()), "usage", usage)},
		{"tool calls waiting", calls, with(base("step_2", "tool_calls", "in_progress"), "step_details", toolDetails(nil))},
		{"tool calls answered", callsAnswered, with(base("step_2", "tool_calls", "completed"),
			"step_details", toolDetails("42"), "completed_at", float64(ended.Unix()),
			"usage", map[string]any{"prompt_tokens": 0.0, "completion_tokens": 0.0, "total_tokens": 0.0})},
		{"failed", failed, with(base("step_1", "message_creation", "failed"), "step_details", created2,
			"failed_at", float64(ended.Unix()), "usage", usage,
			"last_error", map[string]any{"code": "server_error", "message": "model down"})},
	} {
		for _, v := range []thread.StepView{c.view, roundTrip(t, c.view)} {
			if got := wireMap(t, stepWire(v)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
			}
		}
	}
	if calls.ToolCalls[0].Output != nil {
		t.Error("answering a copy's calls changed the step it was copied from")
	}
}

// A message's view maps to the API's object: completed_at or incomplete_at from its status, nulls for an assistant
// and run it does not have, annotations as OpenAI's file_citation objects.
func TestMessageWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	e := events.Envelope{Time: created, AggregateID: "thread_1"}
	user := projections.NewThreadMessageView(e, events.MessageCreated{MessageID: "msg_1", Role: "user",
		Status: events.MessageStatusCompleted, Content: []events.ContentPart{{Type: "text", Text: "hi"}}})
	cut := projections.NewThreadMessageView(e, events.MessageCreated{MessageID: "msg_2", Role: "assistant",
		AssistantID: "asst_1", RunID: "run_1", Status: events.MessageStatusIncomplete, IncompleteReason: "max_tokens",
		Metadata: map[string]string{"k": "v"}, Attachments: json.RawMessage(`[{"file_id":"file_1","tools":[]}]`),
		Content: []events.ContentPart{{Type: "text", Text: "see [1]", Annotations: []events.Annotation{
			{Type: "file_citation", Text: "[1]", StartIndex: 4, EndIndex: 7, FileID: "file_1"}}}}})
	at := float64(created.Unix())
	for _, c := range []struct {
		name string
		view thread.ThreadMessageView
		want map[string]any
	}{
		{"user's, completed", user, map[string]any{"id": "msg_1", "object": "thread.message", "created_at": at,
			"assistant_id": nil, "thread_id": "thread_1", "run_id": nil, "status": "completed",
			"incomplete_details": nil, "completed_at": at, "incomplete_at": nil, "role": "user",
			"content":     []any{map[string]any{"type": "text", "text": map[string]any{"value": "hi", "annotations": []any{}}}},
			"attachments": []any{}, "metadata": map[string]any{}}},
		{"assistant's, cut short", cut, map[string]any{"id": "msg_2", "object": "thread.message", "created_at": at,
			"assistant_id": "asst_1", "thread_id": "thread_1", "run_id": "run_1", "status": "incomplete",
			"incomplete_details": map[string]any{"reason": "max_tokens"}, "completed_at": nil, "incomplete_at": at,
			"role": "assistant", "content": []any{map[string]any{"type": "text", "text": map[string]any{"value": "see [1]",
				"annotations": []any{map[string]any{"type": "file_citation", "text": "[1]", "start_index": 4.0,
					"end_index": 7.0, "file_citation": map[string]any{"file_id": "file_1"}}}}}},
			"attachments": []any{map[string]any{"file_id": "file_1", "tools": []any{}}},
			"metadata":    map[string]any{"k": "v"}}},
	} {
		for _, v := range []thread.ThreadMessageView{c.view, roundTrip(t, c.view)} {
			if got := wireMap(t, messageWire(v)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
			}
		}
	}
}

// A file's view maps to the API's object without where its bytes are.
func TestFileWireShowsWhatTheAPIShows(t *testing.T) {
	created := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	v := projections.FileView{ID: "file_1", CreatedAt: created, Bytes: 12, Filename: "a.txt", Purpose: "assistants",
		Blob: "blob/abc", Digest: "sha256:abc", ContentType: "text/plain"}
	want := map[string]any{"id": "file_1", "object": "file", "bytes": 12.0, "created_at": float64(created.Unix()),
		"expires_at": nil, "filename": "a.txt", "purpose": "assistants", "status": "processed", "status_details": nil}
	for _, got := range []projections.FileView{v, roundTrip(t, v)} {
		if m := wireMap(t, fileWire(got)); !reflect.DeepEqual(m, want) {
			t.Errorf("got %v\nwant %v", m, want)
		}
	}
}
