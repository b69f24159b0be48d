package julepapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/julepdocs"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// Deps are what the face uses.
type Deps struct {
	Agents   AgentCommands
	Users    UserCommands
	Sessions SessionCommands
	Docs     DocCommands
	// Tasks and Executions are Julep's tasks and their runs.
	Tasks      TaskCommands
	Executions ExecutionCommands
	Views      *projections.Runner
	Preparer   *julepchat.Preparer
	// Requests maps a request to its ID for retries (a KV bucket with a TTL, RequestsBucketSpec).
	Requests jetstream.KeyValue
	// NC and Store await chats: their answers' subjects and the live subject of their words.
	NC     *nats.Conn
	JS     jetstream.JetStream
	Store  *eventstore.Store
	Names  natsx.Names
	Models []string
	Logger *slog.Logger
	// ChatWait bounds how long a chat request waits for its answer (default 5m); past it the answer is a 504, and
	// the client's retry waits for the same turn.
	ChatWait time.Duration
}

// Face is the /julep face.
type Face struct{ d Deps }

// New returns the face.
func New(d Deps) *Face {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.ChatWait == 0 {
		d.ChatWait = 5 * time.Minute
	}
	return &Face{d: d}
}

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return "/julep" }

// Routes implements httpapi.Face.
func (f *Face) Routes(r chi.Router) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	r.Get("/agents/models", f.listModels)
	r.Group(func(r chi.Router) {
		r.Use(f.checkIDs)
		r.Get("/agents", f.listAgents)
		r.Post("/agents", f.createAgent)
		r.Get("/agents/{agent_id}", f.getAgent)
		r.Post("/agents/{agent_id}", f.createOrUpdateAgent)
		r.Put("/agents/{agent_id}", f.replaceAgent)
		r.Patch("/agents/{agent_id}", f.patchAgent)
		r.Delete("/agents/{agent_id}", f.deleteAgent)
		r.Get("/agents/{agent_id}/tools", f.listTools)
		r.Post("/agents/{agent_id}/tools", f.createTool)
		r.Put("/agents/{agent_id}/tools/{tool_id}", f.replaceTool)
		r.Patch("/agents/{agent_id}/tools/{tool_id}", f.patchTool)
		r.Delete("/agents/{agent_id}/tools/{tool_id}", f.deleteTool)
		r.Get("/agents/{agent_id}/docs", f.listDocs("agent"))
		r.Post("/agents/{agent_id}/docs", f.createDoc("agent"))
		r.Delete("/agents/{agent_id}/docs/{doc_id}", f.deleteDoc("agent"))
		r.Post("/agents/{agent_id}/search", f.searchDocs("agent"))

		r.Get("/users", f.listUsers)
		r.Post("/users", f.createUser)
		r.Get("/users/{user_id}", f.getUser)
		r.Post("/users/{user_id}", f.createOrUpdateUser)
		r.Put("/users/{user_id}", f.replaceUser)
		r.Patch("/users/{user_id}", f.patchUser)
		r.Delete("/users/{user_id}", f.deleteUser)
		r.Get("/users/{user_id}/docs", f.listDocs("user"))
		r.Post("/users/{user_id}/docs", f.createDoc("user"))
		r.Delete("/users/{user_id}/docs/{doc_id}", f.deleteDoc("user"))
		r.Post("/users/{user_id}/search", f.searchDocs("user"))

		r.Get("/docs/{doc_id}", f.getDoc)
		r.Post("/embed", f.embed)

		r.Get("/sessions", f.listSessions)
		r.Post("/sessions", f.createSession)
		r.Get("/sessions/{session_id}", f.getSession)
		r.Post("/sessions/{session_id}", f.createOrUpdateSession)
		r.Put("/sessions/{session_id}", f.replaceSession)
		r.Patch("/sessions/{session_id}", f.patchSession)
		r.Delete("/sessions/{session_id}", f.deleteSession)
		r.Get("/sessions/{session_id}/history", f.history)
		r.Post("/sessions/{session_id}/render", f.render)
		r.Post("/sessions/{session_id}/chat", f.chat)

		r.Get("/agents/{agent_id}/tasks", f.listTasks)
		r.Post("/agents/{agent_id}/tasks", f.createTask)
		r.Post("/agents/{agent_id}/tasks/{task_id}", f.createOrUpdateTask)
		r.Delete("/agents/{agent_id}/tasks/{task_id}", f.deleteTask)
		r.Get("/tasks/{task_id}", f.getTask)
		r.Get("/tasks/{task_id}/executions", f.listExecutions)
		r.Post("/tasks/{task_id}/executions", f.createExecution)
		r.Get("/executions/{execution_id}", f.getExecution)
		r.Put("/executions/{execution_id}", f.updateExecution)
		r.Get("/executions/{execution_id}/transitions", f.listTransitions)
		r.Get("/executions/{execution_id}/transitions/{transition_id}", f.getTransition)
		r.Get("/executions/{execution_id}/transitions.stream", f.transitionsStream)
		r.Get("/executions/{execution_id}/status.stream", f.statusStream)
	})
}

