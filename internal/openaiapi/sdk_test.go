package openaiapi_test

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

func TestAssistantsCRUD(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	c := e.client.Beta.Assistants

	a, err := c.New(ctx, openai.BetaAssistantNewParams{
		Model: "gpt-4o-mini", Name: openai.String("Math tutor"), Description: openai.String("helps with sums"),
		Instructions: openai.String("Answer briefly."), Tools: []openai.AssistantToolUnionParam{weatherTool()},
		Metadata: shared.Metadata{"team": "blue"}, Temperature: openai.Float(0.2),
	})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	if !strings.HasPrefix(a.ID, "asst_") || a.Object != "assistant" || a.CreatedAt == 0 {
		t.Fatalf("created assistant: %s", a.RawJSON())
	}
	if a.Name != "Math tutor" || a.Model != "gpt-4o-mini" || a.Temperature != 0.2 || a.TopP != 1 || a.Metadata["team"] != "blue" {
		t.Fatalf("created assistant: %s", a.RawJSON())
	}
	if len(a.Tools) != 1 || a.Tools[0].Type != "function" || a.Tools[0].Function.Name != "get_weather" {
		t.Fatalf("tools: %s", a.RawJSON())
	}

	got, err := c.Get(ctx, a.ID)
	if err != nil || got.RawJSON() != a.RawJSON() {
		t.Fatalf("get: %v\n got %s\nwant %s", apiErr(err), got.RawJSON(), a.RawJSON())
	}

	up, err := c.Update(ctx, a.ID, openai.BetaAssistantUpdateParams{Name: openai.String("Sums"), Metadata: shared.Metadata{"team": "red"}})
	if err != nil {
		t.Fatalf("update: %v", apiErr(err))
	}
	if up.Name != "Sums" || up.Description != "helps with sums" || up.Metadata["team"] != "red" || len(up.Tools) != 1 {
		t.Fatalf("update changed more or less than it was asked: %s", up.RawJSON())
	}

	page, err := c.List(ctx, openai.BetaAssistantListParams{})
	if err != nil || len(page.Data) != 1 || page.Data[0].ID != a.ID {
		t.Fatalf("list: %v %s", apiErr(err), page.RawJSON())
	}

	del, err := c.Delete(ctx, a.ID)
	if err != nil || !del.Deleted || del.ID != a.ID || del.Object != "assistant.deleted" {
		t.Fatalf("delete: %v %s", apiErr(err), del.RawJSON())
	}
	_, err = c.Get(ctx, a.ID)
	ae := wantAPIError(t, err, http.StatusNotFound, "")
	if ae.Message != "No assistant found with id '"+a.ID+"'." || ae.Type != "invalid_request_error" {
		t.Fatalf("not found error: %s", ae.RawJSON())
	}
}

