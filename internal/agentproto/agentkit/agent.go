package agentkit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/codeshot"
)

// Func is a Code Shot func: it gets the argument the model wrote after "Ask Func[f]:" and returns the text (and
// embeds) that the platform feeds back as "Func[f] says: ...". Return an *Error to choose the HTTP status and code;
// any other error is answered as ERR_AGENT_UNHANDLED_EXCEPTION.
type Func func(ctx context.Context, call Call) (agentproto.Message, error)

// Responder answers a standalone agent's query. It may call send several times, each with the whole reply so far
// (the protocol's lines carry cumulative text); the last message sent is the reply.
type Responder func(ctx context.Context, call Call, send func(agentproto.Message) error) error

// Call is one request to an agent.
type Call struct {
	Message agentproto.Message
	// Session is the session a query belongs to, when the platform named it.
	Session string
	// Token is the verified token of the request, or nil when the agent does not verify tokens.
	Token *Token
}

// Agent describes an agent: a Code Shot agent has a base prompt, few-shots and funcs; a standalone agent has a
// Responder and sample queries.
type Agent struct {
	BasePrompt     string
	FewShots       []string
	Conversational bool
	Funcs          map[string]Func

	Respond       Responder
	SampleQueries []string
}

// Error is a failure a func chooses to report with its own status and code, such as bad input.
type Error struct {
	// Status is the HTTP status; 0 means 500.
	Status int
	// Code is the error code, e.g. "ERR_BAD_INPUT".
	Code string
	// Message says what went wrong.
	Message string
	// Reply is the text of the message sent along; empty means "I'm sorry, <Message>".
	Reply string
}

func (e *Error) Error() string { return e.Message }

// CodeBadInput is the code of BadInput errors.
const CodeBadInput = "ERR_BAD_INPUT"

// BadInput reports an argument the func cannot work with (HTTP 400): the model or the user can fix it.
func BadInput(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeBadInput, Message: fmt.Sprintf(format, args...)}
}

// Option configures a Server.
type Option func(*Server)

// WithVerifier makes the agent accept only requests that carry a token the verifier accepts. Without it the agent
// verifies nothing, which suits tests and local development only.
func WithVerifier(v *Verifier) Option { return func(s *Server) { s.verifier = v } }

// WithLogger sets where failures of funcs are logged. The default discards.
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithMaxBodyBytes bounds the size of a request (default 16 MiB).
func WithMaxBodyBytes(n int64) Option { return func(s *Server) { s.maxBody = n } }

// Server serves an Agent over HTTP.
type Server struct {
	agent    Agent
	metadata []byte
	verifier *Verifier
	log      *slog.Logger
	maxBody  int64
	calls    calls
}

// New checks the agent and returns a Server for it. A Code Shot agent's few-shots must pass codeshot.Validate
// against its own funcs, as the Fixie SDK required before serving.
func New(a Agent, opts ...Option) (*Server, error) {
	s := &Server{agent: a, maxBody: 16 << 20}
	for _, o := range opts {
		o(s)
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	var md agentproto.Metadata
	switch {
	case a.Respond != nil && len(a.FewShots) > 0:
		return nil, errors.New("an agent is either standalone (Respond) or Code Shot (FewShots), not both")
	case a.Respond != nil:
		md = agentproto.Metadata{Type: agentproto.TypeStandalone, SampleQueries: a.SampleQueries}
	case len(a.FewShots) == 0:
		return nil, errors.New("a Code Shot agent needs few-shots")
	case a.BasePrompt == "":
		return nil, errors.New("a Code Shot agent needs a base prompt")
	default:
		funcs := slices.Collect(maps.Keys(a.Funcs))
		if funcs == nil {
			funcs = []string{}
		}
		if err := codeshot.Validate(a.BasePrompt, a.FewShots, codeshot.Options{Conversational: a.Conversational, Funcs: funcs}); err != nil {
			return nil, fmt.Errorf("few-shots: %w", err)
		}
		md = agentproto.Metadata{Type: agentproto.TypeCodeShot, BasePrompt: a.BasePrompt, FewShots: a.FewShots,
			Conversational: a.Conversational}
	}
	var err error
	if s.metadata, err = json.Marshal(md); err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return s, nil
}

// ServeHTTP routes GET / to the metadata, POST / to the responder and POST /{func} to a func.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var token *Token
	if s.verifier != nil {
		t, err := s.verify(r)
		if err != nil {
			writeError(w, http.StatusForbidden, &agentproto.AgentError{Code: CodeInvalidToken, Message: err.Error()},
				"I'm sorry, this request is not authorized.")
			return
		}
		token = t
	}
	name := strings.TrimPrefix(r.URL.Path, "/")
	switch {
	case name == "" && r.Method == http.MethodGet:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.metadata)
	case name == "" && r.Method == http.MethodPost && s.agent.Respond != nil:
		s.serveQuery(w, r, token)
	case r.Method == http.MethodPost && name != "" && !strings.Contains(name, "/"):
		s.serveFunc(w, r, name, token)
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, &agentproto.AgentError{Code: "ERR_METHOD_NOT_ALLOWED",
			Message: fmt.Sprintf("%s %s is not part of the agent protocol", r.Method, r.URL.Path)}, "")
	}
}

// CodeInvalidToken is the code of a request refused for its token.
const CodeInvalidToken = "ERR_INVALID_TOKEN"

