package eventstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
)

// directBatch is how many messages one direct-get request asks for.
const directBatch = 256

// stored is one message read from the stream.
type stored struct {
	seq  uint64
	data []byte
}

// readDirect reads every message matching filter from sequence `from` with batched direct gets: one request per
// directBatch messages and no consumer to create or clean up, which makes loading an aggregate one round trip.
// It calls fn for each and stops at the end of the stream as it is when each batch is served.
func (s *Store) readDirect(ctx context.Context, filter string, from uint64, fn func(stored) error) error {
	nc := s.js.Conn()
	subject := "$JS.API.DIRECT.GET." + s.names.EventsStream()
	if from == 0 {
		from = 1
	}
	deadline := time.Now().Add(failoverWait)
	for attempt := 0; ; {
		last, remaining, err := s.directBatch(ctx, nc, subject, filter, from, fn)
		if err != nil {
			// A replica that died after it was asked never answers: each batch is bounded, and asked again (another
			// replica answers) until the failover wait is over. What was delivered before the cut stays delivered:
			// the next request starts after it.
			if ctx.Err() == nil && transient(err) && time.Now().Before(deadline) {
				if last > 0 {
					from = last + 1
				}
				if err := pause(ctx, attempt); err != nil {
					return err
				}
				attempt++
				continue
			}
			return fmt.Errorf("direct get %s from %d: %w", filter, from, err)
		}
		if remaining == 0 || last == 0 {
			return nil
		}
		from = last + 1
	}
}

// directBatch asks for one batch and delivers it, within attemptTimeout.
func (s *Store) directBatch(ctx context.Context, nc *nats.Conn, subject, filter string, from uint64, fn func(stored) error) (uint64, uint64, error) {
	inbox, answers, done, err := s.replies.expect(directBatch + 2)
	if err != nil {
		return 0, 0, err
	}
	defer done()
	req, _ := json.Marshal(map[string]any{"seq": from, "next_by_subj": filter, "batch": directBatch})
	if err := nc.PublishRequest(subject, inbox, req); err != nil {
		return 0, 0, err
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	return s.drainBatch(actx, answers, fn)
}

// drainBatch reads one batch's replies up to its end-of-batch marker. It returns the last sequence delivered and
// how many matching messages the server said remain.
func (s *Store) drainBatch(ctx context.Context, answers <-chan *nats.Msg, fn func(stored) error) (uint64, uint64, error) {
	var last uint64
	for {
		var m *nats.Msg
		select {
		case m = <-answers:
		case <-ctx.Done():
			return last, 0, ctx.Err()
		}
		switch status := m.Header.Get("Status"); status {
		case "":
		case "404": // nothing matches
			return last, 0, nil
		case "503": // no replica to answer (a stream between leaders)
			return last, 0, nats.ErrNoResponders
		case "204": // end of batch
			remaining, _ := strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
			return last, remaining, nil
		default:
			return last, 0, fmt.Errorf("direct get answered %s %s", status, m.Header.Get("Description"))
		}
		seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
		if err != nil {
			return last, 0, fmt.Errorf("direct get reply without a sequence: %w", err)
		}
		if err := fn(stored{seq: seq, data: m.Data}); err != nil {
			return last, 0, err
		}
		last = seq
	}
}

// head returns the stream sequence of the last message matching filter, from the stream's index of subjects: a
// batched direct get of the last message of each subject (multi_last), which unlike a read from a sequence on
// (next_by_subj) does not scan the messages appended since. ok is false when the answer does not settle it (more
// subjects than one batch, an error): the caller then reads as it would have.
func (s *Store) head(ctx context.Context, filter string) (seq uint64, ok bool) {
	last, ok := s.last(ctx, filter)
	return last.seq, ok
}

// SettledHead returns the stream sequence of the last event on any of the given subjects (filters), from the
// stream's index of subjects. ok is false when the answer may not be the log's: on a cluster (a replica that answers
// may lag the leader) or when the server did not settle it; the caller then reads the log as it would have.
func (s *Store) SettledHead(ctx context.Context, filters ...string) (seq uint64, ok bool) {
	if s.clustered() {
		return 0, false
	}
	last, ok := s.last(ctx, filters...)
	return last.seq, ok
}

// last is head with the message itself (a zero one when nothing matches), over one or more filters.
func (s *Store) last(ctx context.Context, filters ...string) (stored, bool) {
	if err := checkFilters(filters); err != nil {
		return stored{}, false
	}
	inbox, answers, done, err := s.replies.expect(directBatch + 2)
	if err != nil {
		return stored{}, false
	}
	defer done()
	req, _ := json.Marshal(map[string]any{"multi_last": filters, "batch": directBatch})
	if err := s.js.Conn().PublishRequest("$JS.API.DIRECT.GET."+s.names.EventsStream(), inbox, req); err != nil {
		return stored{}, false
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	var last stored
	_, remaining, err := s.drainBatch(actx, answers, func(m stored) error {
		if m.seq > last.seq {
			last = m
		}
		return nil
	})
	if err != nil || remaining > 0 {
		return stored{}, false
	}
	return last, true
}
