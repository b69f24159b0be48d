// Package deadletter reads and re-drives the dead-letter queue: the events a handler gave up on, stored by the
// handlers' runtime with why. The admin API and the CLI list and re-drive them through it, so that neither imports
// the handlers.
package deadletter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Headers of dead-letter and re-drive messages.
const (
	HeaderHandler    = "Contrail-Handler"
	HeaderSeq        = "Contrail-Seq"
	HeaderReason     = "Contrail-Reason"
	HeaderDeliveries = "Contrail-Deliveries"
	HeaderPoisonedAt = "Contrail-Poisoned-At"
)

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

// List returns what is in the dead-letter queue, oldest first.
func List(ctx context.Context, js jetstream.JetStream, store *eventstore.Store, names natsx.Names) ([]DeadLetter, error) {
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
		out = append(out, fromMsg(store, md.Sequence.Stream, m.Headers(), m.Data()))
		if md.NumPending == 0 {
			return out, nil
		}
	}
}

func fromMsg(store *eventstore.Store, seq uint64, h nats.Header, data []byte) DeadLetter {
	d := DeadLetter{Seq: seq, Handler: h.Get(HeaderHandler), Reason: h.Get(HeaderReason)}
	d.EventSeq, _ = strconv.ParseUint(h.Get(HeaderSeq), 10, 64)
	d.Deliveries, _ = strconv.Atoi(h.Get(HeaderDeliveries))
	d.PoisonedAt, _ = time.Parse(time.RFC3339Nano, h.Get(HeaderPoisonedAt))
	if env, err := store.DecodeEnvelope(data); err == nil {
		d.EventID, d.EventType, d.Aggregate = env.ID, env.Type, env.Aggregate+"/"+env.AggregateID
	}
	return d
}

// ErrNotFound is returned when a dead-letter entry does not exist (already re-driven?).
var ErrNotFound = errors.New("no such dead-letter entry")

// Redrive hands a dead-lettered event back to its handler (through its re-drive consumer, with the same retries and
// poison queue) and removes it from the dead-letter queue.
func Redrive(ctx context.Context, js jetstream.JetStream, names natsx.Names, seq uint64) (DeadLetter, error) {
	if seq == 0 {
		return DeadLetter{}, fmt.Errorf("%w: %d (sequences start at 1)", ErrNotFound, seq)
	}
	stream, err := js.Stream(ctx, names.DLQStream())
	if err != nil {
		return DeadLetter{}, fmt.Errorf("open dead-letter queue: %w", err)
	}
	m, err := stream.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, fmt.Errorf("%w: %d", ErrNotFound, seq)
	}
	if err != nil {
		return DeadLetter{}, fmt.Errorf("read dead-letter entry %d: %w", seq, err)
	}
	handler := m.Header.Get(HeaderHandler)
	out := &nats.Msg{Subject: names.RedriveSubject(handler), Data: m.Data, Header: nats.Header{}}
	out.Header.Set(HeaderSeq, m.Header.Get(HeaderSeq))
	// The same entry re-driven twice (a retried request) is handed over once.
	if _, err := js.PublishMsg(ctx, out, jetstream.WithMsgID(fmt.Sprintf("redrive-%d", seq))); err != nil {
		return DeadLetter{}, fmt.Errorf("re-drive entry %d to %s: %w", seq, handler, err)
	}
	if err := stream.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return DeadLetter{}, fmt.Errorf("remove re-driven entry %d: %w", seq, err)
	}
	d := DeadLetter{Seq: seq, Handler: handler, Reason: m.Header.Get(HeaderReason)}
	d.EventSeq, _ = strconv.ParseUint(m.Header.Get(HeaderSeq), 10, 64)
	return d, nil
}
