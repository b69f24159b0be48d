package eventstore

import (
	"context"
	"fmt"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/nats-io/nats.go/jetstream"
)

// Batch is one aggregate's share of a batched append: one event at the end of its history.
type Batch struct {
	Ref      events.Ref
	Expected events.Version
	Meta     events.Meta
	Event    events.Event
}

// AppendBatch appends one event to each of many aggregates at once: the publishes are pipelined (async) and then
// awaited, which is how imports, fan-outs and the benchmarks move many events quickly. Each event keeps its own
// optimistic-concurrency check; results[i] and errs[i] answer batch[i].
func (s *Store) AppendBatch(ctx context.Context, batch []Batch) ([]Appended, []error) {
	results := make([]Appended, len(batch))
	errs := make([]error, len(batch))
	futures := make([]jetstream.PubAckFuture, len(batch))
	envs := make([][]events.Envelope, len(batch))
	start := time.Now()
	for i, b := range batch {
		es, err := s.envelopes(b.Ref, b.Expected, b.Meta, []events.Event{b.Event})
		if err != nil {
			errs[i] = err
			continue
		}
		msg, err := s.message(&es[0])
		if err != nil {
			errs[i] = err
			continue
		}
		f, err := s.js.PublishMsgAsync(msg, jetstream.WithMsgID(es[0].ID),
			jetstream.WithExpectLastSequenceForSubject(b.Expected.Seq, s.names.AggregateFilter(b.Ref.Type, b.Ref.ID)))
		if err != nil {
			errs[i] = fmt.Errorf("append %s to %s: %w", es[0].Type, b.Ref, err)
			continue
		}
		futures[i], envs[i] = f, es
	}
	appended := 0
	for i, f := range futures {
		if f == nil {
			continue
		}
		select {
		case ack := <-f.Ok():
			envs[i][0].Sequence = ack.Sequence
			results[i] = Appended{Events: envs[i], Version: events.Version{Count: envs[i][0].Version, Seq: ack.Sequence}}
			appended++
		case err := <-f.Err():
			if isWrongLastSequence(err) {
				results[i], errs[i] = s.reconcile(ctx, batch[i].Ref, batch[i].Expected, nil, envs[i])
				if errs[i] == nil {
					appended++
				}
				continue
			}
			errs[i] = fmt.Errorf("append %s to %s: %w", envs[i][0].Type, batch[i].Ref, err)
		case <-ctx.Done():
			errs[i] = ctx.Err()
		}
	}
	if s.metrics != nil && appended > 0 {
		s.metrics.Appends.WithLabelValues("batch").Add(float64(appended))
		s.metrics.AppendSeconds.Observe(time.Since(start).Seconds())
	}
	return results, errs
}

func isWrongLastSequence(err error) bool {
	code := apiCode(err)
	return code == jetstream.JSErrCodeStreamWrongLastSequence || code == jetstream.JSErrCodeStreamWrongLastSequenceConstant
}
