package openaiapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/projections"
)

// waitedTooLong reports whether a create's error is only its wait for the read models running out after its write
// went in (a read model stands still while its bucket elects a leader): the write is committed, and is answered
// as such, from the log, rather than as a 504 that a client would retry into a duplicate.
func waitedTooLong(r *http.Request, id string, err error) bool {
	return id != "" && projections.PastWait(r.Context(), err)
}

// shownOrDone is projections' ShowsCommitted for a write whose answer is read through ownedShown or shownOrFolded,
// which fold the log past the wait: the command's error, or else nil once the models show the write or the wait
// for them runs out (the write went in, and is answered as done rather than as a timeout a client would retry).
func (f *Face) shownOrDone(r *http.Request, res eventstore.Appended, err error, models ...projections.Projection) error {
	_, err = f.d.Views.ShowsCommitted(r.Context(), res, err, models...)
	return err
}

// threadFromLog answers a thread from its events, as the read model will show it.
func (f *Face) threadFromLog(w http.ResponseWriter, r *http.Request, threadID string) {
	t, ok, err := f.threadInLog(r.Context(), principal(r).AccountID, threadID)
	if err == nil && !ok {
		err = errors.New("a thread just created is not in the log")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, threadWire(t))
}

// threadInLog is a thread of account's as the stream's leader holds its events: for a thread the read model does not
// show yet (made a moment ago, on this node or another, while the read model's bucket elected a leader), so that
// what exists is not answered 404. ok is false when the log holds no such thread of the account's.
func (f *Face) threadInLog(ctx context.Context, account, threadID string) (thread.ThreadView, bool, error) {
	history, err := f.threadHistory(ctx, threadID, "the thread")
	if err != nil {
		return thread.ThreadView{}, false, err
	}
	return folded[thread.ThreadView](ctx, projections.Threads{}, history, threadID, projections.OwnedKey(account, threadID))
}

// runFromLog answers a run from its thread's events, with the fold the read model and the streams use.
func (f *Face) runFromLog(w http.ResponseWriter, r *http.Request, threadID, runID string) {
	run, ok, err := f.runInLog(r.Context(), principal(r).AccountID, threadID, runID)
	if err == nil && !ok {
		err = errors.New("a run just created is not in the log")
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, runWire(run))
}

// runInLog is a run of a thread of account's as the stream's leader holds the thread's events: for a run the read
// model does not show yet. ok is false when the log holds no such run, or its thread is deleted.
func (f *Face) runInLog(ctx context.Context, account, threadID, runID string) (thread.RunView, bool, error) {
	history, err := f.threadHistory(ctx, threadID, "the run")
	if err != nil {
		return thread.RunView{}, false, err
	}
	// The runs model keeps a deleted thread's runs (its routes find the thread first): the thread must be there.
	_, ok, err := folded[thread.ThreadView](ctx, projections.Threads{}, history, threadID,
		projections.OwnedKey(account, threadID))
	if err != nil || !ok {
		return thread.RunView{}, false, err
	}
	return folded[thread.RunView](ctx, projections.Runs{}, history, threadID, projections.RunKey(account, threadID, runID))
}

// threadHistory is a thread's events as the stream's leader holds them. threadID must be valid (the routes check
// it): it names subjects. A log that cannot be read is a 503 saying so: what names the object in it.
func (f *Face) threadHistory(ctx context.Context, threadID, what string) ([]events.Envelope, error) {
	history, err := f.d.Views.History(ctx, threadRef(threadID))
	return history, projections.Behind(err, what)
}

// folded is the document under key of the read model p, which keeps it as Listed[T], folded from a thread's history
// with p's own Apply (projections.FoldAggregate): what p will show, with no second fold to keep in step with it. The
// key starts with the caller's account, so another account's thread folds to no such document; its IDs must be
// valid, as it is matched as a filter.
func folded[T any](ctx context.Context, p projections.Projection, history []events.Envelope, threadID, key string) (
	T, bool, error) {
	var zero T
	docs, err := projections.FoldAggregate(ctx, p, history)
	if err != nil {
		return zero, false, fmt.Errorf("fold thread %s's %s from the log: %w", threadID, p.Name(), err)
	}
	found, err := projections.DecodeMatching[projections.Listed[T]](p, docs, key)
	if err != nil || len(found) == 0 {
		return zero, false, err
	}
	return found[0].Obj, true, nil
}
