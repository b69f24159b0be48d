package clustertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx"
)

// ReadLog reads the events of the log from sequence `from` on (0 = the beginning) that match the filters (subjects;
// none = the whole log), in order, through an ordered reader (natsx.OrderedReader): the stream's leader answers it,
// so what it returns is what the log holds, whatever any replica or read model says. Payloads are left undecoded
// (Envelope.Data). A read cut by a server's failure resumes where it stopped, for up to 30 s; a connection that
// keeps meeting "no responders" (a run once stood 30 s so after a NATS server's restart) is moved to another server.
func (c *Cluster) ReadLog(ctx context.Context, from uint64, filters ...string) ([]events.Envelope, error) {
	if len(filters) == 0 {
		filters = []string{c.Names.EventsWildcard()}
	}
	var out []events.Envelope
	// Long enough for a stream to elect a leader and for this connection to move off a server that stopped: a
	// reader that gives up sooner fails the run for the harness's sake, not the platform's.
	deadline := time.Now().Add(30 * time.Second)
	noResponders := 0
	for {
		next, err := c.readLog(ctx, from, filters, &out)
		if err == nil {
			return out, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return nil, fmt.Errorf("read the log from sequence %d: %w", from, err)
		}
		if errors.Is(err, nats.ErrNoResponders) {
			if noResponders++; noResponders%3 == 0 {
				_ = c.NC.ForceReconnect()
			}
		} else {
			noResponders = 0
		}
		from = next
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// readLog appends to out what one ordered reader delivers, and returns where a retry resumes.
func (c *Cluster) readLog(ctx context.Context, from uint64, filters []string, out *[]events.Envelope) (uint64, error) {
	octx, cancel := context.WithTimeout(ctx, 5*time.Second)
	r, err := natsx.OpenOrdered(octx, c.JS, natsx.OrderedConfig{Stream: c.Names.EventsStream(), Filters: filters,
		After: max(from, 1) - 1, InactiveThreshold: 10 * time.Second, MaxMessages: 512})
	cancel()
	if err != nil {
		return from, err
	}
	defer r.Delete()
	defer context.AfterFunc(ctx, r.Stop)()
	pending := r.Consumer().CachedInfo().NumPending
	for pending > 0 {
		msg, err := r.Next()
		if err != nil {
			return from, err
		}
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
	return from, nil
}
