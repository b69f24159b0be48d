package router

import (
	"context"
	"log/slog"
	"time"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
)

// AgentLoader loads an agent as the log holds it.
type AgentLoader interface {
	Load(ctx context.Context, id string) (agent.State, error)
}

// Feed keeps the index current with the registry: it follows every agent event from the start of the log (history,
// then live) and puts each changed agent in the index or takes it out. Each node runs its own; vectors computed by
// one node are found by the others in the index's vector bucket. It returns when ctx ends.
func (ix *Index) Feed(ctx context.Context, store *eventstore.Store, agents AgentLoader, logger *slog.Logger) {
	names := store.Names()
	for ctx.Err() == nil {
		for e, err := range store.Follow(ctx, 0, names.TypeFilter("agent.*")) {
			if err != nil {
				if ctx.Err() == nil {
					logger.Warn("routing index: follow agents", "err", err)
				}
				break
			}
			ix.feedOne(ctx, agents, e, logger)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (ix *Index) feedOne(ctx context.Context, agents AgentLoader, e events.Envelope, logger *slog.Logger) {
	rec, err := agents.Load(ctx, e.AggregateID)
	if err != nil {
		if ctx.Err() == nil {
			logger.Warn("routing index: load agent", "agent", e.AggregateID, "err", err)
		}
		return
	}
	if !rec.Live() {
		ix.Remove(e.AggregateID)
		return
	}
	err = ix.Upsert(ctx, Agent{ID: rec.ID, Handle: rec.Handle, Account: rec.Account, Published: rec.Published,
		Description: rec.Description, Queries: rec.Queries})
	if err != nil && ctx.Err() == nil {
		logger.Warn("routing index: index agent", "agent", rec.Handle, "err", err)
	}
}
