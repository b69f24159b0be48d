package chats

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepchat"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Sessions is the repository of sessions the handlers decide on.
type Sessions = eventstore.Repo[session.State, *session.State]

// DocLister lists an owner's docs (a system tool's doc.list).
type DocLister interface {
	ListDocs(ctx context.Context, account string, owner events.DocOwner, limit int) ([]julep.Doc, error)
}

// Config wires the handlers.
type Config struct {
	Sessions *Sessions
	Preparer *julepchat.Preparer
	Lookup   julepchat.Lookup
	Docs     julepchat.Docs
	DocList  DocLister
	Models   llm.Provider
	APICalls *apicall.Client
	// NC publishes the words of streamed answers on the sessions' live subjects.
	NC     *nats.Conn
	Names  natsx.Names
	Logger *slog.Logger
	// MaxCalls bounds the model calls of one turn (default 10): a model that keeps asking for tools is stopped.
	MaxCalls int
	// StepTimeout bounds one model call or tool run (default 5m).
	StepTimeout time.Duration
	// Concurrency is how many events each handler works on at once on this node (default 16).
	Concurrency int
	// AckWait is how long a delivery may go unanswered before another node takes it (default 5s).
	AckWait time.Duration
}

// Handlers are the chat handlers of one node.
type Handlers struct{ cfg Config }

// New returns the handlers.
func New(cfg Config) *Handlers {
	if cfg.MaxCalls == 0 {
		cfg.MaxCalls = 10
	}
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 5 * time.Minute
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 16
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg}
}

// Turns is the chat handler.
func (h *Handlers) Turns() runtime.Handler {
	return runtime.Handler{
		Name: "julep-chat",
		EventTypes: []string{"session.chat_requested", "session.chat_prepared", "session.chat_model_called",
			"session.chat_tool_ran", "session.chat_answered", "session.chat_failed"},
		Handle:      h.step,
		Concurrency: h.cfg.Concurrency,
		AckWait:     h.cfg.AckWait,
	}
}

// work is what a step reads of the session: the active turn and what preparing it takes, copied while the
// session is held.
type work struct {
	snap    julepchat.Snapshot
	turn    session.Turn
	next    session.TurnStep
	prompt  []events.JulepMessage
	autoRun bool
}

// read takes the active turn of the session as of the event reacted to (false: nothing to do).
func (h *Handlers) read(ctx context.Context, e events.Envelope) (work, bool, error) {
	var w work
	ok := false
	err := h.cfg.Sessions.Read(ctx, e.AggregateID, e.Sequence, func(s *session.State, _ events.Version) error {
		if !s.Exists || s.Deleted || s.Julep == nil {
			return nil
		}
		j := s.Julep
		t := j.Active()
		if t == nil {
			return nil
		}
		ok = true
		w.turn = *t
		w.turn.Calls = slices.Clone(t.Calls)
		w.turn.Ran = slices.Clone(t.Ran)
		w.next = t.Next()
		w.snap = julepchat.Snapshot{SessionID: events.JulepPublicID(s.ID), Account: s.Account, Spec: j.Spec, Entries: slices.Clone(j.Entries),
			Request: t.Request}
		if n := len(j.Summaries); n > 0 {
			w.snap.Summary = j.Summaries[n-1]
		}
		w.autoRun = j.Spec.AutoRunTools
		if t.Request.AutoRunTools != nil {
			w.autoRun = *t.Request.AutoRunTools
		}
		if w.next.Kind == session.StepModel {
			w.prompt = j.Prompt(t, w.next.Call)
		}
		return nil
	})
	return w, ok, err
}

