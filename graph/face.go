// Package graph is the Fixie face: GraphQL at /graphql (gqlgen), with queries and mutations over HTTP POST and
// subscriptions over websocket (graphql-transport-ws and the legacy graphql-ws), authenticated by API key — in the
// Authorization header, or for a websocket in connection_init's payload. The schema is schema.graphqls; gqlgen
// generates graph/generated (never edited by hand); the resolvers here call commands for writes and read models or
// the log for reads.
//
// It must not be imported by handlers or by the command side.
package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/router"
	"github.com/contrailhq/contrail/projections"
)

// EmbedURLs signs embed URLs.
type EmbedURLs interface {
	EmbedURL(ctx context.Context, embedID string) (string, error)
}

// EmbedLog loads an embed from the log (commands.Embeds).
type EmbedLog interface {
	Load(ctx context.Context, id string) (commands.Embed, error)
}

// AgentCommands is what the face asks of the agent commands (commands.Agents).
type AgentCommands interface {
	Find(ctx context.Context, actor auth.Principal, ref string) (agents.Info, error)
	Register(ctx context.Context, actor auth.Principal, in commands.AgentInput) (commands.AgentChange, error)
	Update(ctx context.Context, actor auth.Principal, in commands.AgentInput) (commands.AgentChange, error)
	Delete(ctx context.Context, actor auth.Principal, handle string) (commands.AgentChange, error)
	Refresh(ctx context.Context, actor auth.Principal, handle string) (commands.AgentChange, error)
}

// Usage reports an account's daily query limit and how much of it is used (commands.Accounts).
type Usage interface {
	DailyUsage(ctx context.Context, accountID string) (limit, used int, err error)
}

// Deps are what the face uses.
type Deps struct {
	AgentCommands AgentCommands
	Usage         Usage
	Sessions      SessionCommands
	Views         *projections.Runner
	Store         *eventstore.Store
	Agents        *agents.Registry
	// NC carries the live token deltas of replies (core NATS).
	NC     *nats.Conn
	Names  natsx.Names
	Embeds EmbedURLs
	// EmbedLog reads an embed from the log when the embeds read model does not show it yet.
	EmbedLog EmbedLog
	Auth     httpapi.Authenticator
	// Limiter applies the per-key request rate to websockets, which the HTTP layer lets through unauthenticated.
	Limiter httpapi.Limiter
	Logger  *slog.Logger
	// KeepAlive is the websocket keep-alive interval (default 15s).
	KeepAlive time.Duration
	// Router answers the route query (nil: it answers nothing).
	Router Router
}

// Router ranks agents for a query (internal/router's Index).
type Router interface {
	Rank(ctx context.Context, account, query string, k int) ([]router.Match, error)
	Fits(score float64) bool
}

// Face is the /graphql face.
type Face struct {
	d   Deps
	srv *handler.Server
}

// New builds the GraphQL server.
func New(d Deps) *Face {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.KeepAlive == 0 {
		d.KeepAlive = 15 * time.Second
	}
	f := &Face{d: d}
	srv := handler.New(generated.NewExecutableSchema(generated.Config{Resolvers: &Resolver{d: d}}))
	srv.AddTransport(transport.Websocket{
		// Keys travel in a header or in connection_init, never in a cookie, so a page of another origin cannot
		// ride on a user's credentials: any origin may connect.
		Implementation:        transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{OriginPatterns: []string{"*"}}},
		InitFunc:              f.initWebsocket,
		InitTimeout:           10 * time.Second,
		KeepAlivePingInterval: d.KeepAlive,
		PongOnlyInterval:      d.KeepAlive,
	})
	srv.AddTransport(transport.Options{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	// A query may not ask for more than this many fields (nested inReplyTo chains, huge lists of aliases).
	srv.Use(extension.FixedComplexityLimit(maxComplexity))
	srv.SetErrorPresenter(f.presentError)
	srv.SetRecoverFunc(func(ctx context.Context, v any) error {
		d.Logger.Error("panic in resolver", "panic", v)
		return errors.New("panic in resolver")
	})
	f.srv = srv
	return f
}

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return "/graphql" }

// Bounds of one request.
const (
	// maxBody leaves room for a message with a data: URI embed of the largest size.
	maxBody       = commands.MaxEmbedSize*4/3 + 1<<20
	maxComplexity = 5000
)

