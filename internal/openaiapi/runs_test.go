package openaiapi_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// TestOfflineModelRun: with no model configured a run still completes, with the offline model's plain answer.
func TestOfflineModelRun(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "offline")
	e := &env{node: n, client: sdk(n, key), key: key}
	ctx := ctxFor(t)
	a := e.assistant(t)
	th := e.thread(t, "What is the capital of France?")
	run := e.run(t, th.ID, a.ID)
	// The assistant keeps the model its owner wrote; the run says which model answered it.
	if run.Model != "offline" || a.Model != "gpt-4o-mini" {
		t.Fatalf("run of an assistant on %q says model %q, want offline: no model server is configured", a.Model, run.Model)
	}
	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusCompleted || run.Usage.CompletionTokens == 0 || run.Model != "offline" {
		t.Fatalf("run: %s", run.RawJSON())
	}
	msgs, _ := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if got := msgs.Data[0].Content[0].Text.Value; got != offline.Notice {
		t.Fatalf("answer: %q", got)
	}
}

func TestTokenBudgetsAndTruncation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	a := e.assistant(t)

	// max_completion_tokens cuts the answer: the run and its message end incomplete, saying why.
	e.model.Enqueue(llmtest.Text("one two three four five six seven eight nine ten eleven twelve"))
	th := e.thread(t, "Count to twelve.")
	run, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID, MaxCompletionTokens: openai.Int(3)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusIncomplete || run.IncompleteDetails.Reason != "max_completion_tokens" || run.MaxCompletionTokens != 3 {
		t.Fatalf("run: %s", run.RawJSON())
	}
	if got := e.model.Requests()[0]; got.MaxTokens != 3 && got.MaxCompletionTokens != 3 {
		t.Fatalf("the model was not told the bound: %+v", got)
	}
	msgs, _ := e.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if m := msgs.Data[0]; m.Status != "incomplete" || m.IncompleteDetails.Reason != "max_tokens" || m.Content[0].Text.Value != "one two three" {
		t.Fatalf("message: %s", m.RawJSON())
	}

	// max_prompt_tokens smaller than the prompt: incomplete before any model call.
	calls := len(e.model.Requests())
	th = e.thread(t, "A question that certainly takes more than five tokens to ask.")
	run, err = e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID, MaxPromptTokens: openai.Int(5)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	run = e.waitRun(t, th.ID, run.ID)
	if run.Status != openai.RunStatusIncomplete || run.IncompleteDetails.Reason != "max_prompt_tokens" || len(e.model.Requests()) != calls {
		t.Fatalf("run: %s (model calls %d -> %d)", run.RawJSON(), calls, len(e.model.Requests()))
	}

	// truncation_strategy last_messages keeps the newest messages of the thread.
	e.model.Enqueue(llmtest.Text("ok"))
	th, err = e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{
		{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("oldest")}},
		{Role: "assistant", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("older")}},
		{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("newest")}},
	}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	run, err = e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID,
		TruncationStrategy:     openai.BetaThreadRunNewParamsTruncationStrategy{Type: "last_messages", LastMessages: openai.Int(1)},
		AdditionalInstructions: openai.String("Say ok.")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("run: %s", run.RawJSON())
	}
	reqs := e.model.Requests()
	sent := reqs[len(reqs)-1].Messages
	if len(sent) != 2 || sent[0].Role != "system" || sent[0].Content != "You help.\n\nSay ok." || sent[1].Content != "newest" {
		t.Fatalf("last_messages 1 sent %+v", sent)
	}

	// "auto" truncation drops the oldest messages to fit max_prompt_tokens.
	e.model.Enqueue(llmtest.Text("ok"))
	long := strings.Repeat("many words of old history ", 40)
	th, err = e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Messages: []openai.BetaThreadNewParamsMessage{
		{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String(long)}},
		{Role: "user", Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String("short question")}},
	}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	run, err = e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID, MaxPromptTokens: openai.Int(60)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusCompleted {
		t.Fatalf("run: %s", run.RawJSON())
	}
	reqs = e.model.Requests()
	if sent := reqs[len(reqs)-1].Messages; len(sent) != 2 || sent[1].Content != "short question" {
		t.Fatalf("auto truncation sent %+v", sent)
	}
}

