package agentrun

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/router"
)

// Feed keeps the routing index current with the registry: it follows every agent event from the start of the log
// (history, then live) and puts each changed agent in the index or takes it out. Each node runs its own; vectors
// computed by one node are found by the others in the index's vector bucket. It returns when ctx ends.
func (d *Dispatch) Feed(ctx context.Context) {
	names := d.cfg.Store.Names()
	for ctx.Err() == nil {
		for e, err := range d.cfg.Store.Follow(ctx, 0, names.TypeFilter("agent.*")) {
			if err != nil {
				if ctx.Err() == nil {
					d.cfg.Logger.Warn("routing index: follow agents", "err", err)
				}
				break
			}
			d.index(ctx, e)
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func (d *Dispatch) index(ctx context.Context, e events.Envelope) {
	rec, err := d.cfg.Registry.Load(ctx, e.AggregateID)
	if err != nil {
		d.cfg.Logger.Warn("routing index: load agent", "agent", e.AggregateID, "err", err)
		return
	}
	if !rec.Exists || rec.Deleted {
		d.cfg.Index.Remove(e.AggregateID)
		return
	}
	err = d.cfg.Index.Upsert(ctx, router.Agent{ID: rec.ID, Handle: rec.Handle, Account: rec.Account, Published: rec.Published,
		Description: rec.Description, Queries: rec.Queries})
	if err != nil {
		d.cfg.Logger.Warn("routing index: index agent", "agent", rec.Handle, "err", err)
	}
}