// step does the active turn's next step, when the event reacted to is what that step follows: each step is set off
// by one event (so that two deliveries of a session's events at once do not both call the model), and a chat asked
// while another turn is active waits for that turn's end to set it off.
func (h *Handlers) step(ctx context.Context, e events.Envelope) error {
	w, ok, err := h.read(ctx, e)
	if err != nil || !ok || !follows(e, w.turn.ID, w.next) {
		return err
	}
	switch w.next.Kind {
	case session.StepPrepare:
		return h.prepare(ctx, e, w)
	case session.StepModel:
		return h.callModel(ctx, e, w)
	case session.StepTool:
		return h.runTool(ctx, e, w)
	}
	return nil
}

// follows reports whether next, the next step of the active turn, is the one event e sets off.
func follows(e events.Envelope, turn string, next session.TurnStep) bool {
	switch d := e.Event.(type) {
	case events.SessionChatRequested:
		return next.Kind == session.StepPrepare && d.TurnID == turn
	case events.SessionChatAnswered, events.SessionChatFailed:
		return next.Kind == session.StepPrepare // the turn after the one that ended
	case events.SessionChatPrepared:
		return d.TurnID == turn && next.Kind == session.StepModel && next.Call == 0
	case events.SessionChatModelCalled:
		return d.TurnID == turn && next.Kind == session.StepTool && next.Call == d.Call && next.Index == 0
	case events.SessionChatToolRan:
		return d.TurnID == turn && (next.Kind == session.StepTool && next.Call == d.Call && next.Index == d.Index+1 ||
			next.Kind == session.StepModel && next.Call == d.Call+1)
	}
	return false
}

// update appends what decide returns for the turn, deciding on the session as of the event reacted to.
func (h *Handlers) update(ctx context.Context, e events.Envelope, turnID string, decide func(s *session.State, t *session.Turn) []events.Event) error {
	meta := events.Meta{Account: e.Account, Actor: "system", CorrelationID: turnID, CausationID: e.ID}
	_, err := h.cfg.Sessions.Update(ctx, e.AggregateID, e.Sequence, meta, func(s *session.State) ([]events.Event, error) {
		if s.Julep == nil {
			return nil, nil
		}
		t, ok := s.Julep.Turn(turnID)
		if !ok {
			return nil, nil
		}
		return decide(s, t), nil
	})
	if err != nil {
		return fmt.Errorf("session %s, turn %s: %w", e.AggregateID, turnID, err)
	}
	return nil
}

// fail ends the turn with err, in words the user reads: a coded error says its own; anything else is logged in
// full and said as an internal error.
func (h *Handlers) fail(ctx context.Context, e events.Envelope, turnID string, err error) error {
	code := errs.CodeOf(err)
	reason := errs.MessageOf(err)
	if code == errs.Internal {
		h.cfg.Logger.Error("julep chat failed", "session", e.AggregateID, "turn", turnID, "err", err)
	}
	return h.update(ctx, e, turnID, func(s *session.State, t *session.Turn) []events.Event {
		return session.FailTurn(s, t, reason, string(code))
	})
}

// prepare recalls the docs, renders the templates and fits the history: the turn's chat_prepared.
func (h *Handlers) prepare(ctx context.Context, e events.Envelope, w work) error {
	sctx, cancel := context.WithTimeout(ctx, h.cfg.StepTimeout)
	p, err := h.cfg.Preparer.Prepare(sctx, w.snap)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // the node is stopping: the step is done again elsewhere
		}
		if errs.As(err) == nil && !errors.Is(err, context.DeadlineExceeded) {
			return err // a failure of the platform's own (the log, the index): retried
		}
		return h.fail(ctx, e, w.turn.ID, err)
	}
	return h.update(ctx, e, w.turn.ID, func(s *session.State, t *session.Turn) []events.Event {
		return session.Prepare(s, t, p.Event)
	})
}

