package julepapi

import (
	"context"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
)

// The write, read and delete routes of Julep's agents, users and sessions have one shape: read the body, call the
// command with the path's ID (or, for a POST that creates, the request's ID, so that a retry makes nothing twice),
// and answer with the object it wrote. These helpers are that shape, once; B is the body clients send, V what the
// commands return and J its JSON.

// createWith answers a POST that creates with 201 and the object made.
func createWith[B, V, J any](f *Face, w http.ResponseWriter, r *http.Request, out func(V) J,
	create func(ctx context.Context, actor auth.Principal, requestID string, b B) (commands.Written[V], error)) {
	var b B
	requestID, err := f.readJSON(r, true, &b)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := create(r.Context(), principal(r), requestID, b)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	created(w, out(res.Object))
}

// writeWith answers a PUT, a PATCH or a POST to an object's ID with 200 and the object as written; param names the
// ID in the path.
func writeWith[B, V, J any](f *Face, w http.ResponseWriter, r *http.Request, param string, out func(V) J,
	write func(ctx context.Context, actor auth.Principal, id string, b B) (commands.Written[V], error)) {
	var b B
	if _, err := f.readJSON(r, false, &b); err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := write(r.Context(), principal(r), chi.URLParam(r, param), b)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, out(res.Object))
}

// getWith answers a GET of one object.
func getWith[V, J any](f *Face, w http.ResponseWriter, r *http.Request, param string, out func(V) J,
	get func(ctx context.Context, actor auth.Principal, id string) (V, error)) {
	v, err := get(r.Context(), principal(r), chi.URLParam(r, param))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, out(v))
}

// deleteWith answers a DELETE with Julep's ResourceDeleted; updated is when the deletion was recorded.
func deleteWith[V any](f *Face, w http.ResponseWriter, r *http.Request, param string, updated func(V) time.Time,
	del func(ctx context.Context, actor auth.Principal, id string, retry bool) (commands.Written[V], error)) {
	id := chi.URLParam(r, param)
	res, err := del(r.Context(), principal(r), id, isRetry(r))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	deleted(w, id, updated(res.Object))
}
