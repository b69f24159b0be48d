package commands

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/domain/thread"
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

// Turns are the run commands of the platform itself: the run worker's (start a turn, record its answer or its
// server tools, fail, end incomplete, finish a cancel) and the sweeper's (expire). The client's run commands are
// Runs'. Both decide on the thread held by Threads' repository.
type Turns struct {
	threads *Threads
}

// RunRef names a run for the workers that drive it (domain/thread's).
type RunRef = thread.RunRef

// Actors recorded on the events the platform appends on its own.
const (
	ActorRunWorker = "run_worker"
	ActorSweeper   = "sweeper"
)

// The IDs of what a turn records.
var (
	TurnMessageID     = thread.TurnMessageID
	TurnMessageStepID = thread.TurnMessageStepID
	TurnToolStepID    = thread.TurnToolStepID
)

// advance decides on the thread and appends what decide returns. The decision is made on the node's copy of the
// thread (the repository's), which holds at least what the caller's t holds, so a worker that already holds the
// thread pays no load to move its run on; a conflict (another node appended) reloads it and decides again. It
// returns the caller's thread (t, or the log's when t is nil) after the append. A thread that is gone or a run it
// does not hold makes nothing to do.
func (c *Turns) advance(ctx context.Context, ref RunRef, t *Thread, actor, cause string, decide func(*Thread, *ThreadRun) []events.Event) (*Thread, error) {
	if !validID(ref.ThreadID) {
		return &Thread{}, nil
	}
	if t == nil {
		var err error
		if t, err = c.Load(ctx, ref.ThreadID); err != nil {
			return nil, err
		}
	}
	meta := events.Meta{Account: ref.Account, Actor: actor, CorrelationID: ref.RunID, CausationID: cause}
	res, err := c.threads.repo.Update(ctx, ref.ThreadID, t.Version.Seq, meta, func(held *Thread) ([]events.Event, error) {
		r := held.Runs[ref.RunID]
		if !held.Exists || held.Deleted || r == nil {
			return nil, nil
		}
		return decide(held, r), nil
	})
	if err != nil {
		return nil, err
	}
	if len(res.Events) == 0 && res.Version == t.Version {
		return t, nil
	}
	if res.Version.Count != t.Version.Count+uint64(len(res.Events)) {
		// The decision was made on more than the caller held (another writer came first): read the thread again.
		return c.Load(ctx, ref.ThreadID)
	}
	for _, e := range res.Events {
		if e.Event != nil {
			t.Apply(e)
		}
	}
	t.Version = res.Version
	return t, nil
}

// Start puts a queued run in progress: the start of a turn. A run in any other status is left as it is.
func (c *Turns) Start(ctx context.Context, ref RunRef, t *Thread) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, "", func(_ *Thread, r *ThreadRun) []events.Event { return thread.Start(r) })
}

// RecordTurn records a turn's answer: a tool-calls step and requires_action when the model called tools, a message
// (and its step) when it wrote text, and the end of the run when it is done. Only what the log does not hold yet is
// appended, and nothing at all when the run has left the turn (cancelled, expired) meanwhile.
//
// The first event holds the answer's substance (the tool calls, or the message's text) with the call's usage. When
// an answer has both, the tool calls come first: after a crash right after them the run still gets what it needs to
// go on, and only the text said alongside the calls is lost.
func (c *Turns) RecordTurn(ctx context.Context, ref RunRef, t *Thread, turn string, res TurnResult) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return thread.Turn(t, r, turn, res)
	})
}

// RecordServerTools records a turn whose tool calls the run worker answered itself (file_search): a tool-calls
// step with the calls and what each found, completed at once with their outputs, and the run queued for its next
// turn. One append: a crash before it asks the model again, a crash after it finds the turn recorded. A step
// StartServerTools recorded (code_interpreter) is completed with the calls as they ended.
func (c *Turns) RecordServerTools(ctx context.Context, ref RunRef, t *Thread, turn string, calls []events.ToolCall, outputs []events.ToolOutput, usage events.TokenUsage) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		return thread.ServerTools(t, r, turn, calls, outputs, usage)
	})
}

// StartServerTools records, before they run, the turn's server tool calls with effects outside Contrail
// (code_interpreter): their tool-calls step, in progress. started is false when it recorded nothing (the turn moved
// on, or its step is recorded already): then the calls are not to be run.
func (c *Turns) StartServerTools(ctx context.Context, ref RunRef, t *Thread, turn string, calls []events.ToolCall, usage events.TokenUsage) (*Thread, bool, error) {
	started := false
	t, err := c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		evs := thread.StartServerTools(t, r, turn, calls, usage)
		started = len(evs) > 0 // decide may run again after a conflict
		return evs
	})
	return t, started && err == nil, err
}

// Fail ends the run's turn in failure (the model could not answer): code is "server_error",
// "rate_limit_exceeded" or "invalid_prompt".
func (c *Turns) Fail(ctx context.Context, ref RunRef, t *Thread, turn, code, message string) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return thread.End(t, r, events.StepStatusFailed, code, message)
	})
}

// Incomplete ends the run's turn before asking the model, because the run's token budget is spent: reason is
// "max_prompt_tokens" or "max_completion_tokens".
func (c *Turns) Incomplete(ctx context.Context, ref RunRef, t *Thread, turn, reason string) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, turn, func(_ *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusInProgress || r.Turn != turn {
			return nil
		}
		return []events.Event{events.WithID(events.DeriveID(turn, "incomplete"),
			events.RunIncomplete{RunID: r.RunID, Reason: reason, Usage: r.Usage})}
	})
}

// FinishCancel ends a run that is cancelling: its steps in progress and the run are cancelled.
func (c *Turns) FinishCancel(ctx context.Context, ref RunRef, t *Thread) (*Thread, error) {
	return c.advance(ctx, ref, t, ActorRunWorker, "", func(t *Thread, r *ThreadRun) []events.Event {
		if r.Status != events.RunStatusCancelling {
			return nil
		}
		return thread.End(t, r, events.StepStatusCancelled, "", "")
	})
}

// Expire ends a run still active past its expires_at, with its steps in progress. It reports whether the run
// was expired.
func (c *Turns) Expire(ctx context.Context, ref RunRef, now time.Time) (bool, error) {
	expired := false
	_, err := c.advance(ctx, ref, nil, ActorSweeper, "", func(t *Thread, r *ThreadRun) []events.Event {
		expired = false // decide may run again after a conflict
		if !thread.Active(r.Status) || now.Before(r.ExpiresAt) {
			return nil
		}
		expired = true
		return thread.End(t, r, events.StepStatusExpired, "", "")
	})
	return expired && err == nil, err
}

// Load returns a copy of a thread, with its runs, as the log holds it now.
func (c *Turns) Load(ctx context.Context, threadID string) (*Thread, error) {
	return c.threads.Load(ctx, threadID)
}

// LoadAt returns a copy of a thread as of at least stream sequence atLeast (eventstore.Fresh: as the log holds it now).
func (c *Turns) LoadAt(ctx context.Context, threadID string, atLeast uint64) (*Thread, error) {
	return c.threads.LoadAt(ctx, threadID, atLeast)
}

// NeedsWork reports whether a run is in a status a worker moves on from, as the log holds it now.
func (c *Turns) NeedsWork(ctx context.Context, threadID, runID string) (bool, error) {
	return c.threads.RunNeedsWork(ctx, threadID, runID)
}
