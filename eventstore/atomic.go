package eventstore

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The headers of JetStream's atomic batch publish (nats-server 2.12+, ADR-50), which nats.go has no API for: the
// messages of one batch carry its ID and their place in it, and the last one commits. The server stores all of
// them or none, one after the other.
const (
	batchIDHeader     = "Nats-Batch-Id"
	batchSeqHeader    = "Nats-Batch-Sequence"
	batchCommitHeader = "Nats-Batch-Commit"
)

// The server's answers about a batch that the store tells apart (nats-server's errors.json).
const (
	errCodeBatchIncomplete  = 10176 // a message of the batch went missing: the batch was dropped
	errCodeBatchDuplicate   = 10201 // a message of the batch is already stored (by its Nats-Msg-Id)
	errCodeBatchTooMany     = 10210 // too many batches in flight on the stream
	errCodeAtomicDisallowed = 10174 // the stream does not take atomic batches
	// errCodeMsgIDInProcess is a clustered leader's answer to a publish whose Nats-Msg-Id it has proposed but not
	// yet applied: this append's own earlier attempt (one that timed out through an election), still on its way.
	// Asked again a moment later, the server answers it as a duplicate with the stored sequence, or the attempt
	// was lost and this one is stored.
	errCodeMsgIDInProcess = 10158
)

// maxAtomicBatch is the most events appended as one batch: nats-server takes up to 1,000 by default. A longer
// append (none of today's decisions) is published one event after another.
const maxAtomicBatch = 1000

// publishAtomic stores envs as one atomic batch, expecting the aggregate's subjects to end at lastSeq, and returns
// the stream sequence of the last; the others precede it one by one. Either every event of the decision is in the
// log or none is, whatever happens to this node or the server between them.
func (s *Store) publishAtomic(ctx context.Context, envs []events.Envelope, lastSeq uint64, filter string) (uint64, error) {
	msgs := make([]*nats.Msg, len(envs))
	largest := 0
	for i := range envs {
		msg, err := s.message(&envs[i])
		if err != nil {
			return 0, err
		}
		largest = max(largest, len(msg.Data))
		msg.Header.Set(jetstream.MsgIDHeader, envs[i].ID)
		msgs[i] = msg
	}
	// The server checks expectations on the first message only, against the log before the batch.
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(lastSeq, 10))
	msgs[0].Header.Set(jetstream.ExpectedLastSubjSeqSubjHeader, filter)
	return s.retrying(ctx, &envs[0], largest, msgs[0].Subject, func(ctx context.Context) (uint64, error) {
		seq, err := s.sendBatch(ctx, msgs)
		if apiCode(err) == errCodeAtomicDisallowed {
			return 0, fmt.Errorf("the event stream does not take atomic batches (allow_atomic, nats-server 2.12 or later); "+
				"a node sets it when it starts: restart one: %w", err)
		}
		return seq, err
	})
}

// sendBatch sends the messages as one batch under a new batch ID and waits for the commit's answer. A retry is a
// new batch, of new messages: what the server held of an earlier attempt is dropped when its leader changes or its
// time runs out, and nats.go may still hold the earlier attempt's messages.
func (s *Store) sendBatch(ctx context.Context, templates []*nats.Msg) (uint64, error) {
	id := events.NewID()
	msgs := make([]*nats.Msg, len(templates))
	for i, t := range templates {
		h := maps.Clone(t.Header)
		h.Set(batchIDHeader, id)
		h.Set(batchSeqHeader, strconv.Itoa(i+1))
		msgs[i] = &nats.Msg{Subject: t.Subject, Data: t.Data, Header: h}
	}
	last := len(msgs) - 1
	msgs[last].Header.Set(batchCommitHeader, "1")
	s.batchMu.Lock()
	for _, m := range msgs[:last] {
		// No reply: the server answers a batch once, at its commit, for all of its messages.
		if err := s.js.Conn().PublishMsg(m); err != nil {
			s.batchMu.Unlock()
			return 0, err
		}
	}
	// No resend by nats.go when no server answers: a commit sent alone is an incomplete batch. retrying sends the
	// whole batch again.
	f, err := s.js.PublishMsgAsync(msgs[last], jetstream.WithStallWait(attemptTimeout), jetstream.WithRetryAttempts(0))
	s.batchMu.Unlock()
	if err != nil {
		return 0, err
	}
	select {
	case ack := <-f.Ok():
		return ack.Sequence, nil
	case err := <-f.Err():
		return 0, err
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// retrying runs one attempt at storing env after another while the stream elects a leader, until failoverWait
// passes. Sending again is safe: the same Nats-Msg-Id and expected sequence mean that, if an earlier attempt did go
// in, the retry meets a conflict and reconcile finds the events already in the history.
func (s *Store) retrying(ctx context.Context, env *events.Envelope, size int, subject string, attempt func(context.Context) (uint64, error)) (uint64, error) {
	deadline := time.Now().Add(failoverWait)
	for n := 0; ; n++ {
		actx, cancel := context.WithTimeout(ctx, attemptTimeout)
		seq, err := attempt(actx)
		cancel()
		switch {
		case err == nil:
			return seq, nil
		case isWrongLastSequence(err), apiCode(err) == errCodeBatchDuplicate:
			return 0, ErrConflict
		case errors.Is(err, nats.ErrMaxPayload):
			return 0, tooLarge(env, size, s.js.Conn().MaxPayload())
		}
		again := transient(err) || apiCode(err) == errCodeBatchIncomplete || apiCode(err) == errCodeBatchTooMany ||
			apiCode(err) == errCodeMsgIDInProcess
		if !again || ctx.Err() != nil || time.Now().After(deadline) {
			return 0, err
		}
		if s.metrics != nil {
			s.metrics.AppendRetries.WithLabelValues(env.Aggregate).Inc()
		}
		s.logger.Debug("append retried", "subject", subject, "attempt", n+1, "err", err)
		if err := pause(ctx, n); err != nil {
			return 0, err
		}
	}
}

// apiCode is the JetStream error code of err, or 0.
func apiCode(err error) jetstream.ErrorCode {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode
	}
	return 0
}
