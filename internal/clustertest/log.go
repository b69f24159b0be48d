package clustertest

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
)

// ReadLog reads the events of the log from sequence `from` on (0 = the beginning) that match the filters (subjects;
// none = the whole log), in order, through an ordered consumer: the stream's leader answers it, so what it returns is
// what the log holds, whatever any replica or read model says. Payloads are left undecoded (Envelope.Data). A read
// cut by a server's failure resumes where it stopped, for up to 30 s.
func (c *Cluster) ReadLog(ctx context.Context, from uint64, filters ...string) ([]events.Envelope, error) {
	if len(filters) == 0 {
		filters = []string{c.Names.EventsWildcard()}
	}
	var out []events.Envelope
	// Long enough for a stream to elect a leader and for this connection to move off a server that stopped: a
	// reader that gives up sooner fails the run for the harness's sake, not the platform's.
	deadline := time.Now().Add(30 * time.Second)
	for {
		next, err := c.readLog(ctx, from, filters, &out)
		if err == nil {
			return out, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("read the log from sequence %d: %w", from, err)
		}
		from = next
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readLog appends to out what one ordered consumer delivers, and returns where a retry resumes.
func (c *Cluster) readLog(ctx context.Context, from uint64, filters []string, out *[]events.Envelope) (uint64, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filters, InactiveThreshold: 10 * time.Second}
	if from > 0 {
		cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, from
	}
	cons, err := c.JS.OrderedConsumer(ctx, c.Names.EventsStream(), cfg)
	if err != nil {
		return from, err
	}
	pending := cons.CachedInfo().NumPending
	for pending > 0 {
		batch, err := cons.Fetch(512, jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return from, err
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			md, err := msg.Metadata()
			if err != nil {
				return from, err
			}
			var env events.Envelope
			if err := json.Unmarshal(msg.Data(), &env); err != nil {
				return from, fmt.Errorf("decode the event at sequence %d: %w", md.Sequence.Stream, err)
			}
			env.Sequence = md.Sequence.Stream
			*out = append(*out, env)
			from, pending = env.Sequence+1, md.NumPending
		}
		if err := batch.Error(); err != nil {
			return from, err
		}
		if n == 0 && ctx.Err() != nil {
			return from, ctx.Err()
		}
	}
	return from, nil
}
