package userstorage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
)

// Prefix is where the face is mounted. It is a face of its own under /api, so that other packages can mount
// theirs beside it (/api/agents, /api/embeds...): chi routes each request to the longest prefix.
const Prefix = "/api/userstorage"

// AgentVisible says whether principal p may use the storage of agentID. The agent registry decides (another
// account's unpublished agent is not visible, and answers 404); nil lets every agent ID through.
type AgentVisible func(ctx context.Context, p auth.Principal, agentID string) (bool, error)

// AgentNames resolves an agent's Fixie name, "<username>/<handle>", to its ID for principal p (errs.NotFound when p
// may not use it).
type AgentNames func(ctx context.Context, p auth.Principal, name string) (string, error)

// Face is Fixie's user storage API:
//
//	GET    /api/userstorage/{agentId}        -> [{"key": ...}]
//	POST   /api/userstorage/{agentId}/{key}  body {"data": <json>}
//	GET    /api/userstorage/{agentId}/{key}  -> {"data": <json>}
//	HEAD   /api/userstorage/{agentId}/{key}  -> 200 or 404
//	DELETE /api/userstorage/{agentId}/{key}
//
// The Fixie SDK names the agent by the "aid" of its token, "<username>/<handle>", written into the path as it is:
// /api/userstorage/{username}/{agentHandle}/{key} is that agent's key, and /api/userstorage/{username}/{agentHandle}
// its list when the caller is that agent (from anyone else it is key {agentHandle} of agent ID {username}). Both
// names reach one storage.
//
// Callers are a user with an API key, or an agent with the token the platform gave it for that user, which only
// reaches the storage of the agent it was issued for.
type Face struct {
	store   *Store
	visible AgentVisible
	names   AgentNames
	logger  *slog.Logger
}

// NewFace returns the face over store.
func NewFace(store *Store, visible AgentVisible, logger *slog.Logger) *Face {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Face{store: store, visible: visible, logger: logger}
}

// WithAgentNames lets the face resolve agents named "<username>/<handle>" (without it, only the agent a token was
// issued for reaches its storage by that name).
func (f *Face) WithAgentNames(names AgentNames) *Face {
	f.names = names
	return f
}

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return Prefix }

// AcceptsAgentTokens implements httpapi.AgentFace: user storage is what agents call back for.
func (f *Face) AcceptsAgentTokens() {}

// WriteError implements httpapi.Face, in Contrail's REST shape.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(f.logger, w, r, err)
}

// Routes implements httpapi.Face.
func (f *Face) Routes(r chi.Router) {
	r.Get("/{agentId}", f.list)
	for _, pattern := range []string{"/{agentId}/{key}", "/{username}/{agentHandle}/{key}"} {
		r.Get(pattern, f.get)
		r.Head(pattern, f.head)
		r.Post(pattern, f.put)
		r.Delete(pattern, f.delete)
	}
}

// param returns a URL parameter decoded. chi matches on the escaped path when the request has one (a key
// holding "%2F"), and then its parameters are still escaped.
func param(r *http.Request, name string) (string, error) {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v, nil
	}
	out, err := url.PathUnescape(v)
	if err != nil {
		return "", errs.InvalidField(name, "%s is not a valid URL path segment", name)
	}
	return out, nil
}

// target is the agent a request names, by ID or Fixie name, and the key, if it names one (see Face).
func target(r *http.Request) (agent, key string, hasKey bool, err error) {
	if chi.URLParam(r, "username") != "" {
		owner, err1 := param(r, "username")
		handle, err2 := param(r, "agentHandle")
		key, err3 := param(r, "key")
		return owner + "/" + handle, key, true, errors.Join(err1, err2, err3)
	}
	if agent, err = param(r, "agentId"); err != nil || chi.URLParam(r, "key") == "" {
		return agent, "", false, err
	}
	if key, err = param(r, "key"); err != nil {
		return "", "", false, err
	}
	if p, _ := auth.From(r.Context()); r.Method == http.MethodGet && p.AgentName != "" && p.AgentName == agent+"/"+key {
		return p.AgentName, "", false, nil // the SDK's list of its own keys
	}
	return agent, key, true, nil
}

