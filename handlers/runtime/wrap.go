package runtime

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
)

// wrap adapts a Handler to watermill: it decodes the envelope, guards against crash loops, keeps the delivery alive
// while the handler works, and counts attempts.
func (rt *Runtime) wrap(h Handler) message.NoPublishHandlerFunc {
	return func(wm *message.Message) error {
		delivery := wm.Metadata.Get(mdDelivery)
		if n, _ := strconv.Atoi(wm.Metadata.Get("deliveries")); n > rt.cfg.MaxDeliveries {
			return Permanent(fmt.Errorf("delivered %d times without an answer (does handling it crash the node?)", n))
		}
		d, _ := rt.inflight.Load(delivery)
		taken, ok := d.(delivered)
		if !ok {
			return fmt.Errorf("delivery %s was not taken by this runtime", delivery) // cannot happen: Unmarshal stores it
		}
		env, err := taken.env, taken.err
		if err != nil {
			return Permanent(fmt.Errorf("decode event: %w", err))
		}
		if env.Event == nil {
			return nil // a type this build does not know: nothing to react to
		}
		// The handler's context is cancelled when a stop begins (graceCtx), not when watermill's router closes: the
		// runtime answers the delivery itself then.
		ctx, cancel := context.WithCancel(context.WithoutCancel(wm.Context()))
		defer cancel()
		stopGrace := context.AfterFunc(rt.graceCtx, cancel)
		defer stopGrace()
		stopBeat := rt.heartbeat(delivery, h.AckWait)
		defer stopBeat()

		rt.cfg.Metrics.HandlerAttempts.WithLabelValues(h.Name).Inc()
		start := time.Now()
		err = h.Handle(ctx, env)
		rt.cfg.Metrics.HandlerSeconds.WithLabelValues(h.Name).Observe(time.Since(start).Seconds())
		if err != nil {
			rt.cfg.Metrics.HandlerFailures.WithLabelValues(h.Name).Inc()
			rt.cfg.Logger.Warn("handler failed", "handler", h.Name, "event", env.Type, "id", env.ID,
				"seq", env.Sequence, "correlation_id", env.CorrelationID, "err", err)
		}
		if rt.isStopping() {
			// Watermill stops waiting for an answer once stopping (and drains its connection); answer the server
			// ourselves so the event is not handled again (on success) or goes to another node within a second (on
			// failure: not at once, or the server hands it straight back to a worker of this node that is still
			// stopping, whose handler fails again at once, until the event looks poisonous).
			if err == nil {
				rt.answer(delivery, ackAck)
			} else {
				rt.answer(delivery, ackNakLater)
			}
		}
		return err
	}
}

// The JetStream acknowledgement protocol: a reply to the delivery's subject.
var (
	ackAck      = []byte("+ACK")
	ackNakLater = []byte(`-NAK {"delay": 1000000000}`) // redeliver after a second
	ackProgress = []byte("+WPI")
)

// answer acknowledges a delivery over the node's main connection, which stays open while watermill's closes.
func (rt *Runtime) answer(delivery string, kind []byte) {
	nc := rt.cfg.JS.Conn()
	if string(kind) == string(ackAck) {
		// A confirmed ack: the event must not come back after the restart.
		_, _ = nc.Request(delivery, kind, 2*time.Second)
		return
	}
	_ = nc.Publish(delivery, kind)
	_ = nc.FlushTimeout(2 * time.Second)
}

// heartbeat tells the server the delivery is still being worked on, so that long handlers are not redelivered.
func (rt *Runtime) heartbeat(delivery string, ackWait time.Duration) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(ackWait / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				rt.answer(delivery, ackProgress)
			}
		}
	}()
	return func() { close(done) }
}

// forget drops a delivery from the in-flight table once watermill has answered it.
func (rt *Runtime) forget(h message.HandlerFunc) message.HandlerFunc {
	return func(wm *message.Message) ([]*message.Message, error) {
		defer rt.inflight.Delete(wm.Metadata.Get(mdDelivery))
		return h(wm)
	}
}

// nakInflight hands back to the server every delivery that was taken but not answered when the runtime stopped.
func (rt *Runtime) nakInflight() {
	rt.inflight.Range(func(k, _ any) bool {
		rt.answer(k.(string), ackNakLater)
		rt.inflight.Delete(k)
		return true
	})
}
