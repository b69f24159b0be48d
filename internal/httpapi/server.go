package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/metrics"
)

// Face is one API surface mounted at a prefix.
type Face interface {
	// Prefix is where the face is mounted: "/v1", "/api", "/graphql", "/admin".
	Prefix() string
	// Routes registers the face's handlers; every request reaching them carries a principal (auth.From).
	Routes(r chi.Router)
	// WriteError answers err in the face's own shape, with the status its code maps to.
	WriteError(w http.ResponseWriter, r *http.Request, err error)
}

// OpenFace is a face with routes that need no key (signed blob URLs, the JWKS). They are registered at the root.
type OpenFace interface {
	OpenRoutes(r chi.Router)
}

// InitAuthFace is a face that authenticates websocket connections itself, from their first message (GraphQL's
// connection_init), so an upgrade request without a header is let through to it.
type InitAuthFace interface {
	AuthenticatesWebsockets()
}

// AgentFace is a face that agents may call with the token the platform gave them (user storage, agent-to-agent
// calls). Every other face refuses a principal that carries an AgentID with 403: an agent acts for its user only
// where the platform means it to.
type AgentFace interface {
	AcceptsAgentTokens()
}

// KeySet publishes the public keys agents verify the platform's tokens with.
type KeySet interface {
	JWKS(ctx context.Context) (auth.JWKS, error)
}

// Authenticator turns an API key or an agent token into a principal.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (auth.Principal, error)
}

// Limiter decides whether a principal may make a request now (rate limits per key).
type Limiter interface {
	AllowRequest(ctx context.Context, p auth.Principal) error
}

// Config wires the HTTP port.
type Config struct {
	Auth    Authenticator
	Limiter Limiter
	// KeySet, when set, is served at /.well-known/jwks.json, open to all.
	KeySet  KeySet
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// Ready says whether the node can serve: nil when ready, or what is missing.
	Ready func(ctx context.Context) error
	// ReadyDetail, when set, adds to /readyz's answer what the node can and cannot do (code_interpreter), ready
	// or not: it must answer at once, without starting anything.
	ReadyDetail func() map[string]any
	// Live says whether the node is alive: nil, or why it cannot recover without a restart (its NATS connection
	// closed for good). /healthz answers 503 with the reason, so that a supervisor restarts the node rather than
	// leave it not ready forever. Nil: always alive.
	Live  func(ctx context.Context) error
	Faces []Face
	// Open are routes at the root that need no key at all: the web console, a public page that calls the faces
	// with the key its user types.
	Open []OpenFace
}

// New builds the router.
func New(cfg Config) chi.Router {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	r := chi.NewRouter()
	r.Use(middleware.RequestID, middleware.RealIP, accessLog(cfg.Logger, cfg.Metrics), recoverer(cfg.Logger))
	r.Get("/healthz", func(w http.ResponseWriter, req *http.Request) {
		if cfg.Live != nil {
			if err := cfg.Live(req.Context()); err != nil {
				WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "dead", "reason": err.Error()})
				return
			}
		}
		WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ctx, cancel := context.WithTimeout(req.Context(), 3*time.Second)
		defer cancel()
		body := map[string]any{"status": "ready"}
		if cfg.ReadyDetail != nil {
			for k, v := range cfg.ReadyDetail() {
				body[k] = v
			}
		}
		if err := cfg.Ready(ctx); err != nil {
			body["status"], body["reason"] = "not ready", err.Error()
			WriteJSON(w, http.StatusServiceUnavailable, body)
			return
		}
		WriteJSON(w, http.StatusOK, body)
	})
	if cfg.KeySet != nil {
		r.Get("/.well-known/jwks.json", func(w http.ResponseWriter, req *http.Request) {
			set, err := cfg.KeySet.JWKS(req.Context())
			if err != nil {
				WriteError(cfg.Logger, w, req, err)
				return
			}
			// Agents refetch when a token names a key they lack, and the key that signs after a rotation is
			// published a rotation ahead, so a few minutes of caching never hides a key in use.
			w.Header().Set("Cache-Control", "public, max-age=300")
			WriteJSON(w, http.StatusOK, set)
		})
	}
	if cfg.Metrics != nil {
		// Metrics describe the whole platform: only an admin key reads them (Prometheus sends it as a bearer
		// token).
		metrics := &restFace{logger: cfg.Logger}
		r.With(authenticate(cfg.Auth, nil, metrics, false), adminOnly(metrics)).
			Method(http.MethodGet, "/metrics", promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{}))
	}
	for _, f := range cfg.Faces {
		if of, ok := f.(OpenFace); ok {
			of.OpenRoutes(r)
		}
	}
	for _, o := range cfg.Open {
		o.OpenRoutes(r)
	}
	for _, f := range cfg.Faces {
		_, initAuth := f.(InitAuthFace)
		r.Route(f.Prefix(), func(sub chi.Router) {
			sub.Use(authenticate(cfg.Auth, cfg.Limiter, f, initAuth))
			sub.MethodNotAllowed(methodNotAllowed(f.WriteError))
			f.Routes(sub)
		})
	}
	r.MethodNotAllowed(methodNotAllowed(func(w http.ResponseWriter, req *http.Request, err error) {
		WriteError(cfg.Logger, w, req, err)
	}))
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		// Faces may nest (/api and /api/userstorage): the longest matching prefix answers.
		var owner Face
		for _, f := range cfg.Faces {
			if strings.HasPrefix(req.URL.Path, f.Prefix()+"/") || req.URL.Path == f.Prefix() {
				if owner == nil || len(f.Prefix()) > len(owner.Prefix()) {
					owner = f
				}
			}
		}
		if owner != nil {
			owner.WriteError(w, req, errs.E(errs.NotFound, "no route %s %s", req.Method, req.URL.Path))
			return
		}
		WriteJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"code": "not_found", "message": "no route " + req.Method + " " + req.URL.Path}})
	})
	return r
}

