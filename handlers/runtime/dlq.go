package runtime

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
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
		out.Header.Set(hdrHandler, handler)
		out.Header.Set(hdrSeq, m.Metadata.Get(mdSeq))
		out.Header.Set(hdrReason, truncate(m.Metadata.Get(middleware.ReasonForPoisonedKey), 2000))
		out.Header.Set(hdrAttempts, m.Metadata.Get("deliveries"))
		out.Header.Set(hdrTime, time.Now().UTC().Format(time.RFC3339Nano))
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

// DeadLetter is an event a handler gave up on.
type DeadLetter struct {
	// Seq identifies the entry in the dead-letter stream (what Redrive takes).
	Seq        uint64    `json:"seq"`
	Handler    string    `json:"handler"`
	EventSeq   uint64    `json:"event_seq"`
	EventID    string    `json:"event_id"`
	EventType  string    `json:"event_type"`
	Aggregate  string    `json:"aggregate"`
	Reason     string    `json:"reason"`
	Deliveries int       `json:"deliveries"`
	PoisonedAt time.Time `json:"poisoned_at"`
}

// ListDeadLetters returns what is in the dead-letter queue, oldest first.
func ListDeadLetters(ctx context.Context, js jetstream.JetStream, store *eventstore.Store, names natsx.Names) ([]DeadLetter, error) {
	cons, err := js.OrderedConsumer(ctx, names.DLQStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("read dead-letter queue: %w", err)
	}
	var out []DeadLetter
	if cons.CachedInfo().NumPending == 0 {
		return out, nil
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("read dead-letter queue: %w", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	for {
		m, err := it.Next()
		if err != nil {
			return out, fmt.Errorf("read dead-letter queue: %w", err)
		}
		md, err := m.Metadata()
		if err != nil {
			return out, err
		}
		out = append(out, deadLetter(store, md.Sequence.Stream, m.Headers(), m.Data()))
		if md.NumPending == 0 {
			return out, nil
		}
	}
}

func deadLetter(store *eventstore.Store, seq uint64, h nats.Header, data []byte) DeadLetter {
	d := DeadLetter{Seq: seq, Handler: h.Get(hdrHandler), Reason: h.Get(hdrReason)}
	d.EventSeq, _ = strconv.ParseUint(h.Get(hdrSeq), 10, 64)
	d.Deliveries, _ = strconv.Atoi(h.Get(hdrAttempts))
	d.PoisonedAt, _ = time.Parse(time.RFC3339Nano, h.Get(hdrTime))
	if env, err := store.DecodeEnvelope(data); err == nil {
		d.EventID, d.EventType, d.Aggregate = env.ID, env.Type, env.Aggregate+"/"+env.AggregateID
	}
	return d
}

// ErrNoDeadLetter is returned when a dead-letter entry does not exist (already re-driven?).
var ErrNoDeadLetter = errors.New("no such dead-letter entry")

// Redrive hands a dead-lettered event back to its handler (through its re-drive consumer, with the same retries and
// poison queue) and removes it from the dead-letter queue.
func Redrive(ctx context.Context, js jetstream.JetStream, names natsx.Names, seq uint64) (DeadLetter, error) {
	if seq == 0 {
		return DeadLetter{}, fmt.Errorf("%w: %d (sequences start at 1)", ErrNoDeadLetter, seq)
	}
	stream, err := js.Stream(ctx, names.DLQStream())
	if err != nil {
		return DeadLetter{}, fmt.Errorf("open dead-letter queue: %w", err)
	}
	m, err := stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, fmt.Errorf("%w: %d", ErrNoDeadLetter, seq)
	}
	if err != nil {
		return DeadLetter{}, fmt.Errorf("read dead-letter entry %d: %w", seq, err)
	}
	handler := m.Header.Get(hdrHandler)
	out := &nats.Msg{Subject: names.RedriveSubject(handler), Data: m.Data, Header: nats.Header{}}
	out.Header.Set(hdrSeq, m.Header.Get(hdrSeq))
	// The same entry re-driven twice (a retried request) is handed over once.
	if _, err := js.PublishMsg(ctx, out, jetstream.WithMsgID(fmt.Sprintf("redrive-%d", seq))); err != nil {
		return DeadLetter{}, fmt.Errorf("re-drive entry %d to %s: %w", seq, handler, err)
	}
	if err := stream.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, fmt.Errorf("remove re-driven entry %d: %w", seq, err)
	}
	d := DeadLetter{Seq: seq, Handler: handler, Reason: m.Header.Get(hdrReason)}
	d.EventSeq, _ = strconv.ParseUint(m.Header.Get(hdrSeq), 10, 64)
	return d, nil
}
