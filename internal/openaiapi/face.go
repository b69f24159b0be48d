package openaiapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/vsindex"
	"github.com/contrailhq/contrail/projections"
)

// Models resolves a model string to a provider; the face uses it to refuse a model nobody can run when the
// assistant or run is created rather than when the run fails.
type Models interface {
	Resolve(model string) (llm.Provider, string, error)
}

// AssistantCommands is what the face asks of the assistant commands (commands.Assistants). Each returns what it
// appended; the face waits for its read models to show it (projections.Runner.ShowsWrite) before it answers from
// them.
type AssistantCommands interface {
	Create(ctx context.Context, actor auth.Principal, spec events.AssistantSpec) (string, eventstore.Appended, error)
	Modify(ctx context.Context, actor auth.Principal, id string, change func(*events.AssistantSpec)) (eventstore.Appended, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
}

// ThreadCommands is what the face asks of the thread commands (commands.Threads).
type ThreadCommands interface {
	Create(ctx context.Context, actor auth.Principal, in commands.NewThread) (string, eventstore.Appended, error)
	Modify(ctx context.Context, actor auth.Principal, id string, metadata map[string]string, setMetadata bool, toolResources json.RawMessage) (eventstore.Appended, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
	CreateMessage(ctx context.Context, actor auth.Principal, threadID string, in commands.NewMessage) (string, eventstore.Appended, error)
	ModifyMessage(ctx context.Context, actor auth.Principal, threadID, messageID string, metadata map[string]string) (eventstore.Appended, error)
	DeleteMessage(ctx context.Context, actor auth.Principal, threadID, messageID string) (eventstore.Appended, error)
	CheckAttachedFiles(ctx context.Context, actor auth.Principal, field string, msgs []commands.NewMessage) error
}

// RunCommands is what the face asks of the run commands (commands.Runs).
type RunCommands interface {
	Create(ctx context.Context, actor auth.Principal, threadID string, in commands.NewRun) (commands.CreatedRun, error)
	CreateWithThread(ctx context.Context, actor auth.Principal, thread commands.NewThread, in commands.NewRun) (commands.CreatedRun, error)
	Modify(ctx context.Context, actor auth.Principal, threadID, runID string, metadata map[string]string) (eventstore.Appended, error)
	Cancel(ctx context.Context, actor auth.Principal, threadID, runID string) (eventstore.Appended, error)
	SubmitToolOutputs(ctx context.Context, actor auth.Principal, threadID, runID string, outputs []events.ToolOutput) (eventstore.Appended, error)
}

// FileCommands is what the face asks of the file commands (commands.Files).
type FileCommands interface {
	StoreUpload(ctx context.Context, actor auth.Principal, contentType string, body io.Reader) (commands.Upload, error)
	DiscardUpload(ctx context.Context, u commands.Upload) error
	Create(ctx context.Context, actor auth.Principal, in commands.NewFile) (string, eventstore.Appended, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
}

// Deps are what the /v1 face uses.
// MCPServers is what the face asks of the node's MCP client: whether a server may be called (a refusal names
// field, before any request), and the request's headers sealed for the response's event, bound to the account and
// the server_url they are given for.
type MCPServers interface {
	Check(field, serverURL string) error
	SealHeaders(account, serverURL string, headers map[string]string) (string, error)
}

type Deps struct {
	Assistants AssistantCommands
	Threads    ThreadCommands
	Runs       RunCommands
	Files      FileCommands
	// Responses and Conversations are the commands of the Responses and Conversations APIs; ResponseTools are
	// the server-side tool types (file_search, code_interpreter) this node's model loop can run.
	Responses     ResponseCommands
	Conversations ConversationCommands
	ResponseTools map[string]bool
	// OfferedTool is how the model loop offers the model a server-side tool (file_search, code_interpreter), for
	// POST /v1/responses/input_tokens to count it; ok is false for a tool whose functions are known only when a
	// response runs (mcp: listed from its server).
	OfferedTool func(events.ResponseTool) (tool llm.Tool, ok bool)
	// FileText reads the text of one of account's files as the model loop shows an input_file (a file that is gone
	// is a not_found error, one whose text is not shown an invalid one), for input_tokens to count it; nil: not
	// counted.
	FileText func(ctx context.Context, account, id string) (name, text string, err error)
	// Containers are where code_interpreter runs; CodeAvailable says why this node cannot run code (nil: it can).
	Containers    ContainerCommands
	CodeAvailable func() error
	// MCP checks an mcp tool's server_url against the hosts this node may call and seals its headers; nil: the mcp
	// tool is refused.
	MCP MCPServers
	// Compaction seals the summaries of POST /v1/responses/compact and opens the compaction items of an input;
	// nil: this node neither compacts nor reads compaction items (400).
	Compaction *compaction.Sealer
	// VectorStores are the commands on vector stores, their files and batches.
	VectorStores VectorStoreCommands
	// VectorStoreFiles are the commands on the stores' files and file batches.
	VectorStoreFiles VectorStoreFileCommands
	Views            *projections.Runner
	// Store, JS and NC serve streams: the run's events from the log, its token deltas from the live subject.
	Store  *eventstore.Store
	JS     jetstream.JetStream
	NC     *nats.Conn
	Names  natsx.Names
	Blobs  *blobs.Store
	Models Models
	// ListedModels are what GET /v1/models lists: the offline model and the configured default.
	ListedModels []Model
	Logger       *slog.Logger
	// MaxUploadBytes bounds one uploaded file (default 512 MiB, OpenAI's limit).
	MaxUploadBytes int64
	// Auth and Limiter admit each response.create of a Responses socket as the HTTP layer admits a POST (it
	// admits the upgrade once): the key checked again, so that one revoked since is refused, and counted against
	// its request rate. Nil Auth: admitted with the socket.
	Auth    httpapi.Authenticator
	Limiter httpapi.Limiter
	// SocketIdle closes a Responses socket on which the client sent nothing and no response was in progress for
	// that long (default 5 minutes); SocketLifetime ends any socket after that long (default 60 minutes, OpenAI's
	// limit), once the responses in progress on it end.
	SocketIdle     time.Duration
	SocketLifetime time.Duration
}

// Face is the /v1 face.
type Face struct {
	d Deps
	// created is the `created` of the listed models: when the face was made, as they are this node's
	// configuration rather than artefacts with a date of their own.
	created int64
}

// New returns the face.
func New(d Deps) *Face {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.MaxUploadBytes == 0 {
		d.MaxUploadBytes = 512 << 20
	}
	if d.SocketIdle <= 0 {
		d.SocketIdle = defaultSocketIdle
	}
	if d.SocketLifetime <= 0 {
		d.SocketLifetime = defaultSocketLifetime
	}
	return &Face{d: d, created: time.Now().Unix()}
}

// Prefix implements httpapi.Face.
func (f *Face) Prefix() string { return "/v1" }

// Routes implements httpapi.Face.
func (f *Face) Routes(r chi.Router) {
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		f.writeError(w, req, http.StatusMethodNotAllowed, errorObject{
			Message: "Invalid method for URL (" + req.Method + " " + req.URL.Path + ").", Type: "invalid_request_error"})
	})
	// Routes are registered flat, each with the methods the API defines for it: a sub-router's "/" would also
	// answer "/v1/assistants/", and the router's listing (chi.Walk, which the route checks read) would name a
	// path the API does not have.
	// Every ID in a path is checked before a handler sees it, so that none reaches a subject or a key unchecked:
	// 400 naming the parameter, as OpenAI answers ("Invalid 'thread_id'").
	r.Group(func(r chi.Router) {
		r.Use(httpapi.CheckPathIDs(pathIDs, f.WriteError))
		r.Get("/assistants", f.listAssistants)
		r.Post("/assistants", f.createAssistant)
		r.Get("/assistants/{assistant_id}", f.getAssistant)
		r.Post("/assistants/{assistant_id}", f.modifyAssistant)
		r.Delete("/assistants/{assistant_id}", f.deleteAssistant)

		r.Get("/threads", f.listThreads)
		r.Post("/threads", f.createThread)
		r.Post("/threads/runs", f.createThreadAndRun)
		r.Get("/threads/{thread_id}", f.getThread)
		r.Post("/threads/{thread_id}", f.modifyThread)
		r.Delete("/threads/{thread_id}", f.deleteThread)
		r.Get("/threads/{thread_id}/messages", f.listMessages)
		r.Post("/threads/{thread_id}/messages", f.createMessage)
		r.Get("/threads/{thread_id}/messages/{message_id}", f.getMessage)
		r.Post("/threads/{thread_id}/messages/{message_id}", f.modifyMessage)
		r.Delete("/threads/{thread_id}/messages/{message_id}", f.deleteMessage)
		r.Get("/threads/{thread_id}/runs", f.listRuns)
		r.Post("/threads/{thread_id}/runs", f.createRun)
		r.Get("/threads/{thread_id}/runs/{run_id}", f.getRun)
		r.Post("/threads/{thread_id}/runs/{run_id}", f.modifyRun)
		r.Post("/threads/{thread_id}/runs/{run_id}/cancel", f.cancelRun)
		r.Post("/threads/{thread_id}/runs/{run_id}/submit_tool_outputs", f.submitToolOutputs)
		r.Get("/threads/{thread_id}/runs/{run_id}/steps", f.listSteps)
		r.Get("/threads/{thread_id}/runs/{run_id}/steps/{step_id}", f.getStep)

		r.Post("/responses", f.createResponse)
		r.Get("/responses", f.responsesSocket)
		r.Post("/responses/input_tokens", f.countInputTokens)
		r.Post("/responses/compact", f.compactResponse)
		r.Get("/responses/{response_id}", f.getResponse)
		r.Delete("/responses/{response_id}", f.deleteResponse)
		r.Post("/responses/{response_id}/cancel", f.cancelResponse)
		r.Get("/responses/{response_id}/input_items", f.listInputItems)

		r.Get("/conversations", f.listConversations) // an extension: OpenAI has no list (conversations_list.go)
		r.Post("/conversations", f.createConversation)
		r.Get("/conversations/{conversation_id}", f.getConversation)
		r.Post("/conversations/{conversation_id}", f.updateConversation)
		r.Delete("/conversations/{conversation_id}", f.deleteConversation)
		r.Get("/conversations/{conversation_id}/items", f.listConversationItems)
		r.Post("/conversations/{conversation_id}/items", f.createConversationItems)
		r.Get("/conversations/{conversation_id}/items/{item_id}", f.getConversationItem)
		r.Delete("/conversations/{conversation_id}/items/{item_id}", f.deleteConversationItem)

		r.Get("/containers", f.listContainers)
		r.Post("/containers", f.createContainer)
		r.Get("/containers/{container_id}", f.getContainer)
		r.Delete("/containers/{container_id}", f.deleteContainer)
		r.Get("/containers/{container_id}/files", f.listContainerFiles)
		r.Post("/containers/{container_id}/files", f.addContainerFile)
		r.Get("/containers/{container_id}/files/{file_id}", f.getContainerFile)
		r.Delete("/containers/{container_id}/files/{file_id}", f.deleteContainerFile)
		r.Get("/containers/{container_id}/files/{file_id}/content", f.containerFileContent)

		r.Get("/models", f.listModels)
		r.Get("/models/*", f.getModel)

		r.Get("/files", f.listFiles)
		r.Post("/files", f.createFile)
		r.Get("/files/{file_id}", f.getFile)
		r.Delete("/files/{file_id}", f.deleteFile)
		r.Get("/files/{file_id}/content", f.fileContent)

		r.Get("/vector_stores", f.listVectorStores)
		r.Post("/vector_stores", f.createVectorStore)
		r.Get("/vector_stores/{vector_store_id}", f.getVectorStore)
		r.Post("/vector_stores/{vector_store_id}", f.modifyVectorStore)
		r.Delete("/vector_stores/{vector_store_id}", f.deleteVectorStore)
		r.Post("/vector_stores/{vector_store_id}/search", f.searchVectorStore)
		r.Get("/vector_stores/{vector_store_id}/files", f.listVectorStoreFiles)
		r.Post("/vector_stores/{vector_store_id}/files", f.addVectorStoreFile)
		r.Get("/vector_stores/{vector_store_id}/files/{file_id}", f.getVectorStoreFile)
		r.Post("/vector_stores/{vector_store_id}/files/{file_id}", f.updateVectorStoreFile)
		r.Delete("/vector_stores/{vector_store_id}/files/{file_id}", f.deleteVectorStoreFile)
		r.Get("/vector_stores/{vector_store_id}/files/{file_id}/content", f.vectorStoreFileContent)
		r.Post("/vector_stores/{vector_store_id}/file_batches", f.createFileBatch)
		r.Get("/vector_stores/{vector_store_id}/file_batches/{batch_id}", f.getFileBatch)
		r.Post("/vector_stores/{vector_store_id}/file_batches/{batch_id}/cancel", f.cancelFileBatch)
		r.Get("/vector_stores/{vector_store_id}/file_batches/{batch_id}/files", f.listBatchFiles)
	})
}

// pathIDs are the kinds of the IDs the routes' paths name, by parameter.
var pathIDs = map[string]ids.Kind{
	"assistant_id": ids.Assistant, "thread_id": ids.Thread, "message_id": ids.Message, "run_id": ids.Run,
	"step_id": ids.Step, "file_id": ids.File, "vector_store_id": ids.VectorStore, "batch_id": ids.FileBatch,
	"response_id": ids.Response, "conversation_id": ids.Conversation, "item_id": ids.Token, "container_id": ids.Container,
}

// errorObject is OpenAI's error object.
type errorObject struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// WriteError implements httpapi.Face: every error on /v1 is OpenAI's error object, with the status OpenAI uses.
func (f *Face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.LogError(f.d.Logger, r, err)
	status, obj := errorFor(err)
	httpapi.SetRetryAfter(w, err)
	f.writeError(w, r, status, obj)
}

func (f *Face) writeError(w http.ResponseWriter, _ *http.Request, status int, obj errorObject) {
	httpapi.WriteJSON(w, status, map[string]errorObject{"error": obj})
}

// errorFor maps an error to OpenAI's status and error object.
func errorFor(err error) (int, errorObject) {
	code := errs.CodeOf(err)
	obj := errorObject{Message: sentence(errs.MessageOf(err)), Type: "invalid_request_error"}
	if e := errs.As(err); e != nil && e.Field != "" {
		obj.Param = strp(e.Field)
	}
	status := errs.HTTPStatus(code)
	switch code {
	case errs.Invalid:
	case errs.NotFound:
	case errs.Conflict:
		// What reaches here as a conflict is contention (the object changed under the request, past the
		// command's retries): a 409, which OpenAI's SDKs retry. A request that does not fit the object's state
		// (a run already active) is errs.Invalid, a 400 they do not retry.
		obj.Code = strp("conflict")
	case errs.MethodNotAllowed:
	case errs.Unauthorized:
		obj.Code = strp("invalid_api_key")
	case errs.Forbidden:
	case errs.RateLimited:
		obj.Type, obj.Code = "requests", strp("rate_limit_exceeded")
	case errs.TooLarge:
	default:
		obj.Type = "server_error"
		if code == errs.Internal {
			obj.Message = "The server had an error while processing your request. Sorry about that!"
		}
	}
	return status, obj
}

// sentence gives a message in Go's error style (lower case, no full stop, as the shared helpers write them) the
// form of OpenAI's messages: a capital first letter and a full stop. A message that starts with a capital is
// already written as OpenAI writes it and is left alone.
func sentence(msg string) string {
	r, n := utf8.DecodeRuneInString(msg)
	if msg == "" || !unicode.IsLower(r) {
		return msg
	}
	msg = string(unicode.ToUpper(r)) + msg[n:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func strp(s string) *string { return &s }

func principal(r *http.Request) auth.Principal {
	p, _ := auth.From(r.Context())
	return p
}

// writeJSON answers an object with 200.
func writeJSON(w http.ResponseWriter, v any) { httpapi.WriteJSON(w, http.StatusOK, v) }

// deleted is OpenAI's answer to a delete.
type deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// VectorStoreCommands are the vector store commands the face calls (commands.VectorStores).
type VectorStoreCommands interface {
	Create(ctx context.Context, actor auth.Principal, in commands.NewVectorStore) (vectorstore.State, eventstore.Appended, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
	EnsureThreadStore(ctx context.Context, actor auth.Principal, threadID string, fileIDs []string) (vectorstore.State, eventstore.Appended, error)
	Get(ctx context.Context, actor auth.Principal, id string) (vectorstore.State, error)
	Modify(ctx context.Context, actor auth.Principal, id string, name *string, metadata map[string]string, expiry **events.VectorStoreExpiry) (vectorstore.State, error)
	Search(ctx context.Context, actor auth.Principal, id string, in commands.SearchRequest) ([]vsindex.Hit, error)
}

// VectorStoreFileCommands are the commands on a store's files and batches the face calls (commands.VectorStoreFiles).
type VectorStoreFileCommands interface {
	AddFile(ctx context.Context, actor auth.Principal, id string, fileID string, attrs map[string]any, chunking *events.Chunking) (vectorstore.State, error)
	CancelBatch(ctx context.Context, actor auth.Principal, id string, batch string) (vectorstore.State, error)
	Content(ctx context.Context, actor auth.Principal, id string, fileID string) ([]string, error)
	CreateBatch(ctx context.Context, actor auth.Principal, id string, in []commands.BatchFile, chunking *events.Chunking) (vectorstore.State, string, error)
	RemoveFile(ctx context.Context, actor auth.Principal, id string, fileID string) error
	UpdateFile(ctx context.Context, actor auth.Principal, id string, fileID string, attrs map[string]any) (vectorstore.State, error)
}