// TestRunsExpire: a run past its expires_at becomes expired, with its steps in progress, whether the model hangs
// or the client never submits its tool outputs.
func TestRunsExpire(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.RunTimeout = 1500 * time.Millisecond }))
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("I will never finish this sentence").HangAfter(2))
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "Go.")
	run := e.run(t, th.ID, a.ID)
	if run.ExpiresAt-run.CreatedAt > 2 {
		t.Fatalf("expires_at does not follow RUN_TIMEOUT: %s", run.RawJSON())
	}
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusExpired {
		t.Fatalf("hung run: %s", run.RawJSON())
	}

	e.model.Enqueue(llmtest.ToolCalls(llm.ToolCall{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Rome"}`}))
	run = e.run(t, th.ID, a.ID)
	if run = e.waitRun(t, th.ID, run.ID); run.Status != openai.RunStatusRequiresAction {
		t.Fatalf("want requires_action: %s", run.RawJSON())
	}
	waittest.Until(t, "the run to expire", func() bool {
		r, err := e.client.Beta.Threads.Runs.Get(ctx, th.ID, run.ID)
		return err == nil && r.Status == openai.RunStatusExpired
	})
	steps, _ := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
	if len(steps.Data) != 1 || steps.Data[0].Status != "expired" || steps.Data[0].ExpiredAt == 0 {
		t.Fatalf("step of the expired run: %s", steps.RawJSON())
	}
	_, err := e.client.Beta.Threads.Runs.SubmitToolOutputs(ctx, th.ID, run.ID, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String("call_1"), Output: openai.String("x")}}})
	wantAPIError(t, err, 400, "")
}

// TestReadModelsRebuild: each read model of the API rebuilt from the log equals the live one.
func TestReadModelsRebuild(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_r", Name: "get_weather", Arguments: `{"city":"Turin"}`}),
		llmtest.Text("Foggy."),
	)
	a := e.assistant(t, weatherTool())
	if _, err := e.client.Beta.Assistants.Update(ctx, a.ID, openai.BetaAssistantUpdateParams{Name: openai.String("renamed")}); err != nil {
		t.Fatal(apiErr(err))
	}
	th := e.thread(t, "Weather in Turin?")
	extra, err := e.client.Beta.Threads.Messages.New(ctx, th.ID, openai.BetaThreadMessageNewParams{Role: "user",
		Content: openai.BetaThreadMessageNewParamsContentUnion{OfString: openai.String("never mind")}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	if _, err := e.client.Beta.Threads.Messages.Delete(ctx, th.ID, extra.ID); err != nil {
		t.Fatal(apiErr(err))
	}
	run := e.run(t, th.ID, a.ID)
	e.waitRun(t, th.ID, run.ID)
	if _, err := e.client.Beta.Threads.Runs.SubmitToolOutputs(ctx, th.ID, run.ID, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String("call_r"), Output: openai.String("fog")}}}); err != nil {
		t.Fatal(apiErr(err))
	}
	if r := e.waitRun(t, th.ID, run.ID); r.Status != openai.RunStatusCompleted {
		t.Fatalf("run: %s", r.RawJSON())
	}
	if _, err := e.client.Files.New(ctx, openai.FileNewParams{File: openai.File(strings.NewReader("x"), "x.txt", "text/plain"), Purpose: "assistants"}); err != nil {
		t.Fatal(apiErr(err))
	}
	waittest.Until(t, "the read models to catch up", func() bool { ok, _, err := e.node.Views.CaughtUp(ctx); return ok && err == nil })
	for _, name := range []string{"assistants", "threads", "messages", "runs", "run_steps", "files"} {
		live, err := e.node.Views.Dump(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) == 0 {
			t.Fatalf("%s: the live model is empty", name)
		}
		if _, err := e.node.Views.Rebuild(ctx, name, nil); err != nil {
			t.Fatalf("rebuild %s: %v", name, err)
		}
		rebuilt, err := e.node.Views.Dump(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(rebuilt) != len(live) {
			t.Fatalf("%s: %d documents live, %d rebuilt", name, len(live), len(rebuilt))
		}
		for k, v := range live {
			if string(rebuilt[k]) != string(v) {
				t.Fatalf("%s/%s:\n live    %s\n rebuilt %s", name, k, v, rebuilt[k])
			}
		}
	}
}

