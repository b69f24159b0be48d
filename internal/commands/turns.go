package commands

import (
	"context"
	"errors"
	"time"

	"github.com/contrailhq/contrail/events"
)

// The run worker's side of a run. Its commands take the thread as the worker holds it (nil to read it from the log)
// and return it as it is after their append.
//
// A run makes progress in turns: a turn starts when the worker puts a queued run
// in progress (RunStarted), asks the model once, and records the answer. Everything a turn records has an ID
// derived from the turn's RunStarted event, and a turn's first recorded event holds all that the rest of it needs,
// so that a turn interrupted by a crash is finished from the log alone and one interrupted before it recorded
// anything is asked again: no message or step is ever recorded twice.

// RunRef names a run for the workers that drive it (they act for the platform, not for a key).
type RunRef struct {
	Account  string
	ThreadID string
	RunID    string
}

// Actors recorded on the events the platform appends on its own.
const (
	ActorRunWorker = "run_worker"
	ActorSweeper   = "sweeper"
)

// TurnMessageID is the ID of the message a turn writes.
func TurnMessageID(turn string) string { return "msg_" + events.DeriveID(turn, "message") }

// TurnMessageStepID is the ID of the step that records a turn's message.
func TurnMessageStepID(turn string) string { return "step_" + events.DeriveID(turn, "message-step") }

// TurnToolStepID is the ID of the step that records a turn's tool calls.
func TurnToolStepID(turn string) string { return "step_" + events.DeriveID(turn, "tool-step") }

// TurnResult is the model's answer in one turn.
type TurnResult struct {
	Text      string
	ToolCalls []events.ToolCall
	Usage     events.TokenUsage
	// Incomplete, when set, ends the run incomplete for this reason ("max_completion_tokens"); the message is
	// then incomplete too.
	Incomplete string
	// Annotations are the text's file citations.
	Annotations []events.Annotation
	// Images are files (code_interpreter's charts) the message shows after its text.
	Images []string
}

// maxAdvanceAttempts bounds how often advance decides again after a conflict before it gives up (the caller
// retries later).
const maxAdvanceAttempts = 10

// advance decides on the thread as the caller holds it (t, or the log's when t is nil) and appends what decide
// returns, expecting the thread's version, so a worker that already holds the thread pays no load to move its run
// on. On a conflict it reloads and decides again. It returns the thread after the append. A thread that is gone or
// a run it does not hold makes nothing to do.
func (c *Commands) advance(ctx context.Context, ref RunRef, t *Thread, actor, cause string, decide func(*Thread, *ThreadRun) []events.Event) (*Thread, error) {
	if !validID(ref.ThreadID) {
		return &Thread{}, nil
	}
	meta := events.Meta{Account: ref.Account, Actor: actor, CorrelationID: ref.RunID, CausationID: cause}
	for attempt := 1; ; attempt++ {
		if t == nil {
			var err error
			if t, err = c.LoadThread(ctx, ref.ThreadID); err != nil {
				return nil, err
			}
		}
		r := t.Runs[ref.RunID]
		if !t.Exists || t.Deleted || r == nil {
			return t, nil
		}
		evs := decide(t, r)
		if len(evs) == 0 {
			return t, nil
		}
		res, err := c.store.Append(ctx, threadRef(ref.ThreadID), t.Version, meta, evs...)
		if errors.Is(err, events.ErrConflict) && attempt < maxAdvanceAttempts {
			t = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		if res.Version.Count != t.Version.Count+uint64(len(evs)) {
			// A repeated append found its events already in the log among others: read the thread whole.
			return c.LoadThread(ctx, ref.ThreadID)
		}
		for _, e := range res.Events {
			if e.Event != nil {
				t.Apply(e)
			}
		}
		t.Version = res.Version
		return t, nil
	}
}

// StartRun puts a queued run in progress: the start of a turn. A run in any other status is left as it is.
func (c *Commands) StartRun(ctx context.Context, ref RunRef, t *Thread) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, "", func(_ *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusQueued {
			return nil
		}
		return []events.Event{events.WithID(events.DeriveID(r.QueuedBy, "started"), events.RunStarted{RunID: r.RunID})}
	})
}

// RecordedTurn rebuilds the answer of the run's current turn from the log when the turn recorded its first event
// before it was interrupted; it reports false when the turn recorded nothing (the model must be asked).
func (t *Thread) RecordedTurn(r *ThreadRun) (TurnResult, bool) {
	if r.Turn == "" {
		return TurnResult{}, false
	}
	var res TurnResult
	found := false
	if s := t.Steps[TurnToolStepID(r.Turn)]; s != nil {
		res.ToolCalls, found = s.ToolCalls, true
		if s.Usage != nil {
			res.Usage = *s.Usage
		}
	}
	if m := t.Messages[TurnMessageID(r.Turn)]; m != nil {
		res.Text, found = m.Text(), true
		if m.Usage != nil {
			res.Usage = *m.Usage
		}
		if m.Status == events.MessageStatusIncomplete {
			res.Incomplete = "max_completion_tokens"
		}
	}
	return res, found
}

// RecordTurn records a turn's answer: a tool-calls step and requires_action when the model called tools, a message
// (and its step) when it wrote text, and the end of the run when it is done. Only what the log does not hold yet is
// appended, and nothing at all when the run has left the turn (cancelled, expired) meanwhile.
//
// The first event holds the answer's substance (the tool calls, or the message's text) with the call's usage. When
// an answer has both, the tool calls come first: after a crash right after them the run still gets what it needs to
// go on, and only the text said alongside the calls is lost.
func (c *Commands) RecordTurn(ctx context.Context, ref RunRef, t *Thread, turn string, res TurnResult) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return turnEvents(t, r, turn, res)
	})
}

