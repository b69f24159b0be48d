package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// A read of something a client just wrote (or knows of: a run it saw completed) waits briefly for the read model
// to show it, and when the wait runs out (a model stands still while its bucket elects a leader, or its lease moves)
// folds the aggregate's events from the log with the model's own Apply: what the model will show, never what it
// held a moment ago. This file is that read's one home; each face keeps its own checks (the caller's account, an
// ID's kind) and names what it reads in the 503 of a log that cannot be read either (Behind).

// LogUnreadableError is a fold from the log past the read wait whose log could not be read (its stream's leader
// moving, a lookup timed out, an event this build cannot decode): what the model holds may be stale, and is not
// answered. A face says so with Behind.
type LogUnreadableError struct {
	Ref events.Ref
	Err error
}

func (e *LogUnreadableError) Error() string {
	return fmt.Sprintf("read %s %s from the log: %v", e.Ref.Type, e.Ref.ID, e.Err)
}

func (e *LogUnreadableError) Unwrap() error { return e.Err }

// Behind is err, or, when err is a LogUnreadableError, the 503 saying that what (the documents' name: "the
// thread's messages", "the agent") cannot be read now and the read may be retried.
func Behind(err error, what string) error {
	var u *LogUnreadableError
	if !errors.As(err, &u) {
		return err
	}
	return &errs.Error{Code: errs.Unavailable,
		Message: what + " cannot be read now: the read model is behind and the log could not be read; retry", Err: err}
}

// PastWait reports whether err is only a read's wait for a model running out (Shows, WaitFor) while ctx, the
// caller's, goes on: a write the wait followed went in all the same.
func PastWait(ctx context.Context, err error) bool {
	return errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil
}

// ShowsCommitted is ShowsWrite for a write whose answer is read through ShownOrFolded (or folded from the log
// otherwise) past the wait: the command's error, or else whether the models show what it appended. Past the wait
// shown is false and the error nil: the write went in, and is answered as done (from the log), not as a timeout a
// client would retry into a second write.
func (r *Runner) ShowsCommitted(ctx context.Context, res eventstore.Appended, err error, models ...Projection) (
	shown bool, _ error) {
	if err != nil {
		return false, err
	}
	if err := r.Shows(ctx, res, models...); err != nil {
		if PastWait(ctx, err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// History is an aggregate's events as the log's stream leader holds them (eventstore's LoadLatest), for a read that
// folds them past the wait. A log that cannot be read is a LogUnreadableError; ctx's end is ctx's error.
func (r *Runner) History(ctx context.Context, ref events.Ref) ([]events.Envelope, error) {
	history, _, err := r.cfg.Store.LoadLatest(ctx, ref)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &LogUnreadableError{Ref: ref, Err: err}
	}
	return history, nil
}

// ShownOrFoldedDocs waits, as ShowsAggregate does, until the read model p shows the last event of one aggregate
// that it folds. shown says it does, and the caller reads the model. When it does not, docs are the aggregate's
// documents of p, by key, as the model will show them: its events folded from the log (History) with p's own Apply
// (FoldAggregate), so that what a client knows of is never answered missing or old. A log that cannot be read
// either is a LogUnreadableError. agg.ID must be valid: it names subjects.
func (r *Runner) ShownOrFoldedDocs(ctx context.Context, p Projection, agg events.Ref) (
	docs map[string]json.RawMessage, shown bool, err error) {
	shown, err = r.ShowsAggregate(ctx, p, agg.ID)
	if err != nil || shown {
		return nil, shown, err
	}
	history, err := r.History(ctx, agg)
	if err != nil {
		return nil, false, err
	}
	// The events were read: a fold that fails on them is a defect, which a retry would meet again, so it is an
	// internal error (logged), not the 503 of a log that could not be read.
	if docs, err = FoldAggregate(ctx, p, history); err != nil {
		return nil, false, fmt.Errorf("fold %s %s's %s from the log: %w", agg.Type, agg.ID, p.Name(), err)
	}
	return docs, false, nil
}

// ShownOrFolded is ShownOrFoldedDocs decoding, when the model does not show the aggregate, its documents whose key
// matches filter (DecodeMatching). The caller matches IDs from a request against the documents' own IDs: filter is
// built from checked IDs only.
func ShownOrFolded[T any](ctx context.Context, r *Runner, p Projection, agg events.Ref, filter string) (
	[]T, bool, error) {
	docs, shown, err := r.ShownOrFoldedDocs(ctx, p, agg)
	if err != nil || shown {
		return nil, shown, err
	}
	out, err := DecodeMatching[T](p, docs, filter)
	return out, false, err
}

// OwnedShownOrFolded reads an object of account's that p keeps as Listed[T] under OwnedKey(account, agg.ID), its
// own aggregate's only (an assistant, a thread, a file), once the model shows the aggregate's last event, or else
// from the log (ShownOrFolded). ok is false when account has no such object. agg.ID must be valid: it names
// subjects.
func OwnedShownOrFolded[T any](ctx context.Context, r *Runner, p Projection, agg events.Ref, account string) (
	v T, ok bool, err error) {
	key := OwnedKey(account, agg.ID)
	folded, shown, err := ShownOrFolded[Listed[T]](ctx, r, p, agg, key)
	if err != nil {
		return v, false, err
	}
	if !shown {
		if len(folded) == 0 {
			return v, false, nil
		}
		return folded[0].Obj, true, nil
	}
	d, ok, err := GetLatest[Listed[T]](ctx, r, p.Name(), key)
	return d.Obj, ok, err
}

// FoldAggregate folds one aggregate's history (as eventstore's Load returns it) with p's own Apply, in memory, as
// the read model would from an empty bucket, and returns the live documents it made, by key. It is how a read that
// cannot wait any longer for a model standing still answers what the model will show, without a second fold to
// keep in step with the first. An event the fold fails on is left out, as the model skips it.
func FoldAggregate(ctx context.Context, p Projection, history []events.Envelope) (map[string]json.RawMessage, error) {
	w := &writer{proj: p, cache: map[string]cached{}, decoded: map[string]keptValue{},
		known: map[string]struct{}{}, staged: map[string]doc{}}
	for _, e := range history {
		if e.Event == nil || !Folds(p, e.Type) {
			continue
		}
		if err := p.Apply(&Tx{ctx: ctx, w: w, seq: e.Sequence}, e); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
	}
	out := make(map[string]json.RawMessage, len(w.staged))
	for k, d := range w.staged {
		if !d.Deleted {
			out[k] = d.V
		}
	}
	return out, nil
}

// DecodeMatching decodes as T the documents of p (FoldAggregate's) whose key matches the filter (KV wildcards, as
// List's; a key without any matches itself), in no particular order.
func DecodeMatching[T any](p Projection, docs map[string]json.RawMessage, filter string) ([]T, error) {
	match := natsx.NewSubjectFilter(filter)
	var out []T
	for k, raw := range docs {
		if !match.Match(k) {
			continue
		}
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("decode %s/%s: %w", p.Name(), k, err)
		}
		out = append(out, v)
	}
	return out, nil
}
