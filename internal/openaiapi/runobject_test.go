package openaiapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

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
			view := projections.NewRunView(base, created)
			for _, ev := range c.events {
				e := base
				e.Event = ev
				projections.ApplyRun(&view, e)
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
			body, _ := json.Marshal(view)
			var stored projections.RunView
			if err := json.Unmarshal(body, &stored); err != nil {
				t.Fatal(err)
			}
			if again := wireMap(t, runWire(stored)); !reflect.DeepEqual(again, got) {
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
	bare := projections.NewThreadView(e, events.ThreadCreated{})
	given := projections.NewThreadView(e, events.ThreadCreated{Metadata: map[string]string{"k": "v"},
		ToolResources: json.RawMessage(`{"file_search":{"vector_store_ids":["vs_1"]}}`)})
	e.Event = events.ThreadModified{Metadata: map[string]string{"k": "w"}}
	modified := given
	projections.ApplyThread(&modified, e)
	for _, c := range []struct {
		name string
		view projections.ThreadView
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
		body, _ := json.Marshal(c.view)
		var stored projections.ThreadView
		if err := json.Unmarshal(body, &stored); err != nil {
			t.Fatal(err)
		}
		for _, v := range []projections.ThreadView{c.view, stored} {
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
		body, _ := json.Marshal(c.view)
		var stored projections.AssistantView
		if err := json.Unmarshal(body, &stored); err != nil {
			t.Fatal(err)
		}
		for _, v := range []projections.AssistantView{c.view, stored} {
			if got := wireMap(t, assistantWire(v)); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v, want %v", got, c.want)
			}
		}
	}
}
