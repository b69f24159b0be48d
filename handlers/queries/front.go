package queries

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/llm"
)

// front moves on the front agent's path when the model is the offline one: it cannot plan, so it hands the whole
// query to the agent the router picks, and answers itself (plainly, as the offline model does) when none fits or
// the account has no agent to route to. Its moves:
//
//	dispatched, nothing asked yet   → ask the router (fixie>router), or answer itself when there is no agent at all
//	the router answered             → ask the chosen agent (fixie>calc), or answer itself when none fits
//	the chosen agent answered       → its answer is the reply
func (h *Handlers) front(ctx context.Context, e events.Envelope, tr trigger, snap snapshot) error {
	routerPath := snap.path.Name + ">" + agents.RouterID
	var routed, delegate *session.Path
	for name, c := range snap.children {
		c := c
		if name == routerPath {
			routed = &c
		} else {
			delegate = &c
		}
	}
	actor := actorOf(snap.path.Dispatch.AgentID)
	switch {
	case delegate != nil:
		o, done := delegate.Answered()
		if !done || tr.child != delegate.Name {
			return nil
		}
		return h.update(ctx, e, actor, func(s *session.State, q *session.Query, p *session.Path) []events.Event {
			return session.Close(s, q, p, o)
		}, tr.replyID, tr.path)
	case routed != nil:
		o, done := routed.Answered()
		if !done || tr.child != routed.Name {
			return nil
		}
		if o.Failed || routed.Routed == nil || routed.Routed.Chosen == "" {
			return h.answerPlainly(ctx, e, snap)
		}
		target, err := h.resolve(ctx, snap.account, routed.Routed.Chosen)
		if err != nil {
			if !unusable(err) {
				return err
			}
			return h.answerPlainly(ctx, e, snap)
		}
		child := snap.path.Name + ">" + target.Handle
		text := snap.query.TextAt(&snap.path)
		return h.update(ctx, e, actor, func(s *session.State, q *session.Query, p *session.Path) []events.Event {
			return session.Delegate(s, q, p, child, target, text)
		}, tr.replyID, tr.path)
	default:
		if tr.index != -1 || tr.child != "" {
			return nil
		}
		if h.cfg.Index == nil || h.cfg.Index.Candidates(snap.account) == 0 {
			return h.answerPlainly(ctx, e, snap)
		}
		router, _ := h.cfg.Agents.Builtin(agents.RouterID)
		target := session.Target{ID: router.ID, Handle: router.Handle, Kind: session.KindRouter}
		text := snap.query.TextAt(&snap.path)
		return h.update(ctx, e, actor, func(s *session.State, q *session.Query, p *session.Path) []events.Event {
			return session.Delegate(s, q, p, routerPath, target, text)
		}, tr.replyID, tr.path)
	}
}

// answerPlainly is the front agent answering the query itself with the platform's default model, the session's
// chat log as context, streaming the answer as it comes.
func (h *Handlers) answerPlainly(ctx context.Context, e events.Envelope, snap snapshot) error {
	req := llm.Request{Model: h.cfg.DefaultModel, Messages: agents.ChatMessages(agents.FixiePrompt, snap.history, snap.message)}
	stream := h.live(snap)
	sctx, cancel := h.stepContext(ctx)
	resp, err := h.cfg.Models.Complete(sctx, req, func(d llm.Delta) {
		if d.Text != "" {
			stream.Write(d.Text)
		}
	})
	cancel()
	stream.Flush()
	o := session.Outcome{Text: resp.Text}
	if err != nil {
		if stopping(ctx) {
			return ctx.Err()
		}
		o = failure(snap.path.Dispatch.AgentHandle, fmt.Errorf("the model failed: %w", err), h.cfg.StepTimeout)
	}
	return h.update(ctx, e, actorOf(snap.path.Dispatch.AgentID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
		if len(q.Paths) > 1 && len(snapshotChildren(q, p)) != len(snap.children) {
			return nil // the path moved on while the model answered
		}
		return session.Close(s, q, p, o)
	}, snap.query.ReplyID, snap.path.Name)
}

func snapshotChildren(q *session.Query, p *session.Path) []string {
	var out []string
	for name, c := range q.Paths {
		if c.Parent() == p.Name {
			out = append(out, name)
		}
	}
	return out
}
