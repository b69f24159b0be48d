package openaiapi

import (
	"context"
	"errors"
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
	history, _, err := f.d.Store.LoadLatest(ctx, events.Ref{Type: "thread", ID: threadID})
	if err != nil {
		return thread.ThreadView{}, false, err
	}
	var st thread.State
	var obj thread.ThreadView
	for _, e := range history {
		if e.Event == nil {
			continue
		}
		st.Apply(e)
		if d, ok := e.Event.(events.ThreadCreated); ok {
			obj = thread.NewThreadView(e, d)
		} else {
			thread.ApplyThread(&obj, e)
		}
	}
	return obj, st.Owned(account), nil
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
// model does not show yet. ok is false when the log holds no such run.
func (f *Face) runInLog(ctx context.Context, account, threadID, runID string) (thread.RunView, bool, error) {
	history, _, err := f.d.Store.LoadLatest(ctx, events.Ref{Type: "thread", ID: threadID})
	if err != nil {
		return thread.RunView{}, false, err
	}
	var st thread.State
	var run *thread.RunView
	for _, e := range history {
		if e.Event == nil {
			continue
		}
		st.Apply(e)
		if d, ok := e.Event.(events.RunCreated); ok && d.RunID == runID {
			obj := thread.NewRunView(e, d)
			run = &obj
		} else if run != nil && thread.RunOf(e.Event) == runID {
			thread.ApplyRun(run, e)
		}
	}
	if run == nil || !st.Owned(account) {
		return thread.RunView{}, false, nil
	}
	return *run, true, nil
}
