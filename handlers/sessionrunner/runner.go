// Package sessionrunner is the handler that answers sessions: for every query posted to a session it dispatches the
// query to the session's front agent (through agents.Registry, the one dispatch path), with the session's chat log
// as context, streams the reply's text to the session's live subject as the agent produces it, and records the reply
// — or, when the agent fails, a failure message the user can read, so that no query is left hanging.
//
// It is idempotent (the reply's ID derives from the query's event; the session's state is checked before the agent
// is asked and before anything is appended) and answers the queries of one session in order.
//
// It imports events, commands and agents; never a face.
package sessionrunner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// EmbedURLs signs the URL an agent fetches an uploaded embed from.
type EmbedURLs interface {
	EmbedURL(ctx context.Context, embedID string) (string, error)
}

// Config wires the runner.
type Config struct {
	Commands *commands.Commands
	Agents   *agents.Registry
	Store    *events.Store
	// NC publishes the token deltas of streamed replies.
	NC     *nats.Conn
	Names  natsx.Names
	Embeds EmbedURLs
	Logger *slog.Logger
	// ReplyTimeout bounds one agent's answer (default 5m); past it the query gets a failure message.
	ReplyTimeout time.Duration
	// OrderWait bounds how long a query waits for the earlier queries of its session to be answered before its
	// handling is retried (default 10m).
	OrderWait time.Duration
	// Concurrency is how many queries this node answers at once (default 16).
	Concurrency int
}

// Runner answers the queries of sessions.
type Runner struct{ cfg Config }

// New returns a runner.
func New(cfg Config) *Runner {
	if cfg.ReplyTimeout == 0 {
		cfg.ReplyTimeout = 5 * time.Minute
	}
	if cfg.OrderWait == 0 {
		cfg.OrderWait = 10 * time.Minute
	}
	if cfg.Concurrency == 0 {
		cfg.Concurrency = 16
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runner{cfg: cfg}
}

// Handler is the runner as a handler of the log.
func (r *Runner) Handler() runtime.Handler {
	return runtime.Handler{
		Name:        "session-runner",
		EventTypes:  []string{"session.message_posted"},
		Handle:      r.Handle,
		Concurrency: r.cfg.Concurrency,
		AckWait:     time.Minute,
	}
}

// Handle answers the query one posted message is.
func (r *Runner) Handle(ctx context.Context, e events.Envelope) error {
	q, ok := e.Event.(events.SessionMessagePosted)
	if !ok || q.Type != events.MessageQuery {
		return nil
	}
	s, err := r.waitTurn(ctx, e.AggregateID, q.MessageID)
	if err != nil || s == nil {
		return err
	}
	info, agent, err := r.cfg.Agents.Resolve(ctx, e.Account, s.FrontendAgentID)
	if err != nil {
		if code := errs.CodeOf(err); code == errs.NotFound || code == errs.Unavailable {
			info.ID, info.Handle = s.FrontendAgentID, s.FrontendAgentHandle
			return r.cfg.Commands.RecordFailure(ctx, e, info, readable(info, err, r.cfg.ReplyTimeout), errs.CodeOf(err), s)
		}
		return err
	}
	proceed, err := r.cfg.Commands.DispatchQuery(ctx, e, info, s)
	if err != nil || !proceed {
		return err
	}
	query, err := r.query(ctx, e, &s.Session, q, info)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, r.cfg.ReplyTimeout)
	defer cancel()
	reply, err := agent.Reply(rctx, query)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // the node is stopping: the query is handed back and answered after the restart
		}
		r.cfg.Logger.Info("agent failed", "agent", info.Handle, "session", e.AggregateID, "message", q.MessageID, "err", err)
		return r.cfg.Commands.RecordFailure(ctx, e, info, readable(info, err, r.cfg.ReplyTimeout), errs.CodeOf(err), s)
	}
	embeds, err := r.replyEmbeds(ctx, e.Account, reply.Embeds)
	if err != nil {
		return r.cfg.Commands.RecordFailure(ctx, e, info, readable(info, err, r.cfg.ReplyTimeout), errs.CodeOf(err), s)
	}
	return r.cfg.Commands.RecordReply(ctx, e, info, reply.Text, embeds, s)
}

// waitTurn loads the session and, while an earlier query of it is unanswered, waits for that answer: a session's
// queries are answered in order, each with the replies before it as context. It returns nil when there is nothing
// to do (the session is gone or the query answered).
func (r *Runner) waitTurn(ctx context.Context, sessionID, messageID string) (*commands.LoadedSession, error) {
	deadline := time.Now().Add(r.cfg.OrderWait)
	for {
		s, v, err := r.cfg.Commands.LoadSession(ctx, sessionID)
		if err != nil {
			return nil, err
		}
		if !s.Exists || s.Deleted || s.Answered[messageID] {
			return nil, nil
		}
		if _, ok := s.Message(messageID); !ok {
			return nil, nil
		}
		pending := s.PendingBefore(messageID)
		if pending == "" {
			return &commands.LoadedSession{Session: s, Version: v}, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("query %s waits for %s of session %s, unanswered after %s", messageID, pending, sessionID, r.cfg.OrderWait)
		}
		if err := r.waitForChange(ctx, sessionID, v.Seq, time.Until(deadline)); err != nil {
			return nil, err
		}
	}
}