// pathIDs are the path parameters that hold IDs: UUIDs, all of them.
var pathIDs = []string{"agent_id", "user_id", "session_id", "doc_id", "tool_id", "task_id", "execution_id", "transition_id"}

// checkIDs answers 400 naming the parameter when an ID in the path is not a UUID, before any handler sees it; IDs
// are lowered, so that one ID has one spelling in subjects and keys.
func (f *Face) checkIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc := chi.RouteContext(r.Context()); rc != nil {
			for i, name := range rc.URLParams.Keys {
				for _, p := range pathIDs {
					if name != p {
						continue
					}
					v := rc.URLParams.Values[i]
					if err := checkUUID(name, v); err != nil {
						f.WriteError(w, r, err)
						return
					}
					rc.URLParams.Values[i] = canonical(v)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func principal(r *http.Request) auth.Principal {
	p, _ := auth.From(r.Context())
	return p
}

// listModels answers the models agents may name.
func (f *Face) listModels(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID string `json:"id"`
	}
	out := make([]model, len(f.d.Models))
	for i, m := range f.d.Models {
		out[i] = model{ID: m}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"models": out})
}

// WriteError implements httpapi.Face: Julep's error shape, {"error": {"message", "code"}}, with the field at fault
// (error.field, and FastAPI's "detail" beside it for clients that read that). A bad field of the body or the query
// is a 422 with the field's location, as Julep's validation answers; a path parameter that is no ID is a 400.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.LogError(f.d.Logger, r, err)
	code := errs.CodeOf(err)
	status := errs.HTTPStatus(code)
	msg := errs.MessageOf(err)
	body := map[string]any{"detail": msg}
	detail := map[string]any{"message": msg, "code": string(code)}
	if e := errs.As(err); code == errs.Invalid && e != nil && e.Field != "" {
		detail["field"] = e.Field
		where := "body"
		switch {
		case slices.Contains(pathIDs, e.Field):
			where = "path"
		case slices.Contains(queryParams, e.Field) || r.URL.Query().Has(e.Field):
			where = "query"
		}
		var plain badRequest
		if where != "path" && !errors.As(err, &plain) {
			status = http.StatusUnprocessableEntity
			detail["code"] = "validation_error"
		}
		item := map[string]any{"type": "value_error", "msg": msg, "loc": append([]any{where}, location(e.Field)...)}
		detail["details"] = []any{item}
		body["detail"] = []any{item}
	}
	body["error"] = detail
	if code == errs.Conflict && !retryable(err) {
		// A request the server will refuse again: the SDKs retry 409s unless told not to.
		w.Header().Set("x-should-retry", "false")
	}
	httpapi.SetRetryAfter(w, err)
	httpapi.WriteJSON(w, status, body)
}

// queryParams are the query parameters the face reads: the lists' paging and the others some lists take.
var queryParams = append(slices.Clone(pagingParams), "metadata_filter", "include_embeddings", "scope_id")

// retryable reports a conflict that is contention (the object changed under the request): trying again may pass.
func retryable(err error) bool {
	e := errs.As(err)
	return e != nil && e.Err != nil
}

