package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/workflow"
)

// timer is what a scheduled message carries: the execution (its aggregate ID), the sleeping step's effect key, and
// when it is due.
type timer struct {
	Execution string    `json:"execution"`
	Account   string    `json:"account"`
	Key       string    `json:"key"`
	Until     time.Time `json:"until"`
}

// schedule sets a durable timer for a sleep: a JetStream message schedule that publishes on the fire subject at its
// time, whichever nodes are up then. A sleeping execution costs nothing until it wakes.
func (g *Engine) schedule(ctx context.Context, id string, ef workflow.Effect) error {
	body, err := json.Marshal(timer{Execution: id, Account: events.JulepAccountOf(id), Key: ef.Key, Until: ef.Until})
	if err != nil {
		return err
	}
	token := strings.ReplaceAll(ef.Key, "/", "-")
	// A schedule's time has whole seconds: round up, so that a sleep is never cut short.
	at := ef.Until.Truncate(time.Second)
	if at.Before(ef.Until) {
		at = at.Add(time.Second)
	}
	_, err = g.cfg.JS.Publish(ctx, g.cfg.Names.TimerScheduleSubject(id, token), body,
		jetstream.WithScheduleAt(at), jetstream.WithScheduleTarget(g.cfg.Names.TimerFireSubject(id)),
		jetstream.WithMsgID("timer:"+id+":"+token))
	if err != nil {
		return fmt.Errorf("execution %s: set the timer of %s: %w", id, ef.Key, err)
	}
	return nil
}

// DueTimers lists the sleeps under way that are due by a time (the sweeper's fallback for timers that did not fire).
type DueTimers interface {
	DueTimers(ctx context.Context, by time.Time) ([]Due, error)
}

// Due is one due sleep of an execution.
type Due struct {
	Execution string // the aggregate ID
	Account   string
	Key       string
}

// TimersLease is the lease, in the leases bucket, of the node that sweeps the task timers.
const TimersLease = "task_timers"

// Owner elects the one node that sweeps the timers: a lease in a KV bucket whose keys expire after TTL, held by
// Holder (lease.Run). With no bucket, the node sweeps on its own (a single node, tests).
type Owner struct {
	Leases jetstream.KeyValue
	TTL    time.Duration
	Holder string
}

// RunTimers consumes fired timers until ctx ends, and, while this node is the timers' owner, every SweepEvery
// wakes the sleeps that are due by more than a few seconds and did not fire. ready is called once the consumer is
// up.
//
// Every node consumes fired timers (one durable consumer: each fires once, on one node); only the owner sweeps, so
// that the nodes do not each list the due sleeps and race to wake the same ones.
func (g *Engine) RunTimers(ctx context.Context, due DueTimers, owner Owner, ready func()) error {
	stream, err := g.cfg.JS.Stream(ctx, g.cfg.Names.TimersStream())
	if err != nil {
		return fmt.Errorf("open the timers stream: %w", err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       g.cfg.Names.Consumer("timers", "tasks"),
		FilterSubject: g.cfg.Names.TimerFireWildcard(),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       g.cfg.AckWait,
		MaxAckPending: 1024,
	})
	if err != nil {
		return fmt.Errorf("create the timers consumer: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { g.fire(ctx, m) })
	if err != nil {
		return fmt.Errorf("consume timers: %w", err)
	}
	defer cc.Stop()
	if ready != nil {
		ready()
	}
	if owner.Leases == nil {
		g.sweepEvery(ctx, due)
		return nil
	}
	ttl := owner.TTL
	if ttl <= 0 {
		ttl = lease.DefaultTTL
	}
	lease.Run(ctx, owner.Leases, TimersLease, owner.Holder, ttl, g.cfg.Logger, func(ctx context.Context) {
		g.cfg.Logger.Debug("task timers: sweeping", "node", owner.Holder)
		g.sweepEvery(ctx, due)
	})
	return nil
}

// sweepEvery sweeps every SweepEvery until ctx ends.
func (g *Engine) sweepEvery(ctx context.Context, due DueTimers) {
	tick := time.NewTicker(g.cfg.SweepEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			g.sweep(ctx, due)
		}
	}
}

// fire records the end of a sleep whose timer fired.
func (g *Engine) fire(ctx context.Context, m jetstream.Msg) {
	var t timer
	if err := json.Unmarshal(m.Data(), &t); err != nil || t.Execution == "" {
		g.cfg.Logger.Warn("a timer that does not read is dropped", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	if wait := t.Until.Sub(g.now()); wait > 0 {
		// Clocks of nodes differ a little: a timer never ends a sleep early.
		_ = m.NakWithDelay(wait)
		return
	}
	meta := events.Meta{Account: t.Account, Actor: "system", CorrelationID: t.Execution}
	if err := g.complete(ctx, t.Execution, eventstore.Fresh, meta, t.Key, workflow.Result{}); err != nil {
		if ctx.Err() == nil {
			g.cfg.Logger.Warn("a timer could not be recorded; it will be tried again", "execution", t.Execution, "key", t.Key, "err", err)
		}
		_ = m.NakWithDelay(time.Second)
		return
	}
	_ = m.Ack()
}

// sweepLate is how late a timer must be before the sweeper wakes its sleep itself.
const sweepLate = 5 * time.Second

// sweep wakes the sleeps that are due and were not woken by their timer.
func (g *Engine) sweep(ctx context.Context, due DueTimers) {
	if due == nil {
		return
	}
	list, err := due.DueTimers(ctx, g.now().Add(-sweepLate))
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			g.cfg.Logger.Warn("sweep the task timers", "err", err)
		}
		return
	}
	for _, d := range list {
		g.cfg.Logger.Info("waking a sleep whose timer did not fire", "execution", d.Execution, "key", d.Key)
		meta := events.Meta{Account: d.Account, Actor: "system", CorrelationID: d.Execution}
		if err := g.complete(ctx, d.Execution, eventstore.Fresh, meta, d.Key, workflow.Result{}); err != nil && ctx.Err() == nil {
			g.cfg.Logger.Warn("wake a sleep", "execution", d.Execution, "key", d.Key, "err", err)
		}
	}
}
