// Package adminapi is the /admin face: what the contrail CLI calls on a running server (accounts and keys,
// projection status and rebuilds, the dead-letter queue, the rotation of the key that signs agent tokens). Managing
// one's own keys is open to every account; the rest needs an admin key.
package adminapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// AccountCommands is what the face asks of the account commands (commands.Accounts). Each returns what it
// appended; the face waits for the accounts read model to show it (projections.Runner.ShowsWrite), since keys and
// limits are read there.
type AccountCommands interface {
	Create(ctx context.Context, actor auth.Principal, in commands.NewAccount) (commands.IssuedKey, error)
	IssueKey(ctx context.Context, actor auth.Principal, accountID, name, key string) (commands.IssuedKey, error)
	RevokeKey(ctx context.Context, actor auth.Principal, accountID, keyID string) (eventstore.Appended, error)
	SetLimits(ctx context.Context, actor auth.Principal, accountID string, dailyQueries, perMinute int) (eventstore.Appended, error)
}

// Deps are what the admin face uses.
type Deps struct {
	Accounts AccountCommands
	Views    *projections.Runner
	JS       jetstream.JetStream
	Store    *eventstore.Store
	Names    natsx.Names
	Logger   *slog.Logger
	// Signer signs agent tokens; an admin rotates its key.
	Signer *auth.Signer
	// Limits says which limits apply to an account (its own, or the platform's defaults).
	Limits *limits.Limits
	// Usage tells each account's daily query quota and today's use of it (internal/limits); Now is the clock it
	// counts days by (default time.Now).
	Usage Usage
	Now   func() time.Time
}

// Usage is what the usage report reads of each account.
type Usage interface {
	DailyUsage(ctx context.Context, accountID string) (limit, used int, err error)
}

// Face is the /admin face.
type Face struct{ d Deps }

// New returns the face.
func New(d Deps) *Face {
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Face{d: d}
}

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return "/admin" }

// WriteError implements httpapi.Face.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(f.d.Logger, w, r, err)
}

// Routes implements httpapi.Face.
func (f *Face) Routes(r chi.Router) {
	r.Group(func(r chi.Router) {
		r.Use(httpapi.CheckPathIDs(pathIDs, f.WriteError))
		r.Get("/whoami", f.whoami)
		r.Get("/keys", f.listKeys)
		r.Post("/keys", f.createKey)
		r.Delete("/keys/{keyID}", f.revokeKey)
	})
	r.Group(func(r chi.Router) {
		r.Use(f.adminOnly, httpapi.CheckPathIDs(pathIDs, f.WriteError))
		r.Get("/accounts", f.listAccounts)
		r.Get("/usage", f.usage)
		r.Post("/accounts", f.createAccount)
		r.Get("/accounts/{accountID}/limits", f.getLimits)
		r.Post("/accounts/{accountID}/limits", f.setLimits)
		r.Get("/projections", f.projectionStatus)
		r.Post("/projections/{name}/rebuild", f.rebuild)
		r.Get("/dlq", f.listDLQ)
		r.Post("/dlq/{seq}/redrive", f.redrive)
		r.Post("/signing-keys/rotate", f.rotateSigningKey)
	})
}

func (f *Face) adminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, _ := auth.From(r.Context()); !p.Admin {
			f.WriteError(w, r, errs.E(errs.Forbidden, "this needs an admin key"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func principal(r *http.Request) auth.Principal {
	p, _ := auth.From(r.Context())
	return p
}

func (f *Face) whoami(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteJSON(w, http.StatusOK, principal(r))
}

// maxBody bounds a request body of this face: what it takes is a few names and numbers.
const maxBody = 64 << 10

// decode reads a JSON body into v, answering 400 with what is wrong.
func decode(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, maxBody))
	if err := dec.Decode(v); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errs.E(errs.TooLarge, "the request body is larger than %d bytes", maxBody)
		}
		return errs.InvalidField("body", "request body is not valid JSON: %v", err)
	}
	return nil
}

// account picks the account a key request is about: one's own, or (for an admin) the one named.
func account(r *http.Request) (string, error) {
	p := principal(r)
	if a := r.URL.Query().Get("account"); a != "" && p.Admin {
		return a, ids.Check("account", ids.Account, a)
	}
	return p.AccountID, nil
}

