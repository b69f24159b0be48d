package queries

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/livejoin"
)

// standalone is the reaction to a query dispatched to a standalone agent (see Agents): it posts the query to the
// agent's URL (with the query's embeds as signed URLs), passes the answer on to the session's live subject as it
// streams, and records the answer — the reply at the top, the asking agent's next step below — or why there is none.
func (h *Handlers) standalone(ctx context.Context, e events.Envelope) error {
	d, ok := session.DispatchOf(e)
	if !ok || d.Kind != session.KindStandalone {
		return nil
	}
	snap, ok, err := h.read(ctx, e, d.ReplyID, d.Path, false)
	if err != nil || !ok || snap.answered {
		return err
	}
	o, err := h.askStandalone(ctx, e, snap)
	if err != nil {
		return err
	}
	return h.update(ctx, e, actorOf(d.AgentID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
		if p.Depth() == 0 {
			return session.Close(s, q, p, o)
		}
		st := events.SessionAgentStep{Kind: session.StepAnswer, Text: o.Text, Embeds: o.Embeds}
		if o.Failed {
			st = events.SessionAgentStep{Kind: session.StepFailed, Text: o.Text, Code: o.Code}
		}
		return finish(s, q, p, 0, st)
	}, d.ReplyID, d.Path)
}

// askStandalone posts the query and returns the agent's answer, or a failure the user reads. An error is only
// returned when the node is stopping (the query is handed back) or the log fails.
func (h *Handlers) askStandalone(ctx context.Context, e events.Envelope, snap snapshot) (session.Outcome, error) {
	d := snap.path.Dispatch
	info, _, err := h.cfg.Agents.Get(ctx, snap.account, d.AgentID, d.AgentSeq)
	if err == nil && info.QueryURL == "" {
		err = errs.E(errs.Unavailable, "agent %s has no query URL", info.Handle)
	}
	if err != nil {
		if !unusable(err) {
			return session.Outcome{}, err
		}
		return failure(d.AgentHandle, err, h.cfg.StepTimeout), nil
	}
	msg := agentproto.Message{Text: snap.query.TextAt(&snap.path), Embeds: map[string]agentproto.Embed{}}
	if snap.path.Depth() == 0 {
		for k, em := range snap.query.Embeds {
			uri := em.URI
			if em.EmbedID != "" && h.cfg.Embeds != nil {
				if uri, err = h.cfg.Embeds.EmbedURL(ctx, em.EmbedID); err != nil {
					return session.Outcome{}, fmt.Errorf("sign embed %s: %w", em.EmbedID, err)
				}
			}
			msg.Embeds[k] = agentproto.Embed{ContentType: em.ContentType, URI: uri}
		}
	}
	// The agent answers with the whole text so far on every line; the session's stream gets what is new.
	var stream *livejoin.Joiner
	if streams(snap, h.parentKind(ctx, e, snap)) {
		stream = h.live(snap)
	}
	var sent string
	relay := func(text string) {
		if stream != nil && strings.HasPrefix(text, sent) && len(text) > len(sent) {
			stream.Write(text[len(sent):])
			sent = text
		}
	}
	cl, err := h.claims(ctx, snap, info)
	if err != nil {
		return session.Outcome{}, err
	}
	sctx, cancel := h.stepContext(ctx)
	m, err := h.cfg.Client.Query(sctx, info.QueryURL, msg, cl, relay)
	cancel()
	if err == nil {
		relay(m.Text)
	}
	stream.Flush()
	if err != nil {
		if stopping(ctx) {
			return session.Outcome{}, ctx.Err()
		}
		h.cfg.Logger.Info("agent failed", "agent", info.Handle, "session", snap.session, "err", err)
		return failure(info.Handle, err, h.cfg.StepTimeout), nil
	}
	embeds, err := h.cfg.Embeds.Keep(ctx, snap.account, m.Embeds)
	if err != nil {
		if errs.CodeOf(err) == errs.Internal {
			return session.Outcome{}, err
		}
		return session.Outcome{Failed: true, Text: readable(info.Handle, err, h.cfg.StepTimeout)}, nil
	}
	return session.Outcome{Text: m.Text, Embeds: embeds}, nil
}
