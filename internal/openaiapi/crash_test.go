package openaiapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// TestCrashMidRun kills a node while its runs wait on the model, starts another node on the same data, and checks
// the promise: every run reaches an end or requires_action, and every assistant message exists exactly once, in
// the thread and in the log.
func TestCrashMidRun(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	var restarted atomic.Bool
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		q := req.LastMessage()
		switch {
		case q.Role == "tool":
			return llmtest.Text("The tool said " + q.Content + ".")
		case strings.Contains(q.Content, "weather"):
			return llmtest.ToolCalls(llm.ToolCall{Name: "get_weather", Arguments: `{"city":"Bergen"}`})
		case !restarted.Load() && strings.Contains(q.Content, "slow"):
			// Mid-answer when the node dies: the first words are out, the rest never comes.
			return llmtest.Text("Half of an answer that").HangAfter(2)
		}
		return llmtest.Text("Answer to: " + q.Content)
	})
	dir := t.TempDir()
	withModel := platformtest.WithConfig(func(c *config.Config) { c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test" })
	n := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	_, key := n.NewAccount(t, "survivor")
	e := &env{node: n, model: model, client: sdk(n, key), key: key}
	ctx := ctxFor(t)
	a := e.assistant(t, weatherTool())

	type started struct{ thread, run, question string }
	var runs []started
	create := func(q string) started {
		th := e.thread(t, q)
		run := e.run(t, th.ID, a.ID)
		s := started{th.ID, run.ID, q}
		runs = append(runs, s)
		return s
	}
	done := create("A quick question")
	if r := e.waitRun(t, done.thread, done.run); r.Status != openai.RunStatusCompleted {
		t.Fatalf("run before the crash: %s", r.RawJSON())
	}
	waiting := create("What is the weather?")
	if r := e.waitRun(t, waiting.thread, waiting.run); r.Status != openai.RunStatusRequiresAction {
		t.Fatalf("run before the crash: %s", r.RawJSON())
	}
	for i := 0; i < 4; i++ {
		create(fmt.Sprintf("A slow question %d", i))
	}
	waittest.Until(t, "every slow run inside its model call", func() bool { return len(model.Requests()) >= 6 }) // every slow run is inside its model call

	n.Crash()
	restarted.Store(true)
	n2 := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	e2 := &env{node: n2, model: model, client: sdk(n2, key), key: key}

	for _, s := range runs {
		r := e2.waitRun(t, s.thread, s.run)
		want := openai.RunStatusCompleted
		if s == waiting {
			want = openai.RunStatusRequiresAction
		}
		if r.Status != want {
			t.Fatalf("run %q after the restart: %s", s.question, r.RawJSON())
		}
	}
	// The run that waited for tool outputs still takes them.
	r := e2.waitRun(t, waiting.thread, waiting.run)
	callID := r.RequiredAction.SubmitToolOutputs.ToolCalls[0].ID
	if _, err := e2.client.Beta.Threads.Runs.SubmitToolOutputs(ctx, waiting.thread, waiting.run, openai.BetaThreadRunSubmitToolOutputsParams{
		ToolOutputs: []openai.BetaThreadRunSubmitToolOutputsParamsToolOutput{{ToolCallID: openai.String(callID), Output: openai.String("rain")}},
	}); err != nil {
		t.Fatalf("submit after the restart: %v", apiErr(err))
	}
	if r := e2.waitRun(t, waiting.thread, waiting.run); r.Status != openai.RunStatusCompleted {
		t.Fatalf("run after submit: %s", r.RawJSON())
	}

	for _, s := range runs {
		msgs, err := e2.client.Beta.Threads.Messages.List(ctx, s.thread, openai.BetaThreadMessageListParams{})
		if err != nil {
			t.Fatal(apiErr(err))
		}
		var answers []string
		for _, m := range msgs.Data {
			if m.Role == "assistant" {
				answers = append(answers, m.Content[0].Text.Value)
			}
		}
		if len(answers) != 1 || strings.HasPrefix(answers[0], "Half") {
			t.Fatalf("thread of %q holds answers %q", s.question, answers)
		}
		if got := assistantMessagesInLog(t, n2, s.thread); got != 1 {
			t.Fatalf("the log of the thread of %q holds %d assistant messages", s.question, got)
		}
	}
}

func assistantMessagesInLog(t *testing.T, n *platformtest.Node, threadID string) int {
	t.Helper()
	history, _, err := n.Store.Load(context.Background(), events.Ref{Type: "thread", ID: threadID})
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, e := range history {
		if m, ok := e.Event.(events.MessageCreated); ok && m.Role == "assistant" {
			count++
		}
	}
	return count
}

// TestCrashMidRunCode kills a node while a run's code_interpreter call runs (a real sandbox, sleeping), and starts
// another node on the same data: the call's step, recorded in progress before the code ran, ends with the call
// recorded as interrupted, the model reads that, and the run completes. The code is not run again, nor is the model
// asked for it again.
func TestCrashMidRunCode(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	c := startSleepingCoder(t)
	n, model, key := c.node, c.model, c.key
	e := &env{node: n, model: model, client: sdk(n, key), key: key}
	ctx := ctxFor(t)
	a := e.assistant(t, openai.AssistantToolUnionParam{OfCodeInterpreter: &openai.CodeInterpreterToolParam{}})
	th := e.thread(t, "sleep")
	run := e.run(t, th.ID, a.ID)
	waittest.Until(t, "the call's step in progress", func() bool { // the call's step is recorded in progress: the code runs, or is about to
		steps, err := e.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{})
		return err == nil && len(steps.Data) == 1 && steps.Data[0].Status == openai.RunStepStatusInProgress
	})
	n2 := c.crashAndRestart(t)
	e2 := &env{node: n2, model: model, client: sdk(n2, key), key: key}
	if r := e2.waitRun(t, th.ID, run.ID); r.Status != openai.RunStatusCompleted {
		t.Fatalf("after the restart: %s", r.RawJSON())
	}
	steps, err := e2.client.Beta.Threads.Runs.Steps.List(ctx, th.ID, run.ID, openai.BetaThreadRunStepListParams{Order: openai.BetaThreadRunStepListParamsOrderAsc})
	if err != nil || len(steps.Data) != 2 {
		t.Fatalf("steps: %v %s", apiErr(err), steps.RawJSON())
	}
	calls := steps.Data[0].StepDetails.ToolCalls
	if steps.Data[0].Status != openai.RunStepStatusCompleted || len(calls) != 1 || calls[0].ID != "call_slow" ||
		calls[0].CodeInterpreter.Input != "import time\ntime.sleep(600)" || len(calls[0].CodeInterpreter.Outputs) != 1 ||
		!strings.HasPrefix(calls[0].CodeInterpreter.Outputs[0].Logs, "The call was interrupted by a restart") {
		t.Fatalf("the interrupted call's step: %s", steps.Data[0].RawJSON())
	}
	msgs, err := e2.client.Beta.Threads.Messages.List(ctx, th.ID, openai.BetaThreadMessageListParams{})
	if err != nil || len(msgs.Data) != 2 || !strings.HasPrefix(msgs.Data[0].Content[0].Text.Value, "Told: The call was interrupted by a restart") {
		t.Fatalf("messages: %v %s", apiErr(err), msgs.RawJSON())
	}
	if got := len(model.Requests()); got != 2 {
		t.Errorf("the model was asked %d times, want twice (the code once, then its output)", got)
	}
}