// A streamed run reads its events from the log and waits for no read model: with the read models stopped (as one
// stands still while its bucket elects a leader), it still streams from its creation to its completion.
func TestAStreamedRunStreamsWhileTheReadModelsStandStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("").WithChunks("Still", " here."))
	a := e.assistant(t)
	th := e.thread(t, "hi")
	e.node.Views.Stop()
	stream := e.client.Beta.Threads.Runs.NewStreaming(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	var names []string
	var final openai.Message
	for stream.Next() {
		ev := stream.Current()
		names = append(names, ev.Event)
		if v, ok := ev.AsAny().(openai.AssistantStreamEventThreadMessageCompleted); ok {
			final = v.Data
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatalf("stream with the read models stopped: %v", apiErr(err))
	}
	if len(names) < 2 || names[0] != "thread.run.created" || names[len(names)-1] != "thread.run.completed" {
		t.Fatalf("stream with the read models stopped: %v", names)
	}
	if len(final.Content) != 1 || final.Content[0].Text.Value != "Still here." {
		t.Fatalf("the answer streamed: %s", final.RawJSON())
	}
}

// TestACommittedCreateIsAnsweredWhileTheReadModelsStandStill: with the read models stopped (as one stands still
// while its bucket elects a leader), a thread and a run whose writes went in are answered as made, from the log,
// after the bounded wait, not as a 504 a client would retry into a duplicate.
func TestACommittedCreateIsAnsweredWhileTheReadModelsStandStill(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(llmtest.Text("hi"))
	a := e.assistant(t)
	_, stranger := e.node.NewAccount(t, "stranger")
	e.node.Views.Stop()
	th, err := e.client.Beta.Threads.New(ctx, openai.BetaThreadNewParams{Metadata: shared.Metadata{"k": "v"}})
	if err != nil {
		t.Fatalf("create a thread with the read models stopped: %v", apiErr(err))
	}
	if !strings.HasPrefix(th.ID, "thread_") || th.Metadata["k"] != "v" || th.CreatedAt == 0 {
		t.Fatalf("the thread answered from the log: %s", th.RawJSON())
	}
	run, err := e.client.Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: a.ID})
	if err != nil {
		t.Fatalf("create a run with the read models stopped: %v", apiErr(err))
	}
	if !strings.HasPrefix(run.ID, "run_") || run.ThreadID != th.ID || run.AssistantID != a.ID || run.Object != "thread.run" {
		t.Fatalf("the run answered from the log: %s", run.RawJSON())
	}
	history, _, err := e.node.Store.LoadLatest(ctx, events.Ref{Type: "thread", ID: th.ID})
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, ev := range history {
		if _, ok := ev.Event.(events.RunCreated); ok {
			runs++
		}
	}
	if runs != 1 {
		t.Fatalf("the thread holds %d runs, want the one created", runs)
	}

	// Reading them back while the read models still stand still finds them in the log rather than answering 404;
	// another account still gets 404 for both.
	got, err := e.client.Beta.Threads.Get(ctx, th.ID)
	if err != nil || got.ID != th.ID || got.Metadata["k"] != "v" {
		t.Fatalf("get the thread the read model does not show: %v %v", got, apiErr(err))
	}
	gotRun, err := e.client.Beta.Threads.Runs.Get(ctx, th.ID, run.ID)
	if err != nil || gotRun.ID != run.ID || gotRun.ThreadID != th.ID {
		t.Fatalf("get the run the read model does not show: %v %v", gotRun, apiErr(err))
	}
	for _, path := range []string{"/v1/threads/" + th.ID, "/v1/threads/" + th.ID + "/runs/" + run.ID} {
		if resp := do(t, e.node, stranger, "GET", path, nil); resp.Status != http.StatusNotFound {
			t.Errorf("GET %s as another account: want 404, got %d: %s", path, resp.Status, resp.Body)
		}
	}
}

// TestARunsLockIsLetGoWhenItWaitsAndLeftToExpireWhenItEnds: a run left waiting for tool outputs has its lock deleted
// at once, so that the worker the submission wakes can take it; a run that ended leaves its lock to expire (nothing
// can hand an ended run back), with no delete.
func TestARunsLockIsLetGoWhenItWaitsAndLeftToExpireWhenItEnds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.Enqueue(
		llmtest.ToolCalls(llm.ToolCall{ID: "call_w", Name: "get_weather", Arguments: `{"city":"Lisbon"}`}),
		llmtest.Text("Warm in Lisbon."),
	)
	a := e.assistant(t, weatherTool())
	th := e.thread(t, "Weather in Lisbon?")
	run := e.run(t, th.ID, a.ID)
	if r := e.waitRun(t, th.ID, run.ID); r.Status != openai.RunStatusRequiresAction {
		t.Fatalf("run: %s", r.RawJSON())
	}
	locks, err := e.node.JS.KeyValue(ctx, e.node.Layout.Names.Bucket("run_locks"))
	if err != nil {
		t.Fatal(err)
	}
	// lastOp is the lock's last operation, or 0 once it expired (the bucket keeps a key's entries for the lock's
	// TTL, a second here).
	lastOp := func() jetstream.KeyValueOp {
		h, err := locks.History(ctx, "run."+run.ID)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return h[len(h)-1].Operation()
	}
	for deadline := time.Now().Add(20 * time.Second); lastOp() != jetstream.KeyValueDelete; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the lock of a run waiting for tool outputs was not deleted")
		}
	}
	if _, err := e.client.Beta.Threads.Runs.SubmitToolOutputs(ctx, th.ID, run.ID, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String("call_w"), Output: openai.String("24C")}},
	}); err != nil {
		t.Fatalf("submit: %v", apiErr(err))
	}
	if r := e.waitRun(t, th.ID, run.ID); r.Status != openai.RunStatusCompleted {
		t.Fatalf("run after the outputs: %s", r.RawJSON())
	}
	// The worker's lock of the run's last turn: it expires with no delete before it.
	for op := lastOp(); op != 0; op = lastOp() {
		if op == jetstream.KeyValueDelete {
			t.Fatal("the lock of an ended run was deleted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
