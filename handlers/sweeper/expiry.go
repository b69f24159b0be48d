package sweeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
)

// expiry is what a run's scheduled expiry message carries.
type expiry struct {
	Account   string    `json:"account"`
	ThreadID  string    `json:"thread_id"`
	RunID     string    `json:"run_id"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Scheduler is the handler that sets each run's expiry: on thread.run_created it sets a JetStream message schedule
// on the TIMERS stream that fires at the run's expires_at (RunExpiries consumes it). The schedule's message ID is
// the run's, so a redelivered run_created sets nothing new. A run created already past its expires_at (a log older
// than its schedules) is expired at once.
func (s *Sweeper) Scheduler() runtime.Handler {
	return runtime.Handler{
		Name:        "run-expiry",
		EventTypes:  []string{"thread.run_created"},
		Handle:      s.schedule,
		Concurrency: 8,
	}
}

func (s *Sweeper) schedule(ctx context.Context, e events.Envelope) error {
	rc, ok := e.Event.(events.RunCreated)
	if !ok || rc.ExpiresAt.IsZero() {
		return nil
	}
	x := expiry{Account: e.Account, ThreadID: e.AggregateID, RunID: rc.RunID, ExpiresAt: rc.ExpiresAt}
	if now := s.cfg.Now(); !now.Before(x.ExpiresAt) {
		_, err := s.cfg.Runs.Expire(ctx, x.ref(), now)
		return err
	}
	body, err := json.Marshal(x)
	if err != nil {
		return runtime.Permanent(err)
	}
	// A schedule's time has whole seconds: round up, so that a run is never expired early.
	at := x.ExpiresAt.Truncate(time.Second)
	if at.Before(x.ExpiresAt) {
		at = at.Add(time.Second)
	}
	_, err = s.cfg.JS.Publish(ctx, s.cfg.Names.TimerScheduleSubject(x.RunID, "expire"), body,
		jetstream.WithScheduleAt(at), jetstream.WithScheduleTarget(s.cfg.Names.RunExpirySubject(x.RunID)),
		jetstream.WithMsgID("expire:"+x.RunID))
	if err != nil {
		return fmt.Errorf("run %s: schedule its expiry: %w", x.RunID, err)
	}
	return nil
}

func (x expiry) ref() thread.RunRef {
	return thread.RunRef{Account: x.Account, ThreadID: x.ThreadID, RunID: x.RunID}
}

// RunExpiries consumes the runs' expiry messages as they fire, on every node (one durable consumer: each fires on
// one node), and expires each run still active. It returns when ctx ends; ready is called once the consumer is up.
func (s *Sweeper) RunExpiries(ctx context.Context, ready func()) error {
	stream, err := s.cfg.JS.Stream(ctx, s.cfg.Names.TimersStream())
	if err != nil {
		return fmt.Errorf("open the timers stream: %w", err)
	}
	cons, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
		Durable:       s.cfg.Names.Consumer("timers", "run_expiry"),
		FilterSubject: s.cfg.Names.RunExpiryWildcard(),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       30 * time.Second,
		MaxAckPending: 1024,
	})
	if err != nil {
		return fmt.Errorf("create the run expiry consumer: %w", err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { s.expire(ctx, m) })
	if err != nil {
		return fmt.Errorf("consume run expiries: %w", err)
	}
	defer cc.Stop()
	if ready != nil {
		ready()
	}
	<-ctx.Done()
	return nil
}

// expire expires the run of a fired expiry message, if it is still active.
func (s *Sweeper) expire(ctx context.Context, m jetstream.Msg) {
	var x expiry
	if err := json.Unmarshal(m.Data(), &x); err != nil || x.RunID == "" || x.ThreadID == "" {
		s.cfg.Logger.Warn("run expiry: a message that does not read is dropped", "subject", m.Subject(), "err", err)
		_ = m.Term()
		return
	}
	now := s.cfg.Now()
	if wait := x.ExpiresAt.Sub(now); wait > 0 {
		// Clocks of nodes differ a little: a run is never expired early.
		_ = m.NakWithDelay(wait)
		return
	}
	expired, err := s.cfg.Runs.Expire(ctx, x.ref(), now)
	if err != nil {
		if ctx.Err() == nil && !errors.Is(err, context.Canceled) {
			s.cfg.Logger.Warn("run expiry: could not expire the run; trying again", "run", x.RunID, "err", err)
		}
		_ = m.NakWithDelay(time.Second)
		return
	}
	if expired {
		s.cfg.Logger.Info("run expired", "thread", x.ThreadID, "run", x.RunID)
	}
	_ = m.Ack()
}
