package openaiapi

import (
	"net/http"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

// shownOrFolded is projections.ShownOrFolded for a request: the documents of one aggregate (a thread, a file) that
// the read model p folds, read from the model once it shows the aggregate's last event (shown), or else folded from
// the log, so that what a client knows of (a run it saw completed, the step that completed it, a file it just
// uploaded) is never answered missing or old. A log that cannot be read either is a 503 saying the model is behind:
// what names the documents in it ("the thread's messages", "the file").
//
// agg.ID must be a valid ID (it names subjects): the caller has found the aggregate (f.thread) or checked the ID
// (ids.Valid). The caller matches IDs from the request against the documents' own IDs: filter is built from
// checked IDs only.
func shownOrFolded[T any](f *Face, r *http.Request, p projections.Projection, agg events.Ref, filter, what string) (
	[]T, bool, error) {
	docs, shown, err := projections.ShownOrFolded[T](r.Context(), f.d.Views, p, agg, filter)
	return docs, shown, projections.Behind(err, what)
}

// threadRef names a thread's events.
func threadRef(id string) events.Ref { return events.Ref{Type: "thread", ID: id} }

// ownedShown reads an object of the caller's that a read model keeps as Listed[T] under "<account>.<id>", its
// own aggregate's only (an assistant, a thread, a file: agg names its events), once the model shows the
// aggregate's last event, or else from the log (projections.OwnedShownOrFolded). An ID that cannot be of the kind,
// or names no such object of the caller's, is notFound.
func ownedShown[T any](f *Face, r *http.Request, p projections.Projection, agg string, kind ids.Kind, id string,
	notFound error) (T, error) {
	var zero T
	if !ids.Valid(kind, id) {
		return zero, notFound
	}
	v, ok, err := projections.OwnedShownOrFolded[T](r.Context(), f.d.Views, p, events.Ref{Type: agg, ID: id},
		principal(r).AccountID)
	if err != nil {
		return zero, projections.Behind(err, "the "+kind.Name)
	}
	if !ok {
		return zero, notFound
	}
	return v, nil
}