// pathIDs are the kinds of the IDs the routes' paths name, by parameter.
var pathIDs = map[string]ids.Kind{"keyID": ids.Key, "accountID": ids.Account, "name": ids.Token}

func (f *Face) listKeys(w http.ResponseWriter, r *http.Request) {
	id, err := account(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	acct, ok, err := projections.Get[projections.AccountView](r.Context(), f.d.Views, "accounts", projections.AccountKey(id))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.NotFoundf("account", id))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"account_id": acct.ID, "name": acct.Name, "keys": acct.Keys})
}

func (f *Face) createKey(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name string `json:"name"`
	}
	if r.ContentLength != 0 {
		if err := decode(r, &in); err != nil {
			f.WriteError(w, r, err)
			return
		}
	}
	id, err := account(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	k, err := f.d.Accounts.IssueKey(r.Context(), principal(r), id, in.Name, "")
	if err := f.d.Views.ShowsWrite(r.Context(), k.Appended, err, projections.Accounts{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, k)
}

func (f *Face) revokeKey(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "keyID")
	acct, err := account(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	res, err := f.d.Accounts.RevokeKey(r.Context(), principal(r), acct, id)
	if err := f.d.Views.ShowsWrite(r.Context(), res, err, projections.Accounts{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"key_id": id, "revoked": true})
}

// listedAccount is an account as the list shows it: with the limits that apply to it, the platform's defaults where
// it sets none (the read model's 0 means "the default").
type listedAccount struct {
	projections.AccountView
	EffectiveDailyQueryLimit   int `json:"effective_daily_query_limit"`
	EffectiveRequestsPerMinute int `json:"effective_requests_per_minute"`
}

func (f *Face) listAccounts(w http.ResponseWriter, r *http.Request) {
	accts, err := projections.ListAll[projections.AccountView](r.Context(), f.d.Views, "accounts", "acct.>")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	out := make([]listedAccount, len(accts))
	for i, a := range accts {
		out[i].AccountView = a
		out[i].EffectiveDailyQueryLimit, out[i].EffectiveRequestsPerMinute = f.d.Limits.Effective(limits.Own{DailyQueryLimit: a.DailyQueryLimit, RequestsPerMinute: a.RequestsPerMinute})
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"accounts": out})
}

// accountID is the account of a limits route, checked before it becomes part of a KV key.
func accountID(r *http.Request) (string, error) {
	id := chi.URLParam(r, "accountID")
	if !natsx.ValidToken(id) {
		return "", errs.InvalidField("account_id", "account_id must be an account ID (letters, digits, '_' and '-', at most 128)")
	}
	return id, nil
}

func (f *Face) getLimits(w http.ResponseWriter, r *http.Request) {
	id, err := accountID(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	u, err := f.d.Limits.Of(r.Context(), id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, u)
}

// AccountUsage is an account's use of its daily query quota today (UTC).
type AccountUsage struct {
	AccountID         string `json:"account_id"`
	Name              string `json:"name"`
	DailyQueryLimit   int    `json:"daily_query_limit"`
	DailyUsedQueries  int    `json:"daily_used_queries"`
	RequestsPerMinute int    `json:"requests_per_minute,omitempty"`
}

// usage reports every account's queries today against its quota.
func (f *Face) usage(w http.ResponseWriter, r *http.Request) {
	if f.d.Usage == nil {
		f.WriteError(w, r, errs.E(errs.Unavailable, "this node does not count usage"))
		return
	}
	accts, err := projections.ListAll[projections.AccountView](r.Context(), f.d.Views, "accounts", "acct.>")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	out := make([]AccountUsage, 0, len(accts))
	for _, a := range accts {
		limit, used, err := f.d.Usage.DailyUsage(r.Context(), a.ID)
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		out = append(out, AccountUsage{AccountID: a.ID, Name: a.Name, DailyQueryLimit: limit, DailyUsedQueries: used,
			RequestsPerMinute: a.RequestsPerMinute})
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"day": f.d.Now().UTC().Format(time.DateOnly), "accounts": out})
}

