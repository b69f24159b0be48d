package commands_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// A command returns what it appended without waiting for any read model: with the read models stopped, each
// returns at once with its events and their stream sequences, and only the read-side helper, asked to wait for a
// model that stands still, gives up with the deadline error.
func TestCommandsReturnWhatTheyAppendedWithoutWaitingForReadModels(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	n.Views.Stop()
	ctx := context.Background()
	type step struct {
		name  string
		types []string
		res   eventstore.Appended
		err   error
	}
	var steps []step
	add := func(name string, res eventstore.Appended, err error, types ...string) {
		steps = append(steps, step{name, types, res, err})
	}

	_, res, err := n.Commands.Assistants.Create(ctx, p, events.AssistantSpec{Model: "offline"})
	add("create assistant", res, err, "assistant.created")
	threadID, res, err := n.Commands.Threads.Create(ctx, p, commands.NewThread{Metadata: map[string]string{"k": "v"}})
	add("create thread", res, err, "thread.created")
	_, res, err = n.Commands.Threads.CreateMessage(ctx, p, threadID, commands.NewMessage{Role: "user",
		Content: []events.ContentPart{{Type: "text", Text: "hi"}}})
	add("create message", res, err, "thread.message_created")
	res, err = n.Commands.Threads.Modify(ctx, p, threadID, map[string]string{"k": "w"}, true, nil)
	add("modify thread", res, err, "thread.modified")
	limits, err := n.Commands.Accounts.SetLimits(ctx, auth.Principal{AccountID: commands.AdminAccountID}, p.AccountID, 7, 0)
	add("set limits", limits, err, "account.limits_changed")
	url, queries := "http://127.0.0.1:9/", []string{"what do my notes say?"}
	change, err := n.Commands.Agents.Register(ctx, p, commands.AgentInput{Handle: "notes", QueryURL: &url, Queries: &queries})
	add("register agent", change.Appended, err, "agent.registered")

	// A command that waited for its model would have failed with the deadline error, as they did before.
	for _, s := range steps {
		if s.err != nil {
			t.Fatalf("%s with the read models stopped: %v", s.name, s.err)
		}
		if len(s.res.Events) != len(s.types) {
			t.Fatalf("%s appended %d events, want %v", s.name, len(s.res.Events), s.types)
		}
		for i, e := range s.res.Events {
			if e.Type != s.types[i] || e.Sequence == 0 {
				t.Errorf("%s: event %d is %s at sequence %d, want %s at a stream sequence", s.name, i, e.Type, e.Sequence, s.types[i])
			}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := n.Views.Shows(wctx, steps[0].res, projections.Assistants{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting for a model that stands still: %v, want the deadline error", err)
	}
}
