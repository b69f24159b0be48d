package queries

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/router"
)

// front moves on the front agent's path when the model is the offline one: it cannot plan, so it hands the whole
// query to the agent the router picks, and answers itself (plainly, as the offline model does) when none fits, the
// account has no agent to route to, or the query asks for help ("What can you do?": the answer lists the agents).
// Its moves:
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
		text := snap.query.TextAt(&snap.path)
		if h.cfg.Index == nil || h.cfg.Index.Candidates(snap.account) == 0 || offline.AsksForHelp(text) {
			return h.answerPlainly(ctx, e, snap)
		}
		router, _ := h.cfg.Agents.Builtin(agents.RouterID)
		target := session.Target{ID: router.ID, Handle: router.Handle, Kind: session.KindRouter}
		return h.update(ctx, e, actor, func(s *session.State, q *session.Query, p *session.Path) []events.Event {
			return session.Delegate(s, q, p, routerPath, target, text)
		}, tr.replyID, tr.path)
	}
}

// answerPlainly is the front agent answering the query itself with the platform's default model, the session's
// chat log as context, streaming the answer as it comes.
func (h *Handlers) answerPlainly(ctx context.Context, e events.Envelope, snap snapshot) error {
	req := llm.Request{Model: h.cfg.DefaultModel, Messages: agents.ChatMessages(agents.FixiePrompt+"\n\n"+h.directory(snap.account),
		snap.history, snap.message)}
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

// directory lists the agents the account can ask, with a few of their sample queries (see llm.AgentsHeading): the
// offline model answers "help" with it.
func (h *Handlers) directory(account string) string {
	var b strings.Builder
	b.WriteString(llm.AgentsHeading)
	var list []router.Agent
	if h.cfg.Index != nil {
		list = h.cfg.Index.Agents(account)
	}
	if len(list) == 0 {
		b.WriteString("\n(none)")
	}
	for _, a := range list {
		parts := []string{}
		if d := strings.TrimSpace(session.OneLine(a.Description)); d != "" {
			parts = append(parts, strings.TrimSuffix(d, ".")+".")
		}
		if n := min(len(a.Queries), directoryQueries); n > 0 {
			quoted := make([]string, n)
			for i, q := range a.Queries[:n] {
				quoted[i] = fmt.Sprintf("%q", session.OneLine(q))
			}
			parts = append(parts, "Try "+strings.Join(quoted, ", "))
		}
		fmt.Fprintf(&b, "\n- %s: %s", a.Handle, strings.Join(parts, " "))
	}
	return b.String()
}

// directoryQueries is how many sample queries the directory shows an agent with.
const directoryQueries = 3

func snapshotChildren(q *session.Query, p *session.Path) []string {
	var out []string
	for name, c := range q.Paths {
		if c.Parent() == p.Name {
			out = append(out, name)
		}
	}
	return out
}