// CheckPathIDs is middleware that answers 400 naming the parameter (through write, in the face's shape) when an ID
// in the path is not one the platform hands out (ids.Check), before any handler sees it. kinds maps a route
// parameter to its kind; other parameters pass. Use it on a group (chi's Group or With), whose middleware runs
// after routing, when the parameters are known.
func CheckPathIDs(kinds map[string]ids.Kind, write func(http.ResponseWriter, *http.Request, error)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if rc := chi.RouteContext(r.Context()); rc != nil {
				for i, name := range rc.URLParams.Keys {
					if k, ok := kinds[name]; ok {
						if err := ids.Check(name, k, rc.URLParams.Values[i]); err != nil {
							write(w, r, err)
							return
						}
					}
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// methodNotAllowed answers a method a route does not have with a 405 in the face's error shape (chi's own has an
// empty body, which no client can read).
func methodNotAllowed(write func(http.ResponseWriter, *http.Request, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		write(w, r, errs.E(errs.MethodNotAllowed, "%s is not a method of %s", r.Method, r.URL.Path))
	}
}

// restFace answers errors of the root's own guarded endpoints in Contrail's REST shape.
type restFace struct{ logger *slog.Logger }

func (f *restFace) Prefix() string    { return "" }
func (f *restFace) Routes(chi.Router) {}
func (f *restFace) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	WriteError(f.logger, w, r, err)
}

func adminOnly(f Face) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p, _ := auth.From(r.Context()); !p.Admin {
				f.WriteError(w, r, errs.E(errs.Forbidden, "this needs an admin key"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// authenticate requires a valid key on every route of a face, answering 401 in the face's shape (see Admit).
func authenticate(a Authenticator, lim Limiter, f Face, initAuth bool) func(http.Handler) http.Handler {
	_, agents := f.(AgentFace)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			header := r.Header.Get("Authorization")
			if header == "" && initAuth && isWebsocketUpgrade(r) {
				next.ServeHTTP(w, r) // the face reads the key from connection_init and calls Admit itself
				return
			}
			p, err := Admit(r.Context(), a, lim, header, agents)
			if err != nil {
				f.WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.With(r.Context(), p)))
		})
	}
}

// Admit decides whether a request may proceed, given its Authorization value ("Bearer <key or agent token>"):
// the credential must authenticate (errs.Unauthorized otherwise); a principal that is an agent is refused
// (errs.Forbidden) unless agentsAllowed; and the limiter must let the request through (errs.RateLimited, with
// a Retry-After). Faces run it on every request through their prefix; a face that authenticates websockets
// from their first message (InitAuthFace) calls it with the payload's Authorization value.
func Admit(ctx context.Context, a Authenticator, lim Limiter, authorization string, agentsAllowed bool) (auth.Principal, error) {
	token, ok := auth.BearerToken(authorization)
	if !ok {
		return auth.Principal{}, errs.E(errs.Unauthorized, "missing API key: send it as 'Authorization: Bearer <key>'")
	}
	p, err := a.Authenticate(ctx, token)
	if err != nil {
		return auth.Principal{}, err
	}
	if p.AgentID != "" && !agentsAllowed {
		return auth.Principal{}, errs.E(errs.Forbidden, "an agent token can only call the platform's agent endpoints (user storage); use an API key")
	}
	if lim != nil {
		if err := lim.AllowRequest(ctx, p); err != nil {
			return auth.Principal{}, err
		}
	}
	return p, nil
}

func isWebsocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// WriteJSON answers v as JSON.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// SetRetryAfter adds a Retry-After header for rate-limit errors.
func SetRetryAfter(w http.ResponseWriter, err error) {
	if e := errs.As(err); e != nil && e.RetryAfter > 0 {
		secs := int((e.RetryAfter + time.Second - 1) / time.Second)
		w.Header().Set("Retry-After", strconv.Itoa(secs))
	}
}

// LogError logs an error the user sees only as "internal error", in full, with the request's ID, and a conflict with
// what conflicted. Other refusals are the client's to read in the answer.
func LogError(logger *slog.Logger, r *http.Request, err error) {
	if logger == nil {
		return // a face built without one (a test of its error shapes): answering must not fail for want of a log
	}
	switch {
	case errs.CodeOf(err) == errs.Internal || errors.Is(err, context.DeadlineExceeded):
		logger.Error("request failed", "method", r.Method, "path", r.URL.Path,
			"request_id", middleware.GetReqID(r.Context()), "err", err)
	case errs.CodeOf(err) == errs.Conflict:
		// A conflict is contention the command's retries did not get past, or a create that found its object: the
		// access log's 409 alone does not say which object, or why.
		logger.Warn("request conflicted", "method", r.Method, "path", r.URL.Path,
			"request_id", middleware.GetReqID(r.Context()), "err", err)
	}
}

// ErrorBody is the error shape of Contrail's own REST endpoints (/api, /admin).
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail says what went wrong.
type ErrorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// WriteError answers err in Contrail's own REST shape.
func WriteError(logger *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	LogError(logger, r, err)
	code := errs.CodeOf(err)
	d := ErrorDetail{Code: string(code), Message: errs.MessageOf(err)}
	if e := errs.As(err); e != nil {
		d.Field = e.Field
	}
	SetRetryAfter(w, err)
	WriteJSON(w, errs.HTTPStatus(code), ErrorBody{Error: d})
}
