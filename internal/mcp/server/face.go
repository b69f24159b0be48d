package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/vsindex"
	"github.com/contrailhq/contrail/projections"
)

// SessionCommands are the session commands an agent's tool calls: a session per conversation, a query posted to it.
type SessionCommands interface {
	Create(ctx context.Context, actor auth.Principal, in commands.NewSession) (commands.CreatedSession, error)
	Post(ctx context.Context, actor auth.Principal, in commands.NewSessionMessage) (commands.PostedMessage, error)
	Get(ctx context.Context, actor auth.Principal, id string) (session.State, events.Version, error)
}

// ExecutionCommands start and read executions of the account's tasks.
type ExecutionCommands interface {
	Create(ctx context.Context, actor auth.Principal, request, task string, input, metadata json.RawMessage) (commands.Written[execution.Execution], error)
	Get(ctx context.Context, actor auth.Principal, id string) (execution.Execution, uint64, error)
}

// VectorStoreCommands read and search the account's vector stores.
type VectorStoreCommands interface {
	Get(ctx context.Context, actor auth.Principal, id string) (vectorstore.State, error)
	Search(ctx context.Context, actor auth.Principal, id string, in commands.SearchRequest) ([]vsindex.Hit, error)
}

// EmbedURLs signs the URL of an embed a reply carries.
type EmbedURLs interface {
	EmbedURL(ctx context.Context, embedID string) (string, error)
}

// Deps are what the face calls.
type Deps struct {
	Sessions     SessionCommands
	Executions   ExecutionCommands
	VectorStores VectorStoreCommands
	// Builtins are the agents every account has (the registry's).
	Builtins func() []agent.Info
	Views    *projections.Runner
	Store    *eventstore.Store
	Embeds   EmbedURLs
	Logger   *slog.Logger
	// ReplyWait bounds the wait for an agent's reply (default 5 minutes); TaskWait the wait for an execution to end
	// or to ask for input (default 2 minutes): past it, the tool answers the execution's ID and status.
	ReplyWait time.Duration
	TaskWait  time.Duration
}

// Face is the /mcp face.
type Face struct {
	d       Deps
	handler http.Handler
	schemas *mcp.SchemaCache
}

// New returns the face.
func New(d Deps) *Face {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.ReplyWait <= 0 {
		d.ReplyWait = 5 * time.Minute
	}
	if d.TaskWait <= 0 {
		d.TaskWait = 2 * time.Minute
	}
	f := &Face{d: d, schemas: mcp.NewSchemaCache()}
	f.handler = mcp.NewStreamableHTTPHandler(f.serverOf, &mcp.StreamableHTTPOptions{
		// Stateless: a request carries everything (its key; the tools are the account's as they are now), so any
		// node answers it and no session made with one key can be used with another's.
		Stateless: true,
		// The SDK refuses a request reaching a loopback address with another Host, against DNS rebinding, which
		// also refuses every request a proxy on the same machine forwards. Every request here carries an API key a
		// page rebinding a name cannot have, so the check guards nothing and would break such deployments.
		DisableLocalhostProtection: true,
		MaxRequestBodyBytes:        maxRequestBody,
	})
	return f
}

// maxRequestBody bounds one JSON-RPC message (a task's input is at most 256 KiB of it).
const maxRequestBody = 1 << 20

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return "/mcp" }

// Routes implements httpapi.Face: every request reaching them carries the caller's principal.
func (f *Face) Routes(r chi.Router) {
	r.Handle("/", http.HandlerFunc(f.serve))
}

// serverKey carries the request's server from serve to serverOf.
type serverKey struct{}

// serve builds the caller's server (its tools as they are now) before the SDK reads the request, so that a read
// model that cannot be read is answered as an error of this face rather than as a server without tools.
func (f *Face) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		// What the SDK would refuse in plain text is refused here in the face's shape, a JSON-RPC error.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBody+1))
		switch {
		case err != nil:
			f.WriteError(w, r, errs.E(errs.Invalid, "the request body could not be read"))
			return
		case len(body) > maxRequestBody:
			f.WriteError(w, r, errs.E(errs.TooLarge, "the request body is longer than %d bytes", maxRequestBody))
			return
		case !json.Valid(body):
			f.WriteError(w, r, errs.E(errs.Invalid, "the request body is not JSON: send a JSON-RPC message"))
			return
		case !accepts(r.Header.Values("Accept")):
			f.WriteError(w, r, errs.E(errs.Invalid, "the request's Accept header must name both application/json and "+
				"text/event-stream (MCP's streamable HTTP), for a JSON-RPC body"))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		p, _ := auth.From(r.Context())
		s, err := f.newServer(r.Context(), p)
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), serverKey{}, s))
	}
	f.handler.ServeHTTP(w, r)
}

// accepts reports whether the Accept header takes both answers streamable HTTP may give, as the SDK reads it.
func accepts(values []string) bool {
	var jsonOK, streamOK bool
	for _, v := range values {
		for _, token := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(strings.TrimSpace(token), ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

func (f *Face) serverOf(r *http.Request) *mcp.Server {
	s, _ := r.Context().Value(serverKey{}).(*mcp.Server)
	return s
}

// WriteError implements httpapi.Face: a JSON-RPC error object (what an MCP client reads) with the HTTP status of
// the error's code, 401 for a missing or wrong key.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.LogError(f.d.Logger, r, err)
	httpapi.SetRetryAfter(w, err)
	code := errs.CodeOf(err)
	status := errs.HTTPStatus(code)
	rpc := -32603 // internal error
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		rpc = -32001
	case strings.Contains(errs.MessageOf(err), "not JSON"):
		rpc = -32700 // parse error
	case status < 500:
		rpc = -32600 // invalid request
	}
	data := map[string]string{"code": string(code)}
	if e := errs.As(err); e != nil && e.Field != "" {
		data["field"] = e.Field
	}
	httpapi.WriteJSON(w, status, map[string]any{"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": rpc, "message": errs.MessageOf(err), "data": data}})
}

// newServer is the caller's MCP server: the account's agents, tasks and stores as tools, and its sessions and
// executions as resources.
func (f *Face) newServer(ctx context.Context, p auth.Principal) (*mcp.Server, error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "contrail", Title: "Contrail", Version: "1"}, &mcp.ServerOptions{
		Instructions: "Contrail's agents (ask_*), Julep tasks (task_*) and vector store searches (search_*) of your account.",
		SchemaCache:  f.schemas,
	})
	if err := f.addAgentTools(ctx, s, p); err != nil {
		return nil, err
	}
	if err := f.addTaskTools(ctx, s, p); err != nil {
		return nil, err
	}
	if err := f.addStoreTools(ctx, s, p); err != nil {
		return nil, err
	}
	f.addResources(s, p)
	return s, nil
}

// toolError is a tool's result for a failure: isError, with what the user may read of it and the field at fault
// named. A failure of the platform's own is logged and shown as "internal error".
func (f *Face) toolError(tool string, err error) *mcp.CallToolResult {
	msg := errs.MessageOf(err)
	if e := errs.As(err); e != nil && e.Field != "" && !containsWord(msg, e.Field) {
		msg = e.Field + ": " + msg
	}
	if errs.CodeOf(err) == errs.Internal {
		f.d.Logger.Error("mcp tool failed", "tool", tool, "err", err)
	}
	r := &mcp.CallToolResult{}
	r.SetError(fmt.Errorf("%s", msg))
	return r
}