// sleepingCoder is a node whose model asks once for code that sleeps for ten minutes (call_slow), for "ran again"
// if it is asked for code after a restart (call_again), and answers "Told: " and the output it is given.
type sleepingCoder struct {
	node      *platformtest.Node
	model     *llmtest.Server
	key       string
	dir       string
	withModel platformtest.Option
	restarted atomic.Bool
}

func startSleepingCoder(t *testing.T) *sleepingCoder {
	t.Helper()
	c := &sleepingCoder{model: llmtest.NewServer(t), dir: t.TempDir()}
	c.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if last := req.LastMessage(); last.Role == llm.RoleTool {
			return llmtest.Text("Told: " + last.Content)
		}
		if c.restarted.Load() {
			return codeCall("call_again", `print("ran again")`)
		}
		return codeCall("call_slow", "import time\ntime.sleep(600)")
	})
	c.withModel = platformtest.WithConfig(func(cfg *config.Config) { cfg.OpenAIBaseURL, cfg.OpenAIAPIKey = c.model.URL, "sk-test" })
	c.node = platformtest.Start(t, platformtest.WithDataDir(c.dir), c.withModel)
	_, c.key = c.node.NewAccount(t, "coder")
	return c
}

// crashAndRestart kills the node as kill -9 would and starts another on its data.
func (c *sleepingCoder) crashAndRestart(t *testing.T) *platformtest.Node {
	t.Helper()
	c.node.Crash()
	c.restarted.Store(true)
	return platformtest.Start(t, platformtest.WithDataDir(c.dir), c.withModel)
}
