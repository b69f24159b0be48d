package openaiapi_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
)

// waitResponse polls a response, as a client of background mode does, until it leaves queued and in_progress.
func waitResponse(t *testing.T, c openai.Client, id string) *responses.Response {
	t.Helper()
	ctx := ctxFor(t)
	for {
		r, err := c.Responses.Get(ctx, id, responses.ResponseGetParams{})
		if err != nil {
			t.Fatalf("poll response %s: %v", id, apiErr(err))
		}
		if r.Status != "queued" && r.Status != "in_progress" {
			return r
		}
		select {
		case <-ctx.Done():
			t.Fatalf("response %s still %s", id, r.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func TestResponsesBackgroundAndCancel(t *testing.T) {
	e := newEnv(t)
	ctx := ctxFor(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.LastMessage().Content, "forever") {
			return llmtest.Text("never finished").HangAfter(1)
		}
		return llmtest.Text("done in the background")
	})
	r, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("work"), Background: openai.Bool(true)})
	if err != nil || r.Status != "queued" || !r.Background {
		t.Fatalf("create: %v: %s", apiErr(err), raw(r))
	}
	if got := waitResponse(t, e.client, r.ID); got.Status != "completed" || got.OutputText() != "done in the background" {
		t.Fatalf("background response: %s", got.RawJSON())
	}

	slow, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("forever"), Background: openai.Bool(true)})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	waittest.Until(t, "the slow response inside its model call", func() bool { return len(e.model.Requests()) == 2 }) // inside its model call
	c, err := e.client.Responses.Cancel(ctx, slow.ID)
	if err != nil || c.Status != "cancelled" {
		t.Fatalf("cancel: %v: %s", apiErr(err), raw(c))
	}
	if got := waitResponse(t, e.client, slow.ID); got.Status != "cancelled" || len(got.Output) != 0 {
		t.Fatalf("cancelled response: %s", got.RawJSON())
	}
	// The stream of a background response replays queued, then in_progress, from the log.
	replay := e.client.Responses.GetStreaming(ctx, r.ID, responses.ResponseGetParams{})
	var types []string
	for replay.Next() {
		types = append(types, replay.Current().Type)
	}
	if replay.Err() != nil || strings.Join(types[:3], ",") != "response.created,response.queued,response.in_progress" ||
		types[len(types)-1] != "response.completed" {
		t.Fatalf("replay: %v %q", replay.Err(), types)
	}

	// A response that is not in background mode cannot be cancelled.
	e.model.HandleFunc(func(llmtest.Request) llmtest.Reply { return llmtest.Text("quick") })
	fg, err := e.client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("x")})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	_, err = e.client.Responses.Cancel(ctx, fg.ID)
	wantAPIError(t, err, 400, "")
}

// TestCrashMidResponse kills a node while background responses wait on the model and one streamed response is
// half told, starts another node on the same data, and checks the promise: every response completes, each with
// its one message, recorded once in the log, and the stream replays whole from the new node.
func TestCrashMidResponse(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	var restarted atomic.Bool
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		q := req.LastMessage().Content
		if !restarted.Load() {
			return llmtest.Text("Half of an answer that").HangAfter(2) // the first words out, the rest never comes
		}
		return llmtest.Text("Answer to: " + q)
	})
	dir := t.TempDir()
	withModel := platformtest.WithConfig(func(c *config.Config) { c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test" })
	n := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	_, key := n.NewAccount(t, "survivor")
	client := sdk(n, key)
	ctx := ctxFor(t)
	var ids []string
	for i := 0; i < 3; i++ {
		r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini",
			Input: textInput(fmt.Sprintf("question %d", i)), Background: openai.Bool(true)})
		if err != nil {
			t.Fatal(apiErr(err))
		}
		ids = append(ids, r.ID)
	}
	// A streamed one too: its client is cut off by the crash.
	streamCtx, stopStream := context.WithCancel(ctx)
	defer stopStream()
	stream := client.Responses.NewStreaming(streamCtx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("streamed")})
	if !stream.Next() || stream.Current().Type != "response.created" {
		t.Fatalf("stream: %v", stream.Err())
	}
	ids = append(ids, stream.Current().Response.ID)
	waittest.Until(t, "every response inside its model call", func() bool { return len(model.Requests()) >= 4 }) // every response is inside its model call

	n.Crash()
	restarted.Store(true)
	n2 := platformtest.Start(t, platformtest.WithDataDir(dir), withModel)
	client2 := sdk(n2, key)
	for _, id := range ids {
		r := waitResponse(t, client2, id)
		if r.Status != "completed" || len(r.Output) != 1 || !strings.HasPrefix(r.OutputText(), "Answer to: ") {
			t.Fatalf("response %s after the restart: %s", id, r.RawJSON())
		}
		history, _, err := n2.Store.Load(ctx, events.Ref{Type: "response", ID: id})
		if err != nil {
			t.Fatal(err)
		}
		items, ends := 0, 0
		for _, e := range history {
			switch e.Event.(type) {
			case events.ResponseItemAdded:
				items++
			case events.ResponseCompleted:
				ends++
			}
		}
		if items != 1 || ends != 1 {
			t.Fatalf("the log of %s holds %d items and %d ends", id, items, ends)
		}
	}
	// The streamed response replays from the new node, whole, from its first event.
	replay := client2.Responses.GetStreaming(ctx, ids[3], responses.ResponseGetParams{})
	var text string
	var last string
	for replay.Next() {
		ev := replay.Current()
		if ev.Type == "response.output_text.delta" {
			text += ev.Delta
		}
		last = ev.Type
	}
	if replay.Err() != nil || last != "response.completed" || text != "Answer to: streamed" {
		t.Fatalf("replay after the restart: %v, %q, ends with %s", replay.Err(), text, last)
	}
}