func TestThreadsAndMessages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{
		Metadata: shared.Metadata{"user": "u1"},
		Messages: []openai.BetaThreadNewParamsMessage{
			{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("first")}},
			{Role: "assistant", Content: openai.BetaThreadNewParamsMessageContentUnion{OfArrayOfContentParts: []openai.MessageContentPartParamUnion{
				{OfText: &openai.TextContentBlockParam{Text: "second"}}}}},
		},
	})
	if err != nil {
		t.Fatalf("create thread: %v", apiErr(err))
	}
	if !strings.HasPrefix(th.ID, "thread_") || th.Object != "thread" || th.Metadata["user"] != "u1" {
		t.Fatalf("thread: %s", th.RawJSON())
	}
	th, err = e.client.Beta.Threads.Update(ctx, th.ID, openai.BetaThreadUpdateParams{Metadata: shared.Metadata{"user": "u2"}})
	if err != nil || th.Metadata["user"] != "u2" {
		t.Fatalf("update thread: %v %s", apiErr(err), th.RawJSON())
	}

	msgs := e.client.Beta.Threads.Messages
	m, err := msgs.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: openai.BetaThreadMessageNewParamsRoleUser,
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("third")}, Metadata: shared.Metadata{"k": "v"}})
	if err != nil {
		t.Fatalf("create message: %v", apiErr(err))
	}
	if !strings.HasPrefix(m.ID, "msg_") || m.Object != "thread.message" || m.ThreadID != th.ID || m.Role != "user" ||
		m.Status != "completed" || len(m.Content) != 1 || m.Content[0].Text.Value != "third" {
		t.Fatalf("message: %s", m.RawJSON())
	}

	list, err := msgs.List(ctx, th.ID, openai.BetaThreadMessageListParams{Order: openai.BetaThreadMessageListParamsOrderAsc})
	if err != nil {
		t.Fatalf("list messages: %v", apiErr(err))
	}
	var texts []string
	for _, m := range list.Data {
		texts = append(texts, m.Content[0].Text.Value)
	}
	if !slices.Equal(texts, []string{"first", "second", "third"}) {
		t.Fatalf("messages in order: %v", texts)
	}

	m, err = msgs.Update(ctx, th.ID, m.ID, openai.BetaThreadMessageUpdateParams{Metadata: shared.Metadata{"k": "w"}})
	if err != nil || m.Metadata["k"] != "w" {
		t.Fatalf("update message: %v %s", apiErr(err), m.RawJSON())
	}
	if got, err := msgs.Get(ctx, th.ID, m.ID); err != nil || got.Metadata["k"] != "w" {
		t.Fatalf("get message: %v", apiErr(err))
	}
	del, err := msgs.Delete(ctx, th.ID, m.ID)
	if err != nil || !del.Deleted || del.Object != "thread.message.deleted" {
		t.Fatalf("delete message: %v", apiErr(err))
	}
	_, err = msgs.Get(ctx, th.ID, m.ID)
	wantAPIError(t, err, http.StatusNotFound, "")

	tdel, err := e.client.Beta.Threads.Delete(ctx, th.ID)
	if err != nil || !tdel.Deleted || tdel.Object != "thread.deleted" {
		t.Fatalf("delete thread: %v", apiErr(err))
	}
	_, err = msgs.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	ae := wantAPIError(t, err, http.StatusNotFound, "")
	if ae.Message != "No thread found with id '"+th.ID+"'." {
		t.Fatalf("deleted thread: %s", ae.RawJSON())
	}
}

func TestPaginationAcrossPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	var ids []string
	for i := 0; i < 23; i++ {
		a, err := e.client.Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini"})
		if err != nil {
			t.Fatalf("create: %v", apiErr(err))
		}
		ids = append(ids, a.ID)
	}
	// The SDK's auto-pager follows after=<last id> while has_more holds.
	iter := e.client.Beta.Assistants.ListAutoPaging(ctx, openai.BetaAssistantListParams{Limit: openai.Int(5)})
	var desc []string
	for iter.Next() {
		desc = append(desc, iter.Current().ID)
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("auto-paging: %v", apiErr(err))
	}
	want := slices.Clone(ids)
	slices.Reverse(want)
	if !slices.Equal(desc, want) {
		t.Fatalf("desc order over pages:\n got %v\nwant %v", desc, want)
	}

	first, err := e.client.Beta.Assistants.List(ctx, openai.BetaAssistantListParams{Limit: openai.Int(10), Order: openai.BetaAssistantListParamsOrderAsc})
	if err != nil || len(first.Data) != 10 || !first.HasMore || first.Data[0].ID != ids[0] {
		t.Fatalf("first asc page: %v %s", apiErr(err), first.RawJSON())
	}
	var raw struct {
		FirstID string `json:"first_id"`
		LastID  string `json:"last_id"`
	}
	if err := jsonUnmarshal(first.RawJSON(), &raw); err != nil || raw.FirstID != ids[0] || raw.LastID != ids[9] {
		t.Fatalf("first_id/last_id: %s", first.RawJSON())
	}
	second, err := e.client.Beta.Assistants.List(ctx, openai.BetaAssistantListParams{Limit: openai.Int(10),
		Order: openai.BetaAssistantListParamsOrderAsc, After: openai.String(ids[9])})
	if err != nil || len(second.Data) != 10 || second.Data[0].ID != ids[10] || !second.HasMore {
		t.Fatalf("second asc page: %v %s", apiErr(err), second.RawJSON())
	}
	last, err := e.client.Beta.Assistants.List(ctx, openai.BetaAssistantListParams{Limit: openai.Int(10),
		Order: openai.BetaAssistantListParamsOrderAsc, After: openai.String(ids[19])})
	if err != nil || len(last.Data) != 3 || last.HasMore {
		t.Fatalf("last asc page: %v %s", apiErr(err), last.RawJSON())
	}
	before, err := e.client.Beta.Assistants.List(ctx, openai.BetaAssistantListParams{Limit: openai.Int(3),
		Order: openai.BetaAssistantListParamsOrderAsc, Before: openai.String(ids[10])})
	if err != nil || len(before.Data) != 3 || before.Data[0].ID != ids[7] || before.Data[2].ID != ids[9] || !before.HasMore {
		t.Fatalf("page before a cursor: %v %s", apiErr(err), before.RawJSON())
	}
}

