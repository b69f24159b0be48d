package projections_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/projections"
)

// TestFoldingAnAggregateInMemoryMakesWhatTheReadModelHolds: a thread's history folded in memory with the messages
// model's own Apply gives the documents the model wrote for the thread, a modified message's metadata and a
// deleted message's absence included, and nothing of another thread.
func TestFoldingAnAggregateInMemoryMakesWhatTheReadModelHolds(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	n := startNode(t, srv, "n1", projections.Messages{})
	ctx := context.Background()
	text := func(s string) []events.ContentPart { return []events.ContentPart{{Type: "text", Text: s}} }
	meta := events.Meta{Account: "acct_1"}
	res, err := n.store.Append(ctx, events.Ref{Type: "thread", ID: "thread_a"}, events.Version{}, meta,
		events.ThreadCreated{},
		events.MessageCreated{MessageID: "msg_1", Role: "user", Content: text("one"), Status: "completed"},
		events.MessageCreated{MessageID: "msg_2", Role: "assistant", Content: text("two"), RunID: "run_1", Status: "completed"},
		events.MessageCreated{MessageID: "msg_3", Role: "user", Content: text("three"), Status: "completed"},
		events.MessageModified{MessageID: "msg_2", Metadata: map[string]string{"k": "v"}},
		events.MessageDeleted{MessageID: "msg_3"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.store.Append(ctx, events.Ref{Type: "thread", ID: "thread_b"}, events.Version{}, meta,
		events.ThreadCreated{}, events.MessageCreated{MessageID: "msg_4", Role: "user", Content: text("four")}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := n.runner.WaitFor(wctx, "messages", res.LastSeq()); err != nil {
		t.Fatal(err)
	}

	model := map[string]json.RawMessage{}
	if err := n.runner.List(ctx, "messages", "acct_1.thread_a.*", func(key string, raw json.RawMessage) error {
		model[key] = raw
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	history, _, err := n.store.Load(ctx, events.Ref{Type: "thread", ID: "thread_a"})
	if err != nil {
		t.Fatal(err)
	}
	folded, err := projections.FoldAggregate(ctx, projections.Messages{}, history)
	if err != nil {
		t.Fatal(err)
	}
	if len(model) != 2 || len(folded) != len(model) {
		t.Fatalf("the model holds %d of the thread's messages, the fold made %d: want 2", len(model), len(folded))
	}
	for k, raw := range model {
		var want, got projections.Listed[thread.ThreadMessageView]
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(folded[k], &got); err != nil {
			t.Fatalf("%s: %v", k, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s folded in memory: %+v\nthe model: %+v", k, got, want)
		}
	}
	msgs, err := projections.DecodeMatching[projections.Listed[thread.ThreadMessageView]](projections.Messages{},
		folded, "acct_1.thread_a.msg_2")
	if err != nil || len(msgs) != 1 || msgs[0].Obj.Metadata["k"] != "v" || msgs[0].Obj.RunID != "run_1" {
		t.Fatalf("msg_2 folded: %+v %v", msgs, err)
	}
}
