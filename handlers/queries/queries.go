// Package queries holds the handlers that answer a session's queries, each a consumer of the log that reacts to one
// kind of event and appends the next one:
//
//   - the session runner (turns.go) reacts to a query posted behind another (a query posted to an idle session
//     carries its dispatch to the front agent: commands.Sessions.Post asks Front) and dispatches the session's next
//     query to its front agent: session.query_dispatched opens the query's top path. The handler that answers a
//     query dispatches the next one waiting;
//   - the router (router.go) reacts to a query dispatched to the built-in router and appends session.routed with
//     the agents closest to it and their scores;
//   - the Code Shot executor (codeshot.go, and front.go for the front agent on the offline model) reacts to a query
//     dispatched to a Code Shot agent and to each of its own steps: it asks the model for the next line, calls a
//     func, or asks another agent (a child path), and appends what came of it as the next session.agent_step;
//   - the standalone handler (standalone.go) posts a query dispatched to a standalone HTTP agent and records its
//     answer.
//
// A path that ends closes itself: the query's reply at the top, the asking agent's next step below. Each handler
// does one step per delivery, so a crash resumes from the last recorded step on any node, the steps of one query
// may run on different nodes, and replay shows every hop. Everything appended has an ID derived from its cause and
// is decided on the session as of the event reacted to (domain/session), so a redelivery appends nothing new.
//
// It imports events, the domain packages, agents, llm, the agent-protocol client and the router; never a face.
package queries

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/router"
)

// Sessions is the repository of sessions the handlers decide on.
type Sessions = eventstore.Repo[session.State, *session.State]

// Embeds is what the handlers need of stored embeds.
type Embeds interface {
	// EmbedURL signs the URL an agent fetches an uploaded embed from.
	EmbedURL(ctx context.Context, embedID string) (string, error)
	// Keep stores what an agent answered with: data: URIs become embeds of the account; http(s) URIs are kept.
	Keep(ctx context.Context, account string, in map[string]agentproto.Embed) (map[string]events.MessageEmbed, error)
}

// AgentNamer names a registered agent as Fixie did, "<username>/<handle>": what the tokens of calls to it carry
// in "aid" (the Fixie SDK checks it).
type AgentNamer interface {
	FixieName(ctx context.Context, accountID, handle string) (string, error)
}

// Config wires the handlers.
type Config struct {
	Sessions *Sessions
	Agents   *agents.Registry
	// Models is the model router; DefaultModel the model string of agents that name none.
	Models       llm.Provider
	DefaultModel string
	// Offline says the default model is the offline one: the front agent then routes instead of planning.
	Offline bool
	// Client calls agents over HTTP with the platform's tokens.
	Client *agentproto.Client
	Index  *router.Index
	// NC publishes the token deltas of streamed replies on the sessions' live subjects.
	NC     *nats.Conn
	Names  natsx.Names
	Embeds Embeds
	// AgentNames names agents in their tokens (nil: tokens name agents by ID).
	AgentNames AgentNamer
	Logger     *slog.Logger
	// MaxDepth bounds how deep agents may delegate to agents (default 3).
	MaxDepth int
	// MaxCalls bounds the model calls of one Code Shot query (default 10).
	MaxCalls int
	// StepTimeout bounds one step's model call, func call or standalone agent's answer (default 5m); past it the
	// step fails with a message the user reads.
	StepTimeout time.Duration
	// Concurrency is how many events each handler works on at once on this node (default 64: a step mostly waits
	// on a model or an agent, and a worker waiting holds nothing but a goroutine).
	Concurrency int
	// AckWait is how long a delivery may go unanswered before another node takes it (default 3s; heartbeats, every
	// third of it, keep long steps alive). It is how long a query in flight at a node's death waits: 5 s made session
	// messages settle 6.6 s after a restart was ready.
	AckWait time.Duration
}

// Handlers are the query handlers of one node.
type Handlers struct{ cfg Config }

// New returns the handlers.
func New(cfg Config) *Handlers {
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = 3
	}
	if cfg.MaxCalls == 0 {
		cfg.MaxCalls = 10
	}
	if cfg.StepTimeout == 0 {
		cfg.StepTimeout = 5 * time.Minute
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 64
	}
	if cfg.AckWait == 0 {
		cfg.AckWait = 3 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg}
}

// snapshot is what a handler reads of a session before it works on a path: the session's account and front
// agent, the query and the path as they were (the state itself is only read under the repository's hold).
type snapshot struct {
	account  string
	session  string
	query    session.Query
	path     session.Path
	outcome  session.Outcome
	answered bool
	// children are the query's paths opened by this one, by name.
	children map[string]session.Path
	history  []session.Message
	message  session.Message
}

// read takes a snapshot of one path of a query, as of at least the event the handler reacts to. It reports false
// when there is nothing to work on: the session is gone, the query answered, or the path unknown.
func (h *Handlers) read(ctx context.Context, e events.Envelope, replyID, path string, withContext bool) (snapshot, bool, error) {
	var snap snapshot
	ok := false
	err := h.cfg.Sessions.Read(ctx, e.AggregateID, e.Sequence, func(s *session.State, _ events.Version) error {
		if !s.Exists || s.Deleted {
			return nil
		}
		q, p, found := s.Path(replyID, path)
		if !found || q.Answered {
			return nil
		}
		ok = true
		snap = snapshot{account: s.Account, session: s.ID, query: *q, path: *p, children: map[string]session.Path{}}
		snap.query.Paths = nil // the state's own: read under the hold only
		snap.path.Steps = append([]events.SessionAgentStep(nil), p.Steps...)
		snap.outcome, snap.answered = p.Answered()
		for name, c := range q.Paths {
			if c.Parent() == p.Name {
				snap.children[name] = *c
			}
		}
		if withContext {
			snap.history, snap.message = s.Context(q)
		}
		return nil
	})
	return snap, ok, err
}

