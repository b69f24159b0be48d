package runtime

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/internal/deadletter"
)

// dlqPublisher is the poison queue's publisher: it stores a poisoned event on its handler's dead-letter subject with
// why it was given up. (watermill-nats' publisher derives subjects from stream names, which does not fit dotted
// subjects; this one is a few lines on nats.go.)
type dlqPublisher struct{ rt *Runtime }

func (p dlqPublisher) Publish(_ string, msgs ...*message.Message) error {
	for _, m := range msgs {
		handler := m.Metadata.Get(mdHandler)
		if handler == "" {
			handler, _, _ = strings.Cut(m.Metadata.Get(middleware.PoisonedHandlerKey), "#")
		}
		out := &nats.Msg{Subject: p.rt.cfg.Names.DLQSubject(handler), Data: m.Payload, Header: nats.Header{}}
		out.Header.Set(deadletter.HeaderHandler, handler)
		out.Header.Set(deadletter.HeaderSeq, m.Metadata.Get(mdSeq))
		out.Header.Set(deadletter.HeaderReason, truncate(m.Metadata.Get(middleware.ReasonForPoisonedKey), 2000))
		out.Header.Set(deadletter.HeaderDeliveries, m.Metadata.Get("deliveries"))
		out.Header.Set(deadletter.HeaderPoisonedAt, time.Now().UTC().Format(time.RFC3339Nano))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := p.rt.cfg.JS.PublishMsg(ctx, out)
		cancel()
		if err != nil {
			return fmt.Errorf("store poisoned event for %s: %w", handler, err)
		}
		p.rt.cfg.Metrics.HandlerPoisoned.WithLabelValues(handler).Inc()
		p.rt.cfg.Logger.Error("handler gave up on an event; it is in the dead-letter queue", "handler", handler,
			"seq", m.Metadata.Get(mdSeq), "reason", m.Metadata.Get(middleware.ReasonForPoisonedKey))
	}
	return nil
}

func (dlqPublisher) Close() error { return nil }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