// Routes implements httpapi.Face.
func (f *Face) Routes(r chi.Router) {
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodPost {
			// gqlgen answers any other content type with "transport not supported", which does not say what it
			// takes.
			if err := checkContentType(req.Header.Get("Content-Type")); err != nil {
				f.WriteError(w, req, err)
				return
			}
			// Read here rather than in gqlgen, which answers a body over the limit (or not JSON) with a 200 or
			// 400 without a code, and repeats a body it cannot decode in its message.
			raw, err := readBody(w, req)
			if err != nil {
				f.WriteError(w, req, err)
				return
			}
			req.Body = io.NopCloser(bytes.NewReader(raw))
		}
		f.srv.ServeHTTP(w, req)
	})
	r.Post("/", h) // queries and mutations
	r.Get("/", h)  // websocket upgrades, for subscriptions
}

// maxContentTypeHeader bounds the Content-Type header quoted back in an error.
const maxContentTypeHeader = 128

// checkContentType accepts the one content type the POST transport reads, application/json (any parameters,
// such as charset), and names it when refusing another.
func checkContentType(ct string) error {
	const takes = `/graphql takes POST bodies of Content-Type application/json ({"query": "...", "variables": {...}}), and websocket upgrades (graphql-transport-ws, graphql-ws) on GET`
	if len(ct) > maxContentTypeHeader {
		return errs.InvalidField("Content-Type", "the Content-Type header is %d bytes long, longer than any this server takes: %s", len(ct), takes)
	}
	mt, _, err := mime.ParseMediaType(ct)
	switch {
	case ct == "":
		return errs.InvalidField("Content-Type", "the request has no Content-Type: %s", takes)
	case err != nil:
		return errs.InvalidField("Content-Type", "Content-Type %q does not read as a media type: %s", ct, takes)
	case mt != "application/json":
		return errs.InvalidField("Content-Type", "Content-Type %s is not supported: %s", mt, takes)
	}
	return nil
}

// readBody reads a POST's body, up to maxBody; a JSON body must be JSON.
func readBody(w http.ResponseWriter, req *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errs.E(errs.TooLarge, "the request body is larger than %d bytes", maxBody)
	}
	if err != nil {
		return nil, errs.InvalidField("body", "could not read the request body: %v", err)
	}
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt == "application/json" && !json.Valid(raw) {
		return nil, errs.InvalidField("body", `the body is not valid JSON: send {"query": "...", "variables": {...}}`)
	}
	return raw, nil
}

// AuthenticatesWebsockets implements httpapi.InitAuthFace: a websocket's key may come in connection_init.
func (f *Face) AuthenticatesWebsockets() {}

// WriteError implements httpapi.Face: GraphQL's error shape, with the status the code maps to.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.LogError(f.d.Logger, r, err)
	httpapi.SetRetryAfter(w, err)
	code := errs.CodeOf(err)
	httpapi.WriteJSON(w, errs.HTTPStatus(code), map[string]any{"errors": []*gqlerror.Error{f.coded(err)}})
}

// initWebsocket authenticates a websocket: by the upgrade request's header (already checked by the HTTP layer), or
// by connection_init's payload {"Authorization": "Bearer <key>"}. A refusal closes the socket with 4403.
func (f *Face) initWebsocket(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
	if _, ok := auth.From(ctx); ok {
		return ctx, nil, nil
	}
	refuse := func(err error) (context.Context, *transport.InitPayload, error) {
		ctx = transport.WithWebsocketCloseCode(ctx, 4403)
		ctx = transport.AppendCloseReason(ctx, "Forbidden: "+errs.MessageOf(err))
		return ctx, nil, err
	}
	if _, ok := auth.BearerToken(payload.Authorization()); !ok {
		return refuse(errs.E(errs.Unauthorized, "missing API key: send {\"Authorization\": \"Bearer <key>\"} in connection_init"))
	}
	// As for any request of this face: a valid key, no agent token, within the key's request rate.
	p, err := httpapi.Admit(ctx, f.d.Auth, f.d.Limiter, payload.Authorization(), false)
	if err != nil {
		if errs.CodeOf(err) == errs.Internal {
			f.d.Logger.Error("authenticate websocket", "err", err)
		}
		return refuse(err)
	}
	return auth.With(ctx, p), nil, nil
}

