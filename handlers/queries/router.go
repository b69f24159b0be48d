package queries

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
)

// routeCandidates is how many agents a routing records with their scores.
const routeCandidates = 3

// route is the built-in router's reaction (see Agents): for a query dispatched to it, it ranks the agents the
// session's account may use by embedding similarity of the query with their sample queries, and appends
// session.routed with the best candidates, their scores, and the one chosen (none when no score reaches the
// threshold). The agent that asked reads the choice as the router's answer.
func (h *Handlers) route(ctx context.Context, e events.Envelope) error {
	d, ok := session.DispatchOf(e)
	if !ok || d.Kind != session.KindRouter {
		return nil
	}
	snap, ok, err := h.read(ctx, e, d.ReplyID, d.Path, false)
	if err != nil || !ok || snap.path.Routed != nil {
		return err
	}
	text := snap.query.TextAt(&snap.path)
	var matches []events.RouteMatch
	chosen := ""
	if h.cfg.Index != nil {
		ranked, err := h.cfg.Index.Rank(ctx, snap.account, text, routeCandidates)
		if err != nil {
			return fmt.Errorf("route query %s: %w", snap.query.MessageID, err)
		}
		for _, m := range ranked {
			matches = append(matches, events.RouteMatch{AgentID: m.AgentID, Handle: m.Handle, Score: m.Score})
		}
		if len(ranked) > 0 && h.cfg.Index.Fits(ranked[0].Score) {
			chosen = ranked[0].Handle
		}
	}
	return h.update(ctx, e, actorOf(d.AgentID), func(s *session.State, q *session.Query, p *session.Path) []events.Event {
		return session.Route(s, q, p, matches, chosen)
	}, d.ReplyID, d.Path)
}