// waitForChange blocks until the session has an event after sequence `after`, or the wait is over.
func (r *Runner) waitForChange(ctx context.Context, sessionID string, after uint64, wait time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, err := range r.cfg.Store.Follow(wctx, after+1, r.cfg.Names.AggregateFilter("session", sessionID)) {
		if err != nil && ctx.Err() == nil && wctx.Err() == nil {
			return fmt.Errorf("wait for session %s: %w", sessionID, err)
		}
		return ctx.Err()
	}
	return ctx.Err()
}

// query builds what the agent is asked: the message, the chat log before it, and a stream to the live subject.
func (r *Runner) query(ctx context.Context, e events.Envelope, s *commands.Session, q events.SessionMessagePosted, info agents.Info) (agents.Query, error) {
	// The context is the chat log as it is now — the replies to earlier queries included, though they were appended
	// after this query — without this query and any posted after it.
	var history []agents.Message
	var msg agents.Message
	later := false
	for _, m := range s.Messages {
		if m.ID == q.MessageID {
			am, err := r.message(ctx, m)
			if err != nil {
				return agents.Query{}, err
			}
			msg, later = am, true
			continue
		}
		if later && m.Type == events.MessageQuery {
			continue
		}
		am, err := r.message(ctx, m)
		if err != nil {
			return agents.Query{}, err
		}
		history = append(history, am)
	}
	replyID := commands.ReplyID(e.ID)
	subject := r.cfg.Names.LiveSubject("session", e.AggregateID)
	index := 0
	stream := func(delta string) {
		b, err := json.Marshal(agents.LiveDelta{Type: "delta", MessageID: replyID, InReplyTo: q.MessageID, Index: index, Text: delta})
		if err != nil {
			return
		}
		index++
		if err := r.cfg.NC.Publish(subject, b); err != nil {
			r.cfg.Logger.Debug("publish delta", "subject", subject, "err", err)
		}
	}
	return agents.Query{
		Session: e.AggregateID, Message: msg, History: history, ReplyID: replyID, Stream: stream,
		// The key (or agent) that posted the query is recorded as the event's actor.
		Caller: auth.Principal{AccountID: e.Account, KeyID: e.Actor, Username: q.SentBy},
		Record: func(ctx context.Context, label string, step agents.Step) error {
			return r.cfg.Commands.RecordStep(ctx, e, info, label, step)
		},
	}, nil
}

// message is a chat-log message as an agent sees it, with signed URLs for its uploaded embeds.
func (r *Runner) message(ctx context.Context, m commands.SessionMessage) (agents.Message, error) {
	out := agents.Message{ID: m.ID, Text: m.Text, SentBy: m.SentBy, Type: m.Type, InReplyTo: m.InReplyTo, Time: m.Time}
	if len(m.Embeds) > 0 {
		out.Embeds = make(map[string]agents.Embed, len(m.Embeds))
		for k, em := range m.Embeds {
			uri := em.URI
			if em.EmbedID != "" && r.cfg.Embeds != nil {
				u, err := r.cfg.Embeds.EmbedURL(ctx, em.EmbedID)
				if err != nil {
					return agents.Message{}, fmt.Errorf("sign embed %s: %w", em.EmbedID, err)
				}
				uri = u
			}
			out.Embeds[k] = agents.Embed{ContentType: em.ContentType, URI: uri}
		}
	}
	return out, nil
}

// replyEmbeds stores what a reply carries: data: URIs become embeds of the session's account; http(s) URIs are kept.
func (r *Runner) replyEmbeds(ctx context.Context, account string, in map[string]agents.Embed) (map[string]events.MessageEmbed, error) {
	if len(in) == 0 {
		return nil, nil
	}
	src := make(map[string]commands.EmbedSource, len(in))
	for k, em := range in {
		src[k] = commands.EmbedSource{URI: em.URI, ContentType: em.ContentType}
	}
	return r.cfg.Commands.MessageEmbeds(ctx, auth.Principal{AccountID: account}, src)
}

// readable says in a sentence why an agent gave no answer.
func readable(info agents.Info, err error, timeout time.Duration) string {
	name := info.Handle
	if name == "" {
		name = info.ID
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("Agent %s did not answer within %s.", name, timeout)
	case errs.As(err) != nil && errs.CodeOf(err) != errs.Internal:
		return fmt.Sprintf("Agent %s could not answer: %s", name, errs.MessageOf(err))
	}
	msg := err.Error()
	if len(msg) > 1000 {
		msg = msg[:1000] + "…"
	}
	return fmt.Sprintf("Agent %s failed: %s", name, strings.TrimSpace(msg))
}
