package openaiapi

import (
	"fmt"
	"net/http"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// shownOrFolded waits (briefly, as Shows would) until the read model p shows the last event of one aggregate (a
// thread, a file) that it folds. shown says it does, and the caller reads the model. When it does not, docs are
// the aggregate's documents of that model whose key matches filter, as the model will show them: the aggregate's
// events folded from the log with the model's own Apply (projections.FoldAggregate), so that what a client knows
// of (a run it saw completed, the step that completed it, a file it just uploaded) is never answered missing or
// old. A log that cannot be read either is a 503 saying the model is behind: what the model holds may be stale,
// and is not answered. what names the documents in that message ("the thread's messages", "the file").
//
// agg.ID must be a valid ID (it names subjects): the caller has found the aggregate (f.thread) or checked the ID
// (ids.Valid). The caller matches IDs from the request against the documents' own IDs: filter is built from
// checked IDs only.
func shownOrFolded[T any](f *Face, r *http.Request, p projections.Projection, agg events.Ref, filter, what string) (
	docs []T, shown bool, err error) {
	shown, err = f.d.Views.ShowsAggregate(r.Context(), p, agg.ID)
	if err != nil || shown {
		return nil, shown, err
	}
	history, _, err := f.d.Store.LoadLatest(r.Context(), agg)
	if err != nil {
		if r.Context().Err() != nil {
			return nil, false, r.Context().Err()
		}
		return nil, false, &errs.Error{Code: errs.Unavailable,
			Message: what + " cannot be read now: the read model is behind and the log could not be read; retry",
			Err:     fmt.Errorf("read %s %s's %s from the log: %w", agg.Type, agg.ID, p.Name(), err)}
	}
	// The events were read: a fold that fails on them is a defect, which a retry would meet again, so it is an
	// internal error (logged), not the 503 of a log that could not be read.
	docs, err = projections.FoldAggregateAs[T](r.Context(), p, history, filter)
	if err != nil {
		return nil, false, fmt.Errorf("fold %s %s's %s from the log: %w", agg.Type, agg.ID, p.Name(), err)
	}
	return docs, false, nil
}

// threadRef names a thread's events.
func threadRef(id string) events.Ref { return events.Ref{Type: "thread", ID: id} }

// ownedShown reads an object of the caller's that a read model keeps as Listed[T] under "<account>.<id>", its
// own aggregate's only (an assistant, a thread, a file: agg names its events), once the model shows the
// aggregate's last event, or else from the log (shownOrFolded). An ID that cannot be of the kind, or names no such
// object of the caller's, is notFound.
func ownedShown[T any](f *Face, r *http.Request, p projections.Projection, agg string, kind ids.Kind, id string,
	notFound error, idOf func(T) string) (T, error) {
	var zero T
	if !ids.Valid(kind, id) {
		return zero, notFound
	}
	key := projections.OwnedKey(principal(r).AccountID, id)
	folded, shown, err := shownOrFolded[projections.Listed[T]](f, r, p, events.Ref{Type: agg, ID: id}, key,
		"the "+kind.Name)
	if err != nil {
		return zero, err
	}
	if !shown {
		for _, d := range folded {
			if idOf(d.Obj) == id {
				return d.Obj, nil
			}
		}
		return zero, notFound
	}
	d, ok, err := projections.Get[projections.Listed[T]](r.Context(), f.d.Views, p.Name(), key)
	if err != nil {
		return zero, err
	}
	if !ok {
		return zero, notFound
	}
	return d.Obj, nil
}