// Error codes of extensions.code.
var extensionCodes = map[errs.Code]string{
	errs.Invalid:          "BAD_USER_INPUT",
	errs.NotFound:         "NOT_FOUND",
	errs.Conflict:         "CONFLICT",
	errs.Unauthorized:     "UNAUTHENTICATED",
	errs.Forbidden:        "FORBIDDEN",
	errs.RateLimited:      "RATE_LIMITED",
	errs.TooLarge:         "PAYLOAD_TOO_LARGE",
	errs.MethodNotAllowed: "METHOD_NOT_ALLOWED",
	errs.Unavailable:      "SERVICE_UNAVAILABLE",
	errs.DeadlineExpired:  "TIMEOUT",
	errs.Internal:         "INTERNAL_SERVER_ERROR",
}

// ExtensionCode is the extensions.code an error shows.
func ExtensionCode(err error) string { return extensionCodes[errs.CodeOf(err)] }

// presentError maps a resolver's error to a GraphQL error with extensions.code; errors gqlgen raised itself
// (parse, validation) keep theirs. Internal errors are logged and shown as "internal error".
func (f *Face) presentError(ctx context.Context, err error) *gqlerror.Error {
	var gqlErr *gqlerror.Error
	if errors.As(err, &gqlErr) && gqlErr.Err == nil {
		return ownError(gqlErr) // gqlgen's own: parse and validation errors, with their codes
	}
	out := graphql.DefaultErrorPresenter(ctx, err)
	coded := f.coded(err)
	if coded.Extensions["code"] == "INTERNAL_SERVER_ERROR" {
		f.d.Logger.Error("graphql resolver failed", "path", out.Path.String(), "err", err)
	}
	out.Message, out.Extensions = coded.Message, coded.Extensions
	return out
}

// maxOwnMessage bounds the message of one of gqlgen's own errors, which may quote the request.
const maxOwnMessage = 500

// ownError completes an error gqlgen raised itself: one about a variable (missing, of the wrong type) names it, in
// its message and as extensions.field, as the face's own errors name their field; a message that quotes the
// request is cut short.
func ownError(e *gqlerror.Error) *gqlerror.Error {
	out := *e
	if len(out.Path) >= 2 && out.Path[0] == ast.PathName("variable") {
		// The path below the variable names the field inside it: agentData.queries[3].
		field := strings.TrimPrefix(out.Path[1:].String(), ".")
		out.Extensions = maps.Clone(out.Extensions)
		if out.Extensions == nil {
			out.Extensions = map[string]any{}
		}
		out.Extensions["field"] = field
		out.Message = "variable $" + field + ": " + out.Message
	}
	if len(out.Message) > maxOwnMessage {
		cut := maxOwnMessage
		for cut > 0 && !utf8.RuneStart(out.Message[cut]) {
			cut--
		}
		out.Message = out.Message[:cut] + "…"
	}
	return &out
}

func (f *Face) coded(err error) *gqlerror.Error {
	e := &gqlerror.Error{Message: errs.MessageOf(err), Extensions: map[string]any{"code": ExtensionCode(err)}}
	if ce := errs.As(err); ce != nil {
		if ce.Field != "" {
			e.Extensions["field"] = ce.Field
		}
		if ce.RetryAfter > 0 {
			e.Extensions["retryAfterSeconds"] = int((ce.RetryAfter + time.Second - 1) / time.Second)
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		e.Message = "the request took too long"
	}
	return e
}

// Operations lists the schema's root fields by kind ("query", "mutation", "subscription"), for tests that must cover
// every operation (the route and operation matrix).
func Operations() map[string][]string {
	s := generated.NewExecutableSchema(generated.Config{}).Schema()
	out := map[string][]string{}
	for kind, def := range map[string]*ast.Definition{"query": s.Query, "mutation": s.Mutation, "subscription": s.Subscription} {
		if def == nil {
			continue
		}
		for _, fd := range def.Fields {
			if len(fd.Name) > 2 && fd.Name[:2] == "__" {
				continue
			}
			out[kind] = append(out[kind], fd.Name)
		}
	}
	return out
}

// SessionCommands are the session commands the GraphQL face calls (commands.Sessions).
type SessionCommands interface {
	Create(ctx context.Context, actor auth.Principal, in commands.NewSession) (commands.CreatedSession, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (uint64, error)
	Get(ctx context.Context, actor auth.Principal, id string) (session.State, events.Version, error)
	Post(ctx context.Context, actor auth.Principal, in commands.NewSessionMessage) (commands.PostedMessage, error)
	Repo() *eventstore.Repo[session.State, *session.State]
}
