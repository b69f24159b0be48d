// Package sweeper is the timeout sweeper of the Assistants API (seed 003's background queue for run objects).
//
// A run's expiry is a JetStream message schedule, one per run, set when the run is created (Scheduler, a consumer of
// thread.run_created) to fire at its expires_at on the TIMERS stream; every node consumes the expiries that fire
// (RunExpiries) and expires the run if it is still active, as the task timers wake sleeps. Nothing lists the runs
// to find those due.
//
// One node at a time, elected by a lease in a KV bucket whose keys expire, still looks at every active run on a
// tick, for what no message announces: a run left queued, in progress or cancelling with no worker on it (its node
// died after taking it) is handed to the run worker again, and a run whose expiry did not fire within a while of its
// time is expired.
//
// It imports the thread domain, lease, natsx and the handler runtime; the runs commands (Expirer) and the index
// of active runs (Active) reach it through interfaces; never a face.
package sweeper

import (
	"context"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx"
)

// LeaseName is the sweeper's lease in the leases bucket.
const LeaseName = "run_sweeper"

// Expirer expires a run that has outlived its expires_at (commands.Turns).
type Expirer interface {
	Expire(ctx context.Context, ref thread.RunRef, now time.Time) (bool, error)
}

// Active lists the runs that have not ended.
type Active interface {
	ActiveRuns(ctx context.Context) ([]thread.ActiveRun, error)
}

// Config wires a Sweeper.
type Config struct {
	Runs Expirer
	// Active lists the runs not yet ended (the runs read model: projections.ActiveRuns).
	Active Active
	// JS and Names reach the timers stream, where the runs' expiries are scheduled.
	JS    jetstream.JetStream
	Names natsx.Names
	// Leases is the bucket of leases; its TTL is LeaseTTL.
	Leases   jetstream.KeyValue
	LeaseTTL time.Duration
	Holder   string
	// Interval is the time between sweeps (default: a third of the lease TTL).
	Interval time.Duration
	// Stalled is how long a run may sit in queued, in_progress or cancelling before the sweeper hands it to a
	// worker again (default: the lease TTL, the run lock's, past which a dead worker's lock has expired or is about
	// to). A turn that waits on its model longer than this looks stalled too. This node's worker knows the runs it
	// drives and Kick refuses them; a run a live worker elsewhere drives is handed anyway, at the cost of one refused
	// lock a sweep, since this node cannot tell it from a dead node's run whose lock has not expired yet (whose next
	// kick must come a sweep later, not a stall later). With twice the TTL and a sweep every TTL, a dead node's runs
	// waited up to 9 s for their kick, and settled 10.6-12.8 s after a restart was ready.
	Stalled time.Duration
	// Kick hands a run to this node's run worker and reports whether it did: not when the worker drives the run
	// already or has no free slot. A run whose lock another node holds is handed, and the worker finds it taken.
	Kick   func(thread.RunRef) bool
	Now    func() time.Time
	Logger *slog.Logger
}

// Sweeper expires and re-drives runs.
type Sweeper struct{ cfg Config }

// New returns a sweeper; Run it.
func New(cfg Config) *Sweeper {
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = lease.DefaultTTL
	}
	if cfg.Interval <= 0 {
		cfg.Interval = cfg.LeaseTTL / 3
	}
	if cfg.Stalled <= 0 {
		cfg.Stalled = cfg.LeaseTTL
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Sweeper{cfg: cfg}
}

// Run competes for the sweeper's lease and sweeps while it holds it, until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	lease.Run(ctx, s.cfg.Leases, LeaseName, s.cfg.Holder, s.cfg.LeaseTTL, s.cfg.Logger, func(ctx context.Context) {
		s.cfg.Logger.Debug("run sweeper: leading", "node", s.cfg.Holder)
		t := time.NewTicker(s.cfg.Interval)
		defer t.Stop()
		for {
			if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("run sweeper: sweep", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
}

// expireLate is how late a run's expiry must be before the sweep expires the run itself: its schedule fires at the
// run's expires_at, so a run this late is one whose schedule was lost.
const expireLate = 30 * time.Second

// Result counts what one sweep did.
type Result struct {
	Expired int
	Kicked  int
}

// Sweep looks at every active run once.
func (s *Sweeper) Sweep(ctx context.Context) (Result, error) {
	var res Result
	active, err := s.cfg.Active.ActiveRuns(ctx)
	if err != nil {
		return res, err
	}
	now := s.cfg.Now()
	for _, a := range active {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		ref := a.Ref
		if now.Sub(a.ExpiresAt) >= expireLate {
			expired, err := s.cfg.Runs.Expire(ctx, ref, now)
			if err != nil {
				s.cfg.Logger.Warn("run sweeper: expire run", "run", ref.RunID, "err", err)
				continue
			}
			if expired {
				res.Expired++
				s.cfg.Logger.Info("run expired", "thread", ref.ThreadID, "run", ref.RunID)
			}
			continue
		}
		if a.Status != events.RunStatusRequiresAction && now.Sub(a.Changed) >= s.cfg.Stalled && s.cfg.Kick != nil && s.cfg.Kick(ref) {
			res.Kicked++
		}
	}
	return res, nil
}
