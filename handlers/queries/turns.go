package queries

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
)

// The session runner: a session's queries are answered in order, one at a time, each with the replies before it
// as context. A query posted to an idle session carries its dispatch (commands.Sessions.Post asks Front); one posted
// behind another, or to a front agent that could not be used then, is dispatched by dispatchNext, which the Agents
// handler calls for such a post and after every answer. A query whose front agent cannot be used gets a failure
// the user reads at once.

// Front is the target a query posted to an idle session goes to: the session's front agent and the handler kind
// that answers for it (commands.Fronts). It reports false when the agent cannot be used or looked up now; the
// query is then posted alone and dispatchNext deals with it.
func (h *Handlers) Front(ctx context.Context, account, agentID string) (session.Target, bool) {
	info, seq, err := h.cfg.Agents.Get(ctx, account, agentID, eventstore.Fresh)
	if err != nil {
		return session.Target{}, false
	}
	t, err := h.targetOf(info, seq)
	return t, err == nil
}

// turn dispatches the session's next query when a query is posted without its dispatch.
func (h *Handlers) turn(ctx context.Context, e events.Envelope) error {
	if m, ok := e.Event.(events.SessionMessagePosted); ok && m.Type != events.MessageQuery {
		return nil
	}
	return h.dispatchNext(ctx, e, e.Sequence)
}

// dispatchNext dispatches the session's next query, if its turn has come, deciding on the session as of at least
// stream sequence atLeast; e is the event reacted to. A query that fails at once (its agent is gone) makes way for
// the next one, so it loops.
//
// The handler that answers a query calls it too, once the answer is in the log, and on every delivery after it: a
// node that died between the answer and the dispatch is handed the event again, finds the query answered and
// dispatches the next one then. No handler is handed the answers themselves.
func (h *Handlers) dispatchNext(ctx context.Context, e events.Envelope, atLeast uint64) error {
	for {
		var next session.Query
		var frontID, frontHandle, account string
		err := h.cfg.Sessions.Read(ctx, e.AggregateID, atLeast, func(s *session.State, _ events.Version) error {
			if q := s.Next(); q != nil {
				next, frontID, frontHandle, account = *q, s.FrontAgentID, s.FrontAgentHandle, s.Account
			}
			return nil
		})
		if err != nil || next.MessageID == "" {
			return err
		}
		info, seq, err := h.cfg.Agents.Get(ctx, account, frontID, eventstore.Fresh)
		var target session.Target
		if err == nil {
			target, err = h.targetOf(info, seq)
		}
		if err != nil && !unusable(err) {
			return err
		}
		var fail session.Outcome
		if err != nil {
			target = session.Target{ID: frontID, Handle: info.Handle}
			if target.Handle == "" {
				target.Handle = frontHandle
			}
			if target.Handle == "" {
				target.Handle = frontID
			}
			fail = failure(target.Handle, err, h.cfg.StepTimeout)
		}
		meta := events.Meta{Account: account, Actor: actorOf(target.ID), CorrelationID: next.MessageID, CausationID: e.ID}
		res, err := h.cfg.Sessions.Update(ctx, e.AggregateID, atLeast, meta, func(s *session.State) ([]events.Event, error) {
			q := s.Next()
			if q == nil || q.MessageID != next.MessageID {
				return nil, nil // dispatched meanwhile, or the session moved on
			}
			if fail.Failed {
				return session.Fail(s, q, target, fail.Text, fail.Code), nil
			}
			return session.Dispatch(s, q, target), nil
		})
		if err != nil {
			return fmt.Errorf("dispatch query %s of session %s: %w", next.MessageID, e.AggregateID, err)
		}
		if !fail.Failed || len(res.Events) == 0 {
			return nil
		}
		// The query failed at once: the next one may go.
		atLeast = max(atLeast, res.Version.Seq)
	}
}

// unusable reports an agent the session cannot query (gone, not visible, of a kind nobody answers for): the query
// gets a failure message rather than a retry.
func unusable(err error) bool {
	code := errs.CodeOf(err)
	return code == errs.NotFound || code == errs.Unavailable
}