// update appends what decide returns for one path, deciding on the session as of at least the event reacted to.
func (h *Handlers) update(ctx context.Context, e events.Envelope, actor string, decide func(s *session.State, q *session.Query, p *session.Path) []events.Event, replyID, path string) error {
	meta := events.Meta{Account: e.Account, Actor: actor, CorrelationID: e.CorrelationID, CausationID: e.ID}
	res, err := h.cfg.Sessions.Update(ctx, e.AggregateID, e.Sequence, meta, func(s *session.State) ([]events.Event, error) {
		q, p, ok := s.Path(replyID, path)
		if !ok {
			return nil, nil
		}
		return decide(s, q, p), nil
	})
	if err != nil {
		return fmt.Errorf("session %s, path %s: %w", e.AggregateID, path, err)
	}
	if ends(res.Events) {
		// As of the answer itself: the session then holds every query posted before it.
		return h.dispatchNext(ctx, e, res.Version.Seq)
	}
	return nil
}

// ends reports whether appended events end a query (its reply, or its failure).
func ends(appended []events.Envelope) bool {
	for _, env := range appended {
		switch env.Event.(type) {
		case events.SessionReplyPosted, events.SessionReplyFailed:
			return true
		}
	}
	return false
}

// finish records steps at a path (numbered from `from`) and, when the last is an answer or a failure, closes the
// path in the same decision: the query's reply at the top, the asking agent's next step below.
func finish(s *session.State, q *session.Query, p *session.Path, from int, steps ...events.SessionAgentStep) []events.Event {
	evs := session.Record(s, q, p, from, steps...)
	if len(evs) == 0 {
		return nil
	}
	last := steps[min(len(evs), len(steps))-1]
	switch last.Kind {
	case session.StepAnswer:
		return append(evs, session.Close(s, q, p, session.Outcome{Text: last.Text, Embeds: p.Embeds(steps...)})...)
	case session.StepFailed:
		return append(evs, session.Close(s, q, p, session.Outcome{Failed: true, Text: last.Text, Code: last.Code})...)
	}
	return evs
}

// actorOf is how an agent's work is recorded as the events' actor.
func actorOf(agentID string) string {
	if agentID == "" {
		return "system"
	}
	return "agent:" + agentID
}

// targetOf is the path kind that answers for an agent.
func (h *Handlers) targetOf(info agent.Info, seq uint64) (session.Target, error) {
	t := session.Target{ID: info.ID, Handle: info.Handle, Seq: seq}
	switch {
	case info.ID == agents.RouterID:
		t.Kind = session.KindRouter
	case info.ID == agents.FixieID && h.cfg.Offline:
		t.Kind = session.KindFront
	case info.ID == agents.FixieID:
		t.Kind = session.KindCodeShot
	case info.Kind == agents.KindCodeShot:
		t.Kind = session.KindCodeShot
	case info.Kind == agents.KindStandalone:
		t.Kind = session.KindStandalone
	default:
		kind := info.Kind
		if kind == "" {
			kind = "unspecified"
		}
		return t, errs.E(errs.Unavailable, "agent %s is a %s agent, and this platform cannot query %s agents yet", info.Handle, kind, kind)
	}
	return t, nil
}

// claims are the token claims of a call to an agent on behalf of a query.
func (h *Handlers) claims(ctx context.Context, snap snapshot, info agent.Info) (agentproto.Claims, error) {
	c := agentproto.Claims{User: snap.account, AgentID: info.ID, SessionID: snap.session, Audience: info.Audience}
	if h.cfg.AgentNames != nil && !info.Builtin() {
		name, err := h.cfg.AgentNames.FixieName(ctx, info.Account, info.Handle)
		if err != nil {
			return c, fmt.Errorf("name agent %s for its token: %w", info.Handle, err)
		}
		c.AgentName = name
	}
	return c, nil
}

// streams reports whether the path's answer is the reply's text as the user sees it come: the top path's, or the
// delegate's of a front agent that hands the whole query over.
func streams(snap snapshot, parentKind string) bool {
	return snap.path.Depth() == 0 || (snap.path.Depth() == 1 && parentKind == session.KindFront)
}

// readable says in a sentence why an agent gave no answer.
func readable(handle string, err error, timeout time.Duration) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("Agent %s did not answer within %s.", handle, timeout)
	case errs.As(err) != nil && errs.CodeOf(err) != errs.Internal:
		return fmt.Sprintf("Agent %s could not answer: %s", handle, errs.MessageOf(err))
	}
	msg := err.Error()
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	return fmt.Sprintf("Agent %s failed: %s", handle, strings.TrimSpace(msg))
}

// failure is an outcome that says in a sentence why an agent gave no answer, and keeps the kind of its cause.
func failure(handle string, err error, timeout time.Duration) session.Outcome {
	o := session.Outcome{Failed: true, Text: readable(handle, err, timeout)}
	if code := errs.CodeOf(err); code != errs.Internal {
		o.Code = string(code)
	}
	return o
}

// stepContext bounds one step's call out, and tells a timeout of the step from the node stopping.
func (h *Handlers) stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, h.cfg.StepTimeout)
}

// stopping reports whether ctx ended because the node is stopping (the step is handed back and redone elsewhere),
// rather than because the step took too long.
func stopping(ctx context.Context) bool { return ctx.Err() != nil }