// scope is the caller's storage for the agent in the path.
func (f *Face) scope(r *http.Request) (Scope, error) {
	p, ok := auth.From(r.Context())
	if !ok {
		return Scope{}, errs.E(errs.Unauthorized, "user storage needs a user")
	}
	agentID, _, _, err := target(r)
	if err != nil {
		return Scope{}, err
	}
	if strings.Contains(agentID, "/") {
		// One agent, one storage: a Fixie name reaches what the agent's ID does.
		switch {
		case p.AgentName != "" && p.AgentName == agentID:
			agentID = p.AgentID
		case f.names != nil:
			if agentID, err = f.names(r.Context(), p, agentID); err != nil {
				return Scope{}, err
			}
		default:
			return Scope{}, errs.NotFoundf("agent", agentID)
		}
	}
	sc := Scope{Account: p.AccountID, AgentID: agentID}
	if err := sc.validate(); err != nil {
		return Scope{}, err
	}
	if p.AgentID != "" && p.AgentID != agentID {
		return Scope{}, errs.E(errs.Forbidden, "this token was issued to another agent; it reaches only that agent's storage")
	}
	if f.visible != nil {
		ok, err := f.visible(r.Context(), p, agentID)
		if err != nil {
			return Scope{}, err
		}
		if !ok {
			return Scope{}, errs.NotFoundf("agent", agentID)
		}
	}
	return sc, nil
}

func (f *Face) scopeAndKey(r *http.Request) (Scope, string, error) {
	sc, err := f.scope(r)
	if err != nil {
		return sc, "", err
	}
	_, key, _, err := target(r)
	return sc, key, err
}

type keyItem struct {
	Key string `json:"key"`
}

func (f *Face) list(w http.ResponseWriter, r *http.Request) {
	sc, err := f.scope(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	keys, err := f.store.Keys(r.Context(), sc)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	out := make([]keyItem, len(keys))
	for i, k := range keys {
		out[i] = keyItem{Key: k}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
}

func (f *Face) get(w http.ResponseWriter, r *http.Request) {
	if _, _, hasKey, err := target(r); err == nil && !hasKey {
		f.list(w, r)
		return
	}
	sc, key, err := f.scopeAndKey(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	value, ok, err := f.store.Get(r.Context(), sc, key)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.E(errs.NotFound, "no value stored under key %q", key))
		return
	}
	// The stored JSON goes out as it came in, without a decode and encode of up to a MiB.
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, `{"data":`)
	_, _ = w.Write(value)
	_, _ = io.WriteString(w, "}\n")
}

func (f *Face) head(w http.ResponseWriter, r *http.Request) {
	sc, key, err := f.scopeAndKey(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok, err := f.store.Exists(r.Context(), sc, key)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// bodyLimit leaves room around a value of MaxValueSize for the {"data": ...} around it.
const bodyLimit = MaxValueSize + 4<<10

func (f *Face) put(w http.ResponseWriter, r *http.Request) {
	sc, key, err := f.scopeAndKey(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, bodyLimit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		f.WriteError(w, r, errs.E(errs.TooLarge, "the request body is larger than %d bytes; user storage keeps values of up to %d bytes (1 MiB)", bodyLimit, MaxValueSize))
		return
	}
	if err != nil {
		f.WriteError(w, r, errs.E(errs.Invalid, "read request body: %v", err))
		return
	}
	var in struct {
		Data json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&in); err != nil {
		f.WriteError(w, r, errs.InvalidField("data", `the body must be a JSON object {"data": <any JSON value>}: %v`, err))
		return
	}
	if len(in.Data) == 0 {
		f.WriteError(w, r, errs.Missing("data"))
		return
	}
	if err := f.store.Put(r.Context(), sc, key, in.Data); err != nil {
		f.WriteError(w, r, err)
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, keyItem{Key: key})
}

func (f *Face) delete(w http.ResponseWriter, r *http.Request) {
	sc, key, err := f.scopeAndKey(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok, err := f.store.Delete(r.Context(), sc, key)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !ok {
		f.WriteError(w, r, errs.E(errs.NotFound, "no value stored under key %q", key))
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"key": key, "deleted": true})
}
