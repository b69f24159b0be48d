package turn_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/openai"
)

func TestAskStopsTheCallWhenItsAggregateMayHaveEnded(t *testing.T) {
	srv := llmtest.NewServer(t)
	models, err := openai.New(srv.URL, "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	req := llm.Request{Model: "gpt-4o-mini", Messages: []llm.Message{{Role: llm.RoleUser, Content: "hi"}}}

	// A whole answer: its pieces streamed as they came, its usage as both APIs record it.
	srv.Enqueue(llmtest.Text("Hello there").WithChunks("Hello", " there").WithUsage(3, 2))
	var pieces turn.Pieces
	resp, err := turn.Ask(ctx, models, req, nil, func(d llm.Delta) { pieces.AddText(d.Text) })
	if err != nil || resp.Text != "Hello there" || !slices.Equal(pieces.Text(), []int{5, 6}) {
		t.Fatalf("answer: %+v, %v, pieces %v", resp, err, pieces.Text())
	}
	if u := turn.Usage(resp.Usage); u != (events.TokenUsage{PromptTokens: 3, CompletionTokens: 2, TotalTokens: 5}) {
		t.Errorf("usage: %+v", u)
	}

	// A stalled model, and the aggregate may have ended (stop closes once the first piece came): the call stops.
	srv.Enqueue(llmtest.Text("a b c").WithChunks("a", " b", " c").HangAfter(1))
	stop := make(chan struct{})
	var once sync.Once
	if _, err := turn.Ask(ctx, models, req, stop, func(llm.Delta) { once.Do(func() { close(stop) }) }); !errors.Is(err, turn.ErrStopped) {
		t.Errorf("stopped: %v", err)
	}

	// The node stopping is not the aggregate ending: the caller gets ctx's error, and leaves the turn to another.
	srv.Enqueue(llmtest.Text("a b c").WithChunks("a", " b", " c").HangAfter(1))
	callCtx, cancel := context.WithCancel(ctx)
	_, err = turn.Ask(callCtx, models, req, make(chan struct{}), func(llm.Delta) { cancel() })
	if !errors.Is(err, context.Canceled) || errors.Is(err, turn.ErrStopped) {
		t.Errorf("node stopping: %v", err)
	}

	// The model's refusal is passed on, named as both APIs name it.
	srv.Enqueue(llmtest.Error(400, "the prompt is too long"))
	if _, err := turn.Ask(ctx, models, req, nil, nil); turn.FailureCode(err) != "invalid_prompt" {
		t.Errorf("refusal: %v", err)
	}
}
