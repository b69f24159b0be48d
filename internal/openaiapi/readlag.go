package openaiapi

import (
	"fmt"
	"net/http"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
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
	if err == nil {
		docs, err = projections.FoldAggregateAs[T](r.Context(), p, history, filter)
	}
	if err != nil {
		if r.Context().Err() != nil {
			return nil, false, r.Context().Err()
		}
		return nil, false, &errs.Error{Code: errs.Unavailable,
			Message: what + " cannot be read now: the read model is behind and the log could not be read; retry",
			Err:     fmt.Errorf("read %s %s's %s from the log: %w", agg.Type, agg.ID, p.Name(), err)}
	}
	return docs, false, nil
}

// threadRef names a thread's events.
func threadRef(id string) events.Ref { return events.Ref{Type: "thread", ID: id} }
