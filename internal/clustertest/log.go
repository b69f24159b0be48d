package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
)

// ReadLog reads the events of the log that match the filters (subjects; none = the whole log), in order, through
// an ordered consumer: the stream's leader answers it, so what it returns is what the log holds, whatever any
// replica or read model says. Payloads are left undecoded (Envelope.Data).
func (c *Cluster) ReadLog(ctx context.Context, filters ...string) ([]events.Envelope, error) {
	if len(filters) == 0 {
		filters = []string{c.Names.EventsWildcard()}
	}
	cons, err := c.JS.OrderedConsumer(ctx, c.Names.EventsStream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: filters, InactiveThreshold: 10 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("read the log: %w", err)
	}
	pending := cons.CachedInfo().NumPending
	var out []events.Envelope
	for pending > 0 {
		batch, err := cons.Fetch(512, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("read the log: %w", err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				return nil, fmt.Errorf("read the log: %w", err)
			}
			var env events.Envelope
			if err := json.Unmarshal(msg.Data(), &env); err != nil {
				return nil, fmt.Errorf("decode the event at sequence %d: %w", md.Sequence.Stream, err)
			}
			env.Sequence = md.Sequence.Stream
			out = append(out, env)
			pending = md.NumPending
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("read the log after %d events: %w", len(out), err)
		}
		if n == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("read the log after %d events: %w", len(out), ctx.Err())
		}
	}
	return out, nil
}