func turnEvents(t *Thread, r *ThreadRun, turn string, res TurnResult) []events.Event {
	var evs []events.Event
	add := func(label string, e events.Event) { evs = append(evs, events.WithID(events.DeriveID(turn, label), e)) }
	usage := res.Usage
	usageAt := func() *events.TokenUsage { u := usage; return &u }
	newUsage := events.TokenUsage{}
	toolStep, msgStep, msgID := TurnToolStepID(turn), TurnMessageStepID(turn), TurnMessageID(turn)
	if len(res.ToolCalls) > 0 {
		if t.Steps[toolStep] == nil {
			add("tool-step", events.StepCreated{StepID: toolStep, RunID: r.RunID, AssistantID: r.AssistantID,
				Type: events.StepTypeToolCalls, ToolCalls: res.ToolCalls, Usage: usageAt()})
			newUsage = usage
		}
		usageAt = func() *events.TokenUsage { return nil } // counted once, on the tool-calls step
	}
	if res.Text != "" || len(res.ToolCalls) == 0 {
		if t.Messages[msgID] == nil {
			status, reason := events.MessageStatusCompleted, ""
			if res.Incomplete != "" {
				status, reason = events.MessageStatusIncomplete, "max_tokens"
			}
			content := []events.ContentPart{{Type: "text", Text: res.Text, Annotations: res.Annotations}}
			for _, id := range res.Images {
				content = append(content, events.ContentPart{Type: "image_file", ImageFile: &events.ImageFile{FileID: id}})
			}
			add("message", events.MessageCreated{MessageID: msgID, Role: "assistant",
				Content: content, AssistantID: r.AssistantID, RunID: r.RunID,
				Status: status, IncompleteReason: reason, StepID: msgStep, Usage: usageAt()})
		}
		if s := t.Steps[msgStep]; s == nil {
			add("message-step", events.StepCreated{StepID: msgStep, RunID: r.RunID, AssistantID: r.AssistantID,
				Type: events.StepTypeMessageCreation, MessageID: msgID, Usage: usageAt()})
			if len(res.ToolCalls) == 0 {
				newUsage = usage
			}
			add("message-step-completed", events.StepCompleted{StepID: msgStep, RunID: r.RunID})
		} else if s.Status == events.StepStatusInProgress {
			add("message-step-completed", events.StepCompleted{StepID: msgStep, RunID: r.RunID})
		}
	}
	total := r.Usage.Add(newUsage)
	switch {
	case len(res.ToolCalls) > 0:
		add("requires-action", events.RunRequiresAction{RunID: r.RunID, StepID: toolStep, ToolCalls: res.ToolCalls})
	case res.Incomplete != "":
		add("incomplete", events.RunIncomplete{RunID: r.RunID, Reason: res.Incomplete, Usage: total})
	default:
		add("completed", events.RunCompleted{RunID: r.RunID, Usage: total})
	}
	return evs
}

// RecordServerTools records a turn whose tool calls the run worker answered itself (file_search): a tool-calls
// step with the calls and what each found, completed at once with their outputs, and the run queued for its next
// turn. One append: a crash before it asks the model again, a crash after it finds the turn recorded.
func (c *Commands) RecordServerTools(ctx context.Context, ref RunRef, t *Thread, turn string, calls []events.ToolCall, outputs []events.ToolOutput, usage events.TokenUsage) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		step := TurnToolStepID(turn)
		if t.Steps[step] != nil {
			return nil
		}
		u := usage
		return []events.Event{
			events.WithID(events.DeriveID(turn, "tool-step"), events.StepCreated{StepID: step, RunID: r.RunID,
				AssistantID: r.AssistantID, Type: events.StepTypeToolCalls, ToolCalls: calls, Usage: &u}),
			events.WithID(events.DeriveID(turn, "server-outputs"), events.RunToolOutputsSubmitted{RunID: r.RunID, StepID: step, Outputs: outputs}),
		}
	})
}

// FailRun ends the run's turn in failure (the model could not answer): code is "server_error",
// "rate_limit_exceeded" or "invalid_prompt".
func (c *Commands) FailRun(ctx context.Context, ref RunRef, t *Thread, turn, code, message string) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return endRun(t, r, events.StepStatusFailed, code, message)
	})
}

// IncompleteRun ends the run's turn before asking the model, because the run's token budget is spent: reason is
// "max_prompt_tokens" or "max_completion_tokens".
func (c *Commands) IncompleteRun(ctx context.Context, ref RunRef, t *Thread, turn, reason string) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(_ *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return []events.Event{events.WithID(events.DeriveID(turn, "incomplete"),
			events.RunIncomplete{RunID: r.RunID, Reason: reason, Usage: r.Usage})}
	})
}

// FinishCancel ends a run that is cancelling: its steps in progress and the run are cancelled.
func (c *Commands) FinishCancel(ctx context.Context, ref RunRef, t *Thread) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, "", func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusCancelling {
			return nil
		}
		return endRun(t, r, events.StepStatusCancelled, "", "")
	})
}

// ExpireRun ends a run still active past its expires_at, with its steps in progress. It reports whether the run
// was expired.
func (c *Commands) ExpireRun(ctx context.Context, ref RunRef, now time.Time) (bool, error) {
	expired := false
	_, err := c.advance(ctx, ref, nil, ActorSweeper, "", func(t *Thread, r *ThreadRun) []events.Event {
		expired = false // decide may run again after a conflict
		if !activeStatus(r.Status) || now.Before(r.ExpiresAt) {
			return nil
		}
		expired = true
		return endRun(t, r, events.StepStatusExpired, "", "")
	})
	return expired && err == nil, err
}