func (f *Face) createAccount(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Name            string `json:"name"`
		Admin           bool   `json:"admin"`
		DailyQueryLimit int    `json:"daily_query_limit"`
	}
	if err := decode(r, &in); err != nil {
		f.WriteError(w, r, err)
		return
	}
	k, err := f.d.Accounts.Create(r.Context(), principal(r), commands.NewAccount{Name: in.Name, Admin: in.Admin, DailyQueryLimit: in.DailyQueryLimit})
	if err := f.d.Views.ShowsWrite(r.Context(), k.Appended, err, projections.Accounts{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusCreated, k)
}

func (f *Face) setLimits(w http.ResponseWriter, r *http.Request) {
	var in struct {
		DailyQueryLimit   int `json:"daily_query_limit"`
		RequestsPerMinute int `json:"requests_per_minute"`
	}
	if err := decode(r, &in); err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, err := accountID(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if in.DailyQueryLimit == 0 && in.RequestsPerMinute == 0 {
		// 0 keeps a limit as it is: a body that changes nothing is a mistake, not a success.
		f.WriteError(w, r, errs.E(errs.Invalid, "give daily_query_limit or requests_per_minute (or both) above 0; "+
			"GET this URL to read the current limits"))
		return
	}
	res, err := f.d.Accounts.SetLimits(r.Context(), principal(r), id, in.DailyQueryLimit, in.RequestsPerMinute)
	if err := f.d.Views.ShowsWrite(r.Context(), res, err, projections.Accounts{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	// The answer is the limits as they now apply, not an echo of the request (where 0 meant "unchanged").
	u, err := f.d.Limits.Of(r.Context(), id)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, u)
}

func (f *Face) projectionStatus(w http.ResponseWriter, r *http.Request) {
	st, err := f.d.Views.Status(r.Context())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"projections": st})
}

// rebuild streams its progress as JSON lines, so that the CLI can draw a bar: {"done","total"}..., then
// {"status": ...} or {"error": ...}.
func (f *Face) rebuild(w http.ResponseWriter, r *http.Request) {
	name := chi.URLParam(r, "name")
	if !containsName(f.d.Views.Names(), name) {
		f.WriteError(w, r, errs.E(errs.NotFound, "no projection of that name (there are %v)", f.d.Views.Names()))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	flusher, _ := w.(http.Flusher)
	var last time.Time
	st, err := f.d.Views.Rebuild(r.Context(), name, func(done, total uint64) {
		if time.Since(last) < 100*time.Millisecond && done != total {
			return
		}
		last = time.Now()
		_ = enc.Encode(map[string]uint64{"done": done, "total": total})
		if flusher != nil {
			flusher.Flush()
		}
	})
	if err != nil {
		httpapi.LogError(f.d.Logger, r, err)
		_ = enc.Encode(map[string]string{"error": err.Error()})
		return
	}
	_ = enc.Encode(map[string]any{"status": st})
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func (f *Face) listDLQ(w http.ResponseWriter, r *http.Request) {
	letters, err := deadletter.List(r.Context(), f.d.JS, f.d.Store, f.d.Names)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if letters == nil {
		letters = []deadletter.DeadLetter{}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"dead_letters": letters})
}

func (f *Face) redrive(w http.ResponseWriter, r *http.Request) {
	seq, err := strconv.ParseUint(chi.URLParam(r, "seq"), 10, 64)
	if err != nil {
		f.WriteError(w, r, errs.InvalidField("seq", "seq must be a number"))
		return
	}
	d, err := deadletter.Redrive(r.Context(), f.d.JS, f.d.Names, seq)
	if errors.Is(err, deadletter.ErrNotFound) {
		f.WriteError(w, r, errs.E(errs.NotFound, "no dead-letter entry %d", seq))
		return
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"redriven": d})
}

// rotateSigningKey makes the agent-token key published as next the one that signs; the previous key stays in the
// JWKS until its tokens have expired.
func (f *Face) rotateSigningKey(w http.ResponseWriter, r *http.Request) {
	rot, err := f.d.Signer.Rotate(r.Context())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, rot)
}