// TestResponsesTwoNodes: two nodes share one NATS. Responses made on either are driven once each by whichever
// node's loop takes them, and one streamed on the first node replays, frame for frame, from the second.
func TestResponsesTwoNodes(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		return llmtest.Text("Answer to " + req.LastMessage().Content).WithDelay(20 * time.Millisecond)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	withModel := platformtest.WithConfig(func(c *config.Config) { c.OpenAIBaseURL, c.OpenAIAPIKey = model.URL, "sk-test" })
	n1 := platformtest.Start(t, withModel, platformtest.WithConfig(func(c *config.Config) { c.NATSListen, c.NATSListenSet = addr, true }))
	n2 := platformtest.Start(t, withModel, platformtest.WithConfig(func(c *config.Config) { c.NATSURL = "nats://" + addr }))
	_, key := n1.NewAccount(t, "two")
	c1, c2 := sdk(n1, key), sdk(n2, key)
	ctx := ctxFor(t)

	var ids []string
	for i := 0; i < 8; i++ {
		c := c1
		if i%2 == 1 {
			c = c2
		}
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput(fmt.Sprintf("q%d", i)),
			Background: openai.Bool(true)})
		if err != nil {
			t.Fatal(apiErr(err))
		}
		ids = append(ids, r.ID)
	}
	for i, id := range ids {
		if r := waitResponse(t, c2, id); r.Status != "completed" || r.OutputText() != fmt.Sprintf("Answer to q%d", i) {
			t.Fatalf("response %s: %s", id, r.RawJSON())
		}
	}
	if got := len(model.Requests()); got != len(ids) {
		t.Fatalf("the model was asked %d times for %d responses", got, len(ids))
	}

	stream := c1.Responses.NewStreaming(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("streamed")})
	var first []string
	var id string
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "response.created" {
			id = ev.Response.ID
		}
		first = append(first, ev.RawJSON())
	}
	if stream.Err() != nil {
		t.Fatal(stream.Err())
	}
	replay := c2.Responses.GetStreaming(ctx, id, responses.ResponseGetParams{})
	var again []string
	for replay.Next() {
		again = append(again, replay.Current().RawJSON())
	}
	if replay.Err() != nil || len(again) != len(first) {
		t.Fatalf("replay on the other node: %v, %d frames, want %d", replay.Err(), len(again), len(first))
	}
	for i := range first {
		if again[i] != first[i] {
			t.Fatalf("frame %d differs:\n%s\n%s", i, first[i], again[i])
		}
	}
}

// TestCrashMidCodeInterpreterCall kills the node while a response's code runs in the sandbox, before its item is
// recorded, and starts another node on the same data: the call was recorded as started, so the turn is not done
// again (the model is not asked for the code again, nor is the code run again): the call is recorded as failed,
// interrupted by the restart, and the model reads that.
func TestCrashMidCodeInterpreterCall(t *testing.T) {
	t.Parallel()
	if !canSandbox() {
		t.Skip("no sandbox on this machine (`make deps` installs bubblewrap)")
	}
	c := startSleepingCoder(t)
	model, key := c.model, c.key
	ctx := ctxFor(t)
	client := sdk(c.node, key)
	tool := responses.ToolUnionParam{OfCodeInterpreter: &responses.ToolCodeInterpreterParam{
		Container: responses.ToolCodeInterpreterContainerUnionParam{OfCodeInterpreterToolAuto: &responses.ToolCodeInterpreterContainerCodeInterpreterContainerAutoParam{}}}}
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-4o-mini", Input: textInput("sleep"),
		Background: openai.Bool(true), Tools: []responses.ToolUnionParam{tool}})
	if err != nil {
		t.Fatal(apiErr(err))
	}
	waittest.Until(t, "the call's container", func() bool { // the call's container is made: the code runs, or is about to
		list, err := client.Containers.List(ctx, openai.ContainerListParams{})
		return err == nil && len(list.Data) == 1
	})
	n2 := c.crashAndRestart(t)
	done := waitResponse(t, sdk(n2, key), r.ID)
	if done.Status != "completed" || strings.Join(itemTypes(done.Output), ",") != "code_interpreter_call,message" {
		t.Fatalf("after the restart: %s", done.RawJSON())
	}
	if ci := done.Output[0]; ci.Status != "failed" || ci.Code != "import time\ntime.sleep(600)" {
		t.Errorf("the interrupted call: %s", ci.RawJSON())
	}
	if !strings.HasPrefix(done.OutputText(), "Told: The call was interrupted by a restart") {
		t.Errorf("the model read: %q", done.OutputText())
	}
	if got := len(model.Requests()); got != 2 {
		t.Errorf("the model was asked %d times, want twice (the code once, then its output)", got)
	}
}