func TestFunctionCallingRunWithSubmit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_weather_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}),
		llmtest.Text("It is sunny in Paris."),
	)
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "What is the weather in Paris?")
	run := e.run(t, th.ID, a.ID)
	if !strings.HasPrefix(run.ID, "run_") || run.Object != "thread.run" || run.ThreadID != th.ID || run.ExpiresAt == 0 {
		t.Fatalf("run: %s", run.RawJSON())
	}

	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusRequiresAction || run.RequiredAction.Type != "submit_tool_outputs" {
		t.Fatalf("want requires_action, got %s", run.RawJSON())
	}
	calls := run.RequiredAction.SubmitToolOutputs.ToolCalls
	if len(calls) != 1 || calls[0].ID != "call_weather_1" || calls[0].Function.Name != "get_weather" || calls[0].Function.Arguments != `{"city":"Paris"}` {
		t.Fatalf("tool calls: %s", run.RawJSON())
	}

	run, err := e.client.Beta.Threads.Runs.SubmitToolOutputs(ctx, th.ID, run.ID, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String("call_weather_1"), Output: openai.String("sunny, 24C")}},
	})
	if err != nil {
		t.Fatalf("submit: %v", apiErr(err))
	}
	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusCompleted || run.CompletedAt == 0 || run.Usage.TotalTokens == 0 {
		t.Fatalf("want completed with usage, got %s", run.RawJSON())
	}

	msgs, err := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 {
		t.Fatalf("messages: %v %s", apiErr(err), msgs.RawJSON())
	}
	answer := msgs.Data[0]
	if answer.Role != "assistant" || answer.Content[0].Text.Value != "It is sunny in Paris." || answer.RunID != run.ID || answer.AssistantID != a.ID {
		t.Fatalf("answer: %s", answer.RawJSON())
	}

	// The real provider path: the second model call carried the tool call and its output.
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model calls, got %d", len(reqs))
	}
	if reqs[0].Messages[0].Role != "system" || reqs[0].Messages[0].Content != "You help." || len(reqs[0].Tools) != 1 {
		t.Fatalf("first model call: %+v", reqs[0])
	}
	last := reqs[1].Messages
	if n := len(last); n < 2 || last[n-1].Role != "tool" || last[n-1].ToolCallID != "call_weather_1" || last[n-1].Content != "sunny, 24C" ||
		len(last[n-2].ToolCalls) != 1 || last[n-2].ToolCalls[0].ID != "call_weather_1" {
		t.Fatalf("second model call: %+v", last)
	}

	steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{Order: openai.BetaThreadRunStepListParamsOrderAsc})
	if err != nil || len(steps.Data) != 2 {
		t.Fatalf("steps: %v %s", apiErr(err), steps.RawJSON())
	}
	tool, msg := steps.Data[0], steps.Data[1]
	if tool.Type != "tool_calls" || tool.Status != "completed" || len(tool.StepDetails.ToolCalls) != 1 ||
		tool.StepDetails.ToolCalls[0].Function.Output != "sunny, 24C" || tool.Usage.TotalTokens == 0 {
		t.Fatalf("tool step: %s", tool.RawJSON())
	}
	if msg.Type != "message_creation" || msg.Status != "completed" || msg.CompletedAt == 0 || msg.StepDetails.MessageCreation.MessageID != answer.ID {
		t.Fatalf("message step: %s", msg.RawJSON())
	}
	if run.Usage.TotalTokens != tool.Usage.TotalTokens+msg.Usage.TotalTokens {
		t.Fatalf("run usage %d is not the sum of its steps' %d + %d", run.Usage.TotalTokens, tool.Usage.TotalTokens, msg.Usage.TotalTokens)
	}
	got, err := e.client.Beta.Threads.Runs.Steps.Get(ctx, th.ID, run.ID, msg.ID, openai.BetaThreadRunStepGetParams{})
	if err != nil || got.ID != msg.ID {
		t.Fatalf("get step: %v", apiErr(err))
	}
}

func TestStreamingRunEventOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("").WithChunks("Hello", " there", ", friend."))
	a := e.assistant(t)
	th := e.thread(t, "hi")

	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	var names []string
	var text strings.Builder
	var final openai.Message
	for stream.Next() {
		ev := stream.Current()
		names = append(names, ev.Event)
		switch v := ev.AsAny().(type) {
		case openai.AssistantStreamEventThreadMessageDelta:
			for _, c := range v.Data.Delta.Content {
				text.WriteString(c.Text.Value)
			}
		case openai.AssistantStreamEventThreadMessageCompleted:
			final = v.Data
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", apiErr(err))
	}
	want := []string{"thread.run.created", "thread.run.queued", "thread.run.in_progress", "thread.run.step.created",
		"thread.run.step.in_progress", "thread.message.created", "thread.message.in_progress"}
	if len(names) < len(want)+4 || !slices.Equal(names[:len(want)], want) {
		t.Fatalf("stream starts %v", names)
	}
	tail := []string{"thread.message.completed", "thread.run.step.completed", "thread.run.completed"}
	if !slices.Equal(names[len(names)-3:], tail) {
		t.Fatalf("stream ends %v", names)
	}
	for _, n := range names[len(want) : len(names)-3] {
		if n != "thread.message.delta" {
			t.Fatalf("between the message's start and its end only deltas come: %v", names)
		}
	}
	if text.String() != "Hello there, friend." || final.Content[0].Text.Value != "Hello there, friend." {
		t.Fatalf("deltas %q, final %s", text.String(), final.RawJSON())
	}
}

// TestAStreamSendsWhatItHasWhileTheModelThinks: the stream writes events as they come, not when the run ends. The
// model sends one chunk and then stalls: the client reads every event up to that chunk's delta meanwhile.
func TestAStreamSendsWhatItHasWhileTheModelThinks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("").WithChunks("Thinking", " about it").HangAfter(1))
	a := e.assistant(t)
	th := e.thread(t, "hi")
	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	defer stream.Close()
	var names []string
	var runID string
	for stream.Next() {
		ev := stream.Current()
		names = append(names, ev.Event)
		if ev.Event == "thread.run.created" {
			runID = ev.Data.ID
		}
		if d, ok := ev.AsAny().(openai.AssistantStreamEventThreadMessageDelta); ok && d.Data.Delta.Content[0].Text.Value == "Thinking" {
			break
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v (events %v)", apiErr(err), names)
	}
	if len(names) < 2 || names[0] != "thread.run.created" || names[len(names)-1] != "thread.message.delta" {
		t.Fatalf("events before the model stalled: %v", names)
	}
	// The run is still waiting on the model: cancelling it is what ends it.
	if _, err := e.client.Beta.Threads.Runs.Cancel(ctx, th.ID, runID); err != nil {
		t.Fatalf("cancel: %v", apiErr(err))
	}
	if r := e.waitRun(t, th.ID, runID); r.Status != openai.RunStatusCancelled {
		t.Fatalf("run after the cancel: %s", r.RawJSON())
	}
}

