package fixieapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/ids"
)

// SessionsFace is /api/sessions: a session's events read from the log, for replay and debugging.
type SessionsFace struct {
	cmds   SessionGetter
	store  *eventstore.Store
	logger *slog.Logger
}

// NewSessionsFace returns the sessions face.
func NewSessionsFace(cmds SessionGetter, store *eventstore.Store, logger *slog.Logger) *SessionsFace {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &SessionsFace{cmds: cmds, store: store, logger: logger}
}

// Prefix implements httpapi.Face.
func (f *SessionsFace) Prefix() string { return "/api/sessions" }

// WriteError implements httpapi.Face.
func (f *SessionsFace) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(f.logger, w, r, err)
}

// Routes implements httpapi.Face.
func (f *SessionsFace) Routes(r chi.Router) {
	r.Get("/{handle}/events", f.events)
}

// EventJSON is one event of the log as the replay endpoint and the sessionEvents subscription show it.
type EventJSON struct {
	Sequence      uint64          `json:"sequence"`
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	Time          time.Time       `json:"time"`
	Version       uint64          `json:"version"`
	Actor         string          `json:"actor,omitempty"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	CausationID   string          `json:"causation_id,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// EventOf is how an envelope is shown.
func EventOf(e events.Envelope) EventJSON {
	return EventJSON{Sequence: e.Sequence, ID: e.ID, Type: e.Type, Time: e.Time, Version: e.Version, Actor: e.Actor,
		CorrelationID: e.CorrelationID, CausationID: e.CausationID, Data: e.Data}
}

// events answers the session's events as JSON lines, from ?from=SEQ (a stream sequence; 0 = the beginning); with
// ?follow=true it keeps the connection open and sends new events as they are appended (history first, then live,
// with no gap or duplicate at the switch).
func (f *SessionsFace) events(w http.ResponseWriter, r *http.Request) {
	p, _ := auth.From(r.Context())
	handle := chi.URLParam(r, "handle")
	if ids.IsUUID(handle) {
		handle = events.JulepAggregateID(p.AccountID, ids.CanonicalUUID(handle)) // a Julep session, by its UUID
	} else if err := ids.Check("handle", ids.Session, handle); err != nil {
		f.WriteError(w, r, err)
		return
	}
	var from uint64
	if s := r.URL.Query().Get("from"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			f.WriteError(w, r, errs.InvalidField("from", "from must be a stream sequence (a number), not %q", s))
			return
		}
		from = n
	}
	follow := false
	if s := r.URL.Query().Get("follow"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			f.WriteError(w, r, errs.InvalidField("follow", "follow must be true or false, not %q", s))
			return
		}
		follow = b
	}
	if _, _, err := f.cmds.Get(r.Context(), p, handle); err != nil {
		f.WriteError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	filter := f.store.Names().AggregateFilter("session", handle)
	if !follow {
		_, err := f.store.Read(r.Context(), from, func(e events.Envelope) error { return enc.Encode(EventOf(e)) }, filter)
		if err != nil && r.Context().Err() == nil {
			httpapi.LogError(f.logger, r, err)
			_ = enc.Encode(map[string]string{"error": "internal error"})
		}
		return
	}
	if flusher != nil {
		flusher.Flush()
	}
	for e, err := range f.store.FollowAggregate(r.Context(), events.Ref{Type: "session", ID: handle}, from) {
		if err != nil {
			if r.Context().Err() == nil {
				httpapi.LogError(f.logger, r, err)
				_ = enc.Encode(map[string]string{"error": "internal error"})
			}
			return
		}
		if err := enc.Encode(EventOf(e)); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
}

// SessionGetter reads a session for the face (commands.Sessions).
type SessionGetter interface {
	Get(ctx context.Context, actor auth.Principal, id string) (session.State, events.Version, error)
}