// AgentCommands are the Julep agent commands the face calls (commands.JulepAgents).
type AgentCommands interface {
	AddTool(ctx context.Context, actor auth.Principal, agentID string, request string, t events.JulepTool) (commands.Written[julep.Tool], error)
	Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepAgentSpec) (commands.Written[julep.Agent], error)
	CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepAgentSpec) (commands.Written[julep.Agent], error)
	Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (commands.Written[julep.Agent], error)
	DeleteTool(ctx context.Context, actor auth.Principal, agentID string, toolID string) (uint64, error)
	Get(ctx context.Context, actor auth.Principal, id string) (julep.Agent, error)
	Patch(ctx context.Context, actor auth.Principal, id string, p julep.AgentPatch) (commands.Written[julep.Agent], error)
	Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepAgentSpec) (commands.Written[julep.Agent], error)
	ReplaceTool(ctx context.Context, actor auth.Principal, agentID string, toolID string, patch func(events.JulepTool) (events.JulepTool, error)) (commands.Written[julep.Tool], error)
}

// UserCommands are the Julep user commands the face calls (commands.JulepUsers).
type UserCommands interface {
	Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepUserSpec) (commands.Written[julep.User], error)
	CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepUserSpec) (commands.Written[julep.User], error)
	Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (commands.Written[julep.User], error)
	Get(ctx context.Context, actor auth.Principal, id string) (julep.User, error)
	Patch(ctx context.Context, actor auth.Principal, id string, p julep.UserPatch) (commands.Written[julep.User], error)
	Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepUserSpec) (commands.Written[julep.User], error)
}

// SessionCommands are the Julep session commands the face calls (commands.JulepSessions).
type SessionCommands interface {
	Chat(ctx context.Context, actor auth.Principal, id string, request string, retry bool, r events.SessionChatRequested) (commands.ChatStarted, error)
	CheckChat(r events.SessionChatRequested) error
	Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepSessionSpec) (commands.Written[session.JulepView], error)
	CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepSessionSpec) (commands.Written[session.JulepView], error)
	Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (commands.Written[session.JulepView], error)
	Get(ctx context.Context, actor auth.Principal, id string) (session.JulepView, error)
	Patch(ctx context.Context, actor auth.Principal, id string, p session.SessionPatch) (commands.Written[session.JulepView], error)
	Read(ctx context.Context, actor auth.Principal, id string, atLeast uint64, fn func(s *session.State) error) error
	Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepSessionSpec) (commands.Written[session.JulepView], error)
}

// DocCommands are the doc commands the face calls (commands.JulepDocs).
type DocCommands interface {
	CheckOwner(ctx context.Context, actor auth.Principal, o events.DocOwner) error
	Create(ctx context.Context, actor auth.Principal, request string, owner events.DocOwner, in commands.NewDoc) (commands.Written[julep.Doc], error)
	Delete(ctx context.Context, actor auth.Principal, owner events.DocOwner, id string, retry bool) (commands.Written[julep.Doc], error)
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	Get(ctx context.Context, actor auth.Principal, id string) (julep.Doc, error)
	Search(ctx context.Context, actor auth.Principal, q julepdocs.Query) ([]julepdocs.Ref, error)
}

// TaskCommands are the task commands the face calls (commands.JulepTasks).
type TaskCommands interface {
	Create(ctx context.Context, actor auth.Principal, request string, agent string, src []byte) (commands.Written[julep.Task], error)
	CreateOrUpdate(ctx context.Context, actor auth.Principal, agent string, id string, src []byte) (commands.Written[julep.Task], error)
	Delete(ctx context.Context, actor auth.Principal, agent string, id string, retry bool) (commands.Written[julep.Task], error)
	Get(ctx context.Context, actor auth.Principal, id string) (julep.Task, error)
}

// ExecutionCommands are the execution commands the face calls (commands.Executions).
type ExecutionCommands interface {
	Cancel(ctx context.Context, actor auth.Principal, id string, reason string) (commands.Written[execution.Execution], error)
	Create(ctx context.Context, actor auth.Principal, request string, task string, input json.RawMessage, metadata json.RawMessage) (commands.Written[execution.Execution], error)
	Get(ctx context.Context, actor auth.Principal, id string) (execution.Execution, uint64, error)
	Resume(ctx context.Context, actor auth.Principal, id string, input json.RawMessage) (commands.Written[execution.Execution], error)
}