// callModel calls the model with the turn's prompt and the tool results so far. Tool calls the platform runs (with
// auto_run_tools, when the model asks for nothing else) are recorded to be run next; anything else ends the turn:
// the answer, or the calls for the client to run.
func (h *Handlers) callModel(ctx context.Context, e events.Envelope, w work) error {
	sc, err := h.cfg.Preparer.Scope(ctx, w.snap)
	if err != nil {
		if errs.As(err) == nil {
			return err
		}
		return h.fail(ctx, e, w.turn.ID, err)
	}
	st := sc.Settings
	req := llm.Request{Model: sc.Model, Messages: julepchat.LLMMessages(w.prompt), Temperature: st.Temperature,
		TopP: st.TopP, MaxTokens: st.MaxTokens, Stop: st.Stop, ResponseFormat: st.ResponseFormat, Seed: st.Seed,
		ToolChoice: toolChoice(st.ToolChoice)}
	for _, o := range sc.Offered {
		req.Tools = append(req.Tools, o.Model)
	}
	if w.next.Call >= h.cfg.MaxCalls-1 {
		req.ToolChoice = "none" // the last call the turn may make: it must answer
	}
	var onDelta func(llm.Delta)
	if w.turn.Request.Stream {
		onDelta = h.live(e.AggregateID, w.turn.ID)
	}
	sctx, cancel := context.WithTimeout(ctx, h.cfg.StepTimeout)
	resp, err := h.cfg.Models.Complete(sctx, req, onDelta)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = errs.E(errs.DeadlineExpired, "the model did not answer within %s", h.cfg.StepTimeout)
		} else if errs.As(err) == nil {
			err = &errs.Error{Code: errs.Unavailable, Message: "the model failed: " + err.Error(), Err: err}
		}
		return h.fail(ctx, e, w.turn.ID, err)
	}
	calls := make([]events.JulepToolCall, len(resp.ToolCalls))
	runAll := w.autoRun && len(calls) > 0
	for i, c := range resp.ToolCalls {
		calls[i] = events.JulepToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments}
		o, err := julepchat.Find(sc.Offered, c.Name)
		if err != nil || !julepchat.Runs(o.Tool) {
			runAll = false
		}
		if err == nil {
			calls[i].Arguments = o.Complete(c.Arguments)
		}
	}
	usage := events.JulepUsage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		TotalTokens: resp.Usage.TotalTokens}
	if runAll {
		return h.update(ctx, e, w.turn.ID, func(s *session.State, t *session.Turn) []events.Event {
			return session.CallModel(s, t, events.SessionChatModelCalled{Call: w.next.Call, Text: resp.Text,
				ToolCalls: calls, Usage: usage, Model: resp.Model})
		})
	}
	total := w.turn.Usage()
	total.PromptTokens += usage.PromptTokens
	total.CompletionTokens += usage.CompletionTokens
	total.TotalTokens += usage.TotalTokens
	finish := resp.FinishReason
	if finish == "" {
		finish = llm.FinishStop
	}
	return h.update(ctx, e, w.turn.ID, func(s *session.State, t *session.Turn) []events.Event {
		return session.Answer(s, t, w.next.Call, events.SessionChatAnswered{Text: resp.Text, ToolCalls: calls,
			Finish: finish, Usage: total, Model: resp.Model, Calls: w.next.Call + 1})
	})
}

// toolChoice reads Julep's tool_choice ("auto", "none", or {"type":"function","function":{"name":...}}).
func toolChoice(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var named struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &named) == nil {
		return named.Function.Name
	}
	return ""
}

// live passes a streamed answer's words on to the session's live subject, named by the turn.
func (h *Handlers) live(sessionID, turnID string) func(llm.Delta) {
	subject := h.cfg.Names.LiveSubject(session.Aggregate, sessionID)
	index := 0
	return func(d llm.Delta) {
		if d.Text == "" {
			return
		}
		b, err := json.Marshal(agents.LiveDelta{Type: "delta", MessageID: turnID, Index: index, Text: d.Text})
		if err != nil {
			return
		}
		index++
		if err := h.cfg.NC.Publish(subject, b); err != nil {
			h.cfg.Logger.Debug("publish delta", "subject", subject, "err", err)
		}
	}
}