func TestStreamingToolCallsAndSubmit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Lisbon, Portugal"}`}),
		llmtest.Text("Warm in Lisbon."),
	)
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "Weather in Lisbon?")

	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	var names []string
	var args strings.Builder
	var runID string
	for stream.Next() {
		ev := stream.Current()
		names = append(names, ev.Event)
		switch v := ev.AsAny().(type) {
		case openai.AssistantStreamEventThreadRunStepDelta:
			for _, c := range v.Data.Delta.StepDetails.ToolCalls {
				args.WriteString(c.Function.Arguments)
			}
		case openai.AssistantStreamEventThreadRunRequiresAction:
			runID = v.Data.ID
			if c := v.Data.RequiredAction.SubmitToolOutputs.ToolCalls; len(c) != 1 || c[0].ID != "call_w" {
				t.Fatalf("required action: %s", v.Data.RawJSON())
			}
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream: %v", apiErr(err))
	}
	head := []string{"thread.run.created", "thread.run.queued", "thread.run.in_progress", "thread.run.step.created", "thread.run.step.in_progress"}
	if !slices.Equal(names[:len(head)], head) || names[len(names)-1] != "thread.run.requires_action" {
		t.Fatalf("tool-call stream: %v", names)
	}
	for _, n := range names[len(head) : len(names)-1] {
		if n != "thread.run.step.delta" {
			t.Fatalf("between the step's start and requires_action only step deltas come: %v", names)
		}
	}
	if args.String() != `{"city":"Lisbon, Portugal"}` {
		t.Fatalf("argument deltas add up to %q", args.String())
	}

	sub := e.client.Beta.Threads.Runs.SubmitToolOutputsStreaming(ctx, th.ID, runID, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String("call_w"), Output: openai.String("27C")}},
	})
	names = nil
	for sub.Next() {
		names = append(names, sub.Current().Event)
	}
	if err := sub.Err(); err != nil {
		t.Fatalf("submit stream: %v", apiErr(err))
	}
	head = []string{"thread.run.step.completed", "thread.run.queued", "thread.run.in_progress"}
	if len(names) < 4 || !slices.Equal(names[:len(head)], head) || names[len(names)-1] != "thread.run.completed" {
		t.Fatalf("submit stream: %v", names)
	}
}

func TestCreateThreadAndRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("Four."))
	a := e.assistant(t)
	run, err := e.client.Beta.Threads.NewAndRun(ctx, openai.BetaThreadNewAndRunParams{
		AssistantID: a.ID,
		Thread: openai.BetaThreadNewAndRunParamsThread{Messages: []openai.BetaThreadNewAndRunParamsThreadMessage{
			{Role: "user", Content: openai.BetaThreadNewAndRunParamsThreadMessageContentUnion{OfString: openai.String("2+2?")}}}},
		Instructions: openai.String("Be terse."),
	})
	if err != nil {
		t.Fatalf("create thread and run: %v", apiErr(err))
	}
	if run.Instructions != "Be terse." {
		t.Fatalf("instructions override: %s", run.RawJSON())
	}
	run = e.waitRun(t, run.ThreadID, run.ID)
	if run.Status != openai.RunStatusCompleted {
		t.Fatalf("run: %s", run.RawJSON())
	}
	msgs, err := e.client.Beta.Threads.Messages.List(ctx, run.ThreadID, openai.BetaThreadMessageListParams{RunID: openai.String(run.ID)})
	if err != nil || len(msgs.Data) != 1 || msgs.Data[0].Content[0].Text.Value != "Four." {
		t.Fatalf("messages of the run: %v %s", apiErr(err), msgs.RawJSON())
	}
	if got := e.model.Requests()[0].Messages; got[0].Content != "Be terse." || got[1].Content != "2+2?" {
		t.Fatalf("model saw %+v", got)
	}

	// Streaming create thread-and-run starts with thread.created.
	e.model.Enqueue(llmtest.Text("Five."))
	stream := e.client.Beta.Threads.NewAndRunStreaming(ctx, openai.BetaThreadNewAndRunParams{AssistantID: a.ID})
	var names []string
	for stream.Next() {
		names = append(names, stream.Current().Event)
	}
	if err := stream.Err(); err != nil || len(names) < 3 || names[0] != "thread.created" || names[1] != "thread.run.created" ||
		names[len(names)-1] != "thread.run.completed" {
		t.Fatalf("stream %v: %v", names, err)
	}
}

func TestCancelRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	// The model stalls after its first words: the run stays in progress until it is cancelled.
	e.model.Enqueue(llmtest.Text("Let me think about this for a very long time").HangAfter(1))
	a := e.assistant(t)
	th := e.thread(t, "Think.")
	run := e.run(t, th.ID, a.ID)
	waittest.Until(t, "the run inside its model call", func() bool { return len(e.model.Requests()) == 1 })

	// While it runs, the thread takes neither another run nor a message, as OpenAI answers.
	_, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	ae := wantAPIError(t, err, http.StatusBadRequest, "")
	if ae.Message != "Thread "+th.ID+" already has an active run "+run.ID+"." {
		t.Fatalf("active run: %s", ae.RawJSON())
	}
	_, err = e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("more")}})
	wantAPIError(t, err, http.StatusBadRequest, "")

	run, err = e.client.Beta.Threads.Runs.Cancel(ctx, th.ID, run.ID)
	if err != nil {
		t.Fatalf("cancel: %v", apiErr(err))
	}
	if run.Status != openai.RunStatusCancelling && run.Status != openai.RunStatusCancelled {
		t.Fatalf("after cancel: %s", run.RawJSON())
	}
	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusCancelled || run.CancelledAt == 0 {
		t.Fatalf("want cancelled: %s", run.RawJSON())
	}
	msgs, _ := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if len(msgs.Data) != 1 {
		t.Fatalf("a cancelled turn records no message: %s", msgs.RawJSON())
	}
	_, err = e.client.Beta.Threads.Runs.Cancel(ctx, th.ID, run.ID)
	wantAPIError(t, err, http.StatusBadRequest, "")

	// Cancelling a run waiting for tool outputs works too, and the thread takes a new run afterwards.
	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{Name: "get_weather", Arguments: `{"city":"Oslo"}`}))
	b := e.assistant(t, weatherTool())
	run = e.run(t, th.ID, b.ID)
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusRequiresAction {
		t.Fatalf("want requires_action: %s", run.RawJSON())
	}
	if _, err := e.client.Beta.Threads.Runs.Cancel(ctx, th.ID, run.ID); err != nil {
		t.Fatalf("cancel: %v", apiErr(err))
	}
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusCancelled {
		t.Fatalf("want cancelled: %s", run.RawJSON())
	}
	steps, _ := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	if len(steps.Data) != 1 || steps.Data[0].Status != "cancelled" || steps.Data[0].CancelledAt == 0 {
		t.Fatalf("the waiting step is cancelled with its run: %s", steps.RawJSON())
	}
}

func TestFilesUploadAndDownload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	content := bytes.Repeat([]byte("contrail files go to the object store\n"), 10000) // several chunks
	f, err := e.client.Files.New(ctx, openai.FileNewParams{File: openai.File(bytes.NewReader(content), "notes.txt", "text/plain"),
		Purpose: openai.FilePurposeAssistants})
	if err != nil {
		t.Fatalf("upload: %v", apiErr(err))
	}
	if !strings.HasPrefix(f.ID, "file-") || f.Object != "file" || f.Bytes != int64(len(content)) || f.Filename != "notes.txt" ||
		f.Purpose != "assistants" || f.Status != "processed" || f.CreatedAt == 0 {
		t.Fatalf("file: %s", f.RawJSON())
	}
	got, err := e.client.Files.Get(ctx, f.ID)
	if err != nil || got.ID != f.ID {
		t.Fatalf("get: %v", apiErr(err))
	}
	list, err := e.client.Files.List(ctx, openai.FileListParams{Purpose: openai.String("assistants")})
	if err != nil || len(list.Data) != 1 || list.Data[0].ID != f.ID {
		t.Fatalf("list: %v %s", apiErr(err), list.RawJSON())
	}
	resp, err := e.client.Files.Content(ctx, f.ID)
	if err != nil {
		t.Fatalf("content: %v", apiErr(err))
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Equal(body, content) {
		t.Fatalf("downloaded %d bytes, uploaded %d", len(body), len(content))
	}
	del, err := e.client.Files.Delete(ctx, f.ID)
	if err != nil || !del.Deleted || del.Object != "file" {
		t.Fatalf("delete: %v", apiErr(err))
	}
	_, err = e.client.Files.Content(ctx, f.ID)
	ae := wantAPIError(t, err, http.StatusNotFound, "id")
	if ae.Message != "No such File object: "+f.ID {
		t.Fatalf("deleted file: %s", ae.RawJSON())
	}
}

// TestStreamClientLeaves: a client that stops reading a stream does not stop the run.
func TestStreamClientLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("").WithChunks("slowly", " but", " surely").WithDelay(200 * time.Millisecond))
	a := e.assistant(t)
	th := e.thread(t, "hi")
	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	if !stream.Next() || stream.Current().Event != "thread.run.created" {
		t.Fatalf("first event: %v", stream.Err())
	}
	runID := stream.Current().Data.ID
	stream.Close()
	if r := e.waitRun(t, th.ID, runID); r.Status != openai.RunStatusCompleted {
		t.Fatalf("run after its client left: %s", r.RawJSON())
	}
	msgs, _ := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if msgs.Data[0].Content[0].Text.Value != "slowly but surely" {
		t.Fatalf("answer: %s", msgs.RawJSON())
	}
}
