package eventstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx"
)

// On a cluster, the direct gets that Load uses are answered by whichever replica of the stream is nearest, and a
// follower may not yet hold the newest events: it answers with an older, consistent prefix of the history. That is
// fine for a decision that ends in an append (the expected sequence catches it), and wrong for two things: a
// handler that reacts to an event must see that event in what it loads, and a retry after a conflict must see what
// the conflicting writer appended. LoadAt and LoadLatest cover those two; both ask the stream's leader (which
// holds every acknowledged event) only when the direct answer is not enough.

// LoadAt replays one aggregate's history up to at least stream sequence atLeast: an event the caller knows is part
// of the aggregate (the event a handler reacts to, an append the caller made). A replica that has not applied it
// yet is passed over for the stream's leader. Events after atLeast are included as far as the replica has them.
func (s *Store) LoadAt(ctx context.Context, ref events.Ref, atLeast uint64) ([]events.Envelope, events.Version, error) {
	history, v, err := s.Load(ctx, ref)
	if err != nil || v.Seq >= atLeast {
		return history, v, err
	}
	// Behind: a moment usually suffices for a follower; then the leader settles it.
	select {
	case <-ctx.Done():
		return nil, events.Version{}, ctx.Err()
	case <-time.After(2 * time.Millisecond):
	}
	if history, v, err = s.Load(ctx, ref); err != nil || v.Seq >= atLeast {
		return history, v, err
	}
	if s.metrics != nil {
		s.metrics.StaleReads.WithLabelValues(ref.Type).Inc()
	}
	return s.completeFromLeader(ctx, ref, history)
}

// LoadLatest replays one aggregate's whole history as the stream's leader holds it: what Load returns, checked
// against the leader for anything after it. It costs one more round trip than Load; use it where a stale history
// would be a wrong answer rather than a conflict to retry.
func (s *Store) LoadLatest(ctx context.Context, ref events.Ref) ([]events.Envelope, events.Version, error) {
	history, _, err := s.Load(ctx, ref)
	if err != nil {
		return nil, events.Version{}, err
	}
	return s.completeFromLeader(ctx, ref, history)
}

// completeFromLeader appends to history what the stream's leader holds after it.
func (s *Store) completeFromLeader(ctx context.Context, ref events.Ref, history []events.Envelope) ([]events.Envelope, events.Version, error) {
	var from uint64 = 1
	if n := len(history); n > 0 {
		from = history[n-1].Sequence + 1
	}
	err := s.readLeader(ctx, s.names.AggregateFilter(ref.Type, ref.ID), from, func(e events.Envelope) error {
		history = append(history, e)
		return nil
	})
	if err != nil {
		return nil, events.Version{}, fmt.Errorf("load %s from the stream leader: %w", ref, err)
	}
	if s.cache != nil {
		s.cache.put(ref, history)
	}
	var v events.Version
	if n := len(history); n > 0 {
		v = events.Version{Count: uint64(n), Seq: history[n-1].Sequence}
	}
	return history, v, nil
}

// leaderGetReply is the stream leader's answer to a message get ($JS.API.STREAM.MSG.GET), which unlike a direct get
// only the leader serves.
type leaderGetReply struct {
	Error *struct {
		Code        int    `json:"code"`
		ErrCode     int    `json:"err_code"`
		Description string `json:"description"`
	} `json:"error,omitempty"`
	Message *struct {
		Sequence uint64 `json:"seq"`
		Data     []byte `json:"data"`
	} `json:"message,omitempty"`
}

// jsNoMessageFound is the API error code of a message get that matched nothing.
const jsNoMessageFound = 10037

// readLeader reads the messages matching filter from sequence `from`, one leader get each, until none is left.
// It serves the rare reads that must not come from a lagging replica; bulk reads stay on direct gets.
func (s *Store) readLeader(ctx context.Context, filter string, from uint64, fn func(events.Envelope) error) error {
	nc := s.js.Conn()
	subject := "$JS.API.STREAM.MSG.GET." + s.names.EventsStream()
	deadline := time.Now().Add(failoverWait)
	for attempt := 0; ; {
		req, _ := json.Marshal(map[string]any{"seq": from, "next_by_subj": filter})
		msg, err := requestRetrying(ctx, nc, subject, req)
		if err != nil {
			return err
		}
		var r leaderGetReply
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return fmt.Errorf("decode message get reply: %w", err)
		}
		if r.Error != nil {
			if r.Error.ErrCode == jsNoMessageFound || r.Error.Code == 404 {
				return nil
			}
			// "JetStream system temporarily unavailable" while a server restarts: answered, but not yet served.
			if r.Error.Code == 503 && time.Now().Before(deadline) {
				if err := pause(ctx, attempt); err != nil {
					return err
				}
				attempt++
				continue
			}
			return fmt.Errorf("message get: %s (%d)", r.Error.Description, r.Error.ErrCode)
		}
		if r.Message == nil {
			return nil
		}
		env, err := s.DecodeEnvelope(r.Message.Data)
		if err != nil {
			return fmt.Errorf("decode event at sequence %d: %w", r.Message.Sequence, err)
		}
		env.Sequence = r.Message.Sequence
		if err := fn(env); err != nil {
			return err
		}
		from = r.Message.Sequence + 1
	}
}

// requestRetrying sends a JetStream API request, retrying while the stream has no leader to answer it (an election
// after a server died), until ctx ends or failoverWait passes.
func requestRetrying(ctx context.Context, nc *nats.Conn, subject string, req []byte) (*nats.Msg, error) {
	deadline := time.Now().Add(failoverWait)
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		msg, err := nc.RequestWithContext(actx, subject, req)
		cancel()
		if err == nil || !transient(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return msg, err
		}
		if err := pause(ctx, attempt); err != nil {
			return nil, err
		}
	}
}

// failoverWait bounds how long an append or a leader read keeps retrying through a leader election. An election
// after a server dies takes a few seconds; past this, the cluster has a problem an operator must see.
const failoverWait = 20 * time.Second

// attemptTimeout bounds one attempt: an answer from a live leader takes milliseconds, and a request to a leader
// that just died never gets one.
const attemptTimeout = 2 * time.Second

// transient reports whether err is what JetStream answers while a stream elects a leader or a connection moves to
// another server (natsx.Transient).
func transient(err error) bool { return natsx.Transient(err) }

// pause waits before attempt+1: short at first (an election takes a moment), then up to half a second.
func pause(ctx context.Context, attempt int) error {
	d := min(25*time.Millisecond<<min(attempt, 5), 500*time.Millisecond)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