func (s *Server) verify(r *http.Request) (*Token, error) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return nil, errors.New("the request has no bearer token")
	}
	return s.verifier.Verify(r.Context(), token)
}

func (s *Server) serveFunc(w http.ResponseWriter, r *http.Request, name string, token *Token) {
	fn, ok := s.agent.Funcs[name]
	if !ok {
		funcs := slices.Sorted(maps.Keys(s.agent.Funcs))
		writeError(w, http.StatusNotFound, &agentproto.AgentError{
			Code:    agentproto.CodeFuncNotDefined,
			Message: "The function was not defined.",
			Details: map[string]any{"func_name": name, "available_funcs": funcs},
		}, fmt.Sprintf("I'm sorry, Func[%s] is not defined.", name))
		return
	}
	msg, _, err := s.readRequest(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, &agentproto.AgentError{Code: "ERR_BAD_REQUEST", Message: err.Error()}, "")
		return
	}
	// A repeated call (same func, same idempotency key) gets the first call's answer.
	key := r.Header.Get(agentproto.IdempotencyHeader)
	if key != "" {
		key = name + "\x00" + key
	}
	reply, err := s.calls.do(r.Context(), key, func() (agentproto.Message, error) {
		return s.run(r.Context(), name, func(ctx context.Context) (agentproto.Message, error) {
			return fn(ctx, Call{Message: msg, Token: token})
		})
	})
	if err != nil {
		s.writeFailure(w, err)
		return
	}
	writeJSON(w, http.StatusOK, agentproto.Reply{Message: &reply})
}

// run calls a func, turning a panic into an error so that one bad input cannot take the agent down.
func (s *Server) run(ctx context.Context, name string, f func(context.Context) (agentproto.Message, error)) (msg agentproto.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "func panicked", "func", name, "panic", p)
			err = fmt.Errorf("func %s panicked: %v", name, p)
		}
	}()
	msg, err = f(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "func failed", "func", name, "err", err)
	}
	return msg, err
}

func (s *Server) serveQuery(w http.ResponseWriter, r *http.Request, token *Token) {
	msg, session, err := s.readRequest(w, r)
	if err != nil {
		writeError(w, http.StatusBadRequest, &agentproto.AgentError{Code: "ERR_BAD_REQUEST", Message: err.Error()}, "")
		return
	}
	sent := false
	send := func(m agentproto.Message) error {
		if !sent {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			sent = true
		}
		if err := writeLine(w, agentproto.Reply{Message: &m, Type: "response"}); err != nil {
			return err
		}
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		return nil
	}
	_, err = s.run(r.Context(), "query", func(ctx context.Context) (agentproto.Message, error) {
		return agentproto.Message{}, s.agent.Respond(ctx, Call{Message: msg, Session: session, Token: token}, send)
	})
	switch {
	case err != nil && !sent:
		s.writeFailure(w, err)
	case err != nil:
		// The status is gone; the error travels as a last line.
		_, e, text := failure(err)
		_ = writeLine(w, agentproto.Reply{Message: &agentproto.Message{Text: text}, Error: e, Type: "response"})
	case !sent:
		writeError(w, http.StatusInternalServerError, &agentproto.AgentError{Code: agentproto.CodeAgentUnhandledException,
			Message: "the agent sent no reply"}, "")
	}
}

// readRequest reads a func argument or a query: {"message": {...}} as the platform and the SDK send it, or
// {"text": ..., "embeds": ...} as the simplest clients do.
func (s *Server) readRequest(w http.ResponseWriter, r *http.Request) (agentproto.Message, string, error) {
	var body struct {
		Message *agentproto.Message         `json:"message"`
		Text    *string                     `json:"text"`
		Embeds  map[string]agentproto.Embed `json:"embeds"`
		Session string                      `json:"session"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, s.maxBody))
	if err := dec.Decode(&body); err != nil {
		return agentproto.Message{}, "", fmt.Errorf("the request body is not a JSON message: %v", err)
	}
	switch {
	case body.Message != nil:
		return *body.Message, body.Session, nil
	case body.Text != nil:
		return agentproto.Message{Text: *body.Text, Embeds: body.Embeds}, body.Session, nil
	}
	return agentproto.Message{}, "", errors.New(`the request has no "message"`)
}

func (s *Server) writeFailure(w http.ResponseWriter, err error) {
	status, e, text := failure(err)
	writeError(w, status, e, text)
}

// failure maps a func's error to a status, an error object and the reply text, as the Fixie SDK did.
func failure(err error) (int, *agentproto.AgentError, string) {
	var fe *Error
	if errors.As(err, &fe) {
		status := fe.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		code := fe.Code
		if code == "" {
			code = agentproto.CodeAgentUnhandledException
		}
		text := fe.Reply
		if text == "" {
			text = "I'm sorry, " + fe.Message
		}
		return status, &agentproto.AgentError{Code: code, Message: fe.Message}, text
	}
	return http.StatusInternalServerError,
		&agentproto.AgentError{Code: agentproto.CodeAgentUnhandledException, Message: err.Error()},
		"I'm sorry, an error occurred while processing your request."
}

func writeError(w http.ResponseWriter, status int, e *agentproto.AgentError, text string) {
	if text == "" {
		text = "I'm sorry, " + e.Message
	}
	writeJSON(w, status, agentproto.Reply{Message: &agentproto.Message{Text: text}, Error: e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeLine(w http.ResponseWriter, v any) error {
	return json.NewEncoder(w).Encode(v) // Encode ends each value with a newline: one JSON line
}
