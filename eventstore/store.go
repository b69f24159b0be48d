package eventstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/metrics"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Store appends to and reads from the log.
type Store struct {
	js      jetstream.JetStream
	names   natsx.Names
	reg     *events.Registry
	now     func() time.Time
	metrics *metrics.Metrics
	logger  *slog.Logger
	cache   *historyCache // nil: every load reads the whole history
	tip     *natsx.Tip    // the log's last sequence, shared by the followers' watchdogs
	replies *replies      // answers to batched direct gets
	// republish says whether the log republishes committed events for watches (republishUnknown until asked).
	republish atomic.Int32
	watches   watches
	// atomicBatches says whether an append of several events is sent as one atomic batch (all or none).
	atomicBatches bool
	// batchMu keeps each batch's messages together on the connection, with no other batch's in between: the
	// server holds a batch from its first message to its commit, and only so many at once per stream (50 by
	// default), so a node's batches must not all be half sent at the same moment.
	batchMu sync.Mutex
}

// Option configures a Store.
type Option func(*Store)

// WithClock sets the clock that stamps events (tests inject one).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithMetrics counts appends and conflicts.
func WithMetrics(m *metrics.Metrics) Option { return func(s *Store) { s.metrics = m } }

// WithAtomicBatches appends the events of one decision as one atomic batch; the stream must allow it. The platform
// sets it on a replicated log only: the server stages a batch of a single-replica file stream in a file store of its
// own, synced to disk at the commit, which made `contrail bench runs` three times slower on one node.
func WithAtomicBatches() Option { return func(s *Store) { s.atomicBatches = true } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.logger = l } }

// NewStore returns a store over the deployment's EVENTS stream.
func NewStore(js jetstream.JetStream, names natsx.Names, reg *events.Registry, opts ...Option) *Store {
	s := &Store{js: js, names: names, reg: reg, now: time.Now, logger: slog.New(slog.DiscardHandler), replies: newReplies(js.Conn()),
		tip: natsx.NewTip(js, names.EventsStream(), stallAfter/2)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Names returns the subject scheme the store writes.
func (s *Store) Names() natsx.Names { return s.names }

// Registry returns the event types the store decodes.
func (s *Store) Registry() *events.Registry { return s.reg }

// clustered reports whether the log is replicated over several servers (whose replicas may lag the leader).
func (s *Store) clustered() bool { return s.js.Conn().ConnectedClusterName() != "" }

// Now is the store's clock.
func (s *Store) Now() time.Time { return s.now() }

// Appended is the result of an append: the stored envelopes (with their sequences) and the aggregate's new head.
type Appended struct {
	Events  []events.Envelope
	Version events.Version
}

// LastSeq is the stream sequence of the last appended event, what a reader waits for to see its own write.
func (a Appended) LastSeq() uint64 { return a.Version.Seq }

// FirstSeq is the stream sequence of the first appended event (0 when nothing was appended), where a reader that
// follows what the append started begins.
func (a Appended) FirstSeq() uint64 {
	if len(a.Events) == 0 {
		return 0
	}
	return a.Events[0].Sequence
}

// Append stores events at the end of one aggregate's history, provided the history still ends at `expected`.
// Each event is published with its ID as Nats-Msg-Id and the expected last sequence of the aggregate's subjects,
// so a concurrent writer makes it fail with a ConflictError rather than interleave. Appending events that are already
// in the history (same IDs, a retry or a redelivery) succeeds and appends nothing.
func (s *Store) Append(ctx context.Context, ref events.Ref, expected events.Version, meta events.Meta, evs ...events.Event) (Appended, error) {
	start := time.Now()
	envs, err := s.envelopes(ref, expected, meta, evs)
	if err != nil {
		return Appended{}, err
	}
	n, err := s.publishAfter(ctx, ref, expected, envs)
	if errors.Is(err, ErrConflict) {
		return s.reconcile(ctx, ref, expected, envs[:n], envs[n:])
	}
	if err != nil {
		return Appended{}, fmt.Errorf("append %s to %s: %w", envs[n].Type, ref, err)
	}
	head := lastVersion(expected, envs)
	if s.metrics != nil {
		s.metrics.Appends.WithLabelValues(ref.Type).Add(float64(len(envs)))
		s.metrics.AppendSeconds.Observe(time.Since(start).Seconds())
	}
	if s.cache != nil {
		s.cacheAppended(ref, expected, envs)
	}
	return Appended{Events: envs, Version: head}, nil
}

// cacheAppended adds what an append stored to the aggregate's cached history when that history ends where the
// append began, so that the next load finds the appender's own writes without reading them back: reading an
// aggregate's subjects from a sequence makes the server walk every message stored since, by every aggregate.
// The envelopes are cached as a reader would have decoded them, not as the caller built them (an empty map and
// an absent one decode alike).
func (s *Store) cacheAppended(ref events.Ref, from events.Version, envs []events.Envelope) {
	if !s.cache.extends(ref, from) {
		return // not worth decoding for: the cache holds another part of the history, or none of it
	}
	stored := make([]events.Envelope, 0, len(envs))
	for i := range envs {
		body, err := events.EncodeEnvelope(&envs[i])
		if err != nil {
			return
		}
		env, err := events.DecodeEnvelope(s.reg, body)
		if err != nil {
			return
		}
		env.Sequence = envs[i].Sequence
		stored = append(stored, env)
	}
	s.cache.extend(ref, from, stored)
}

func (s *Store) envelopes(ref events.Ref, expected events.Version, meta events.Meta, evs []events.Event) ([]events.Envelope, error) {
	if err := checkRef(ref); err != nil {
		return nil, err
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("append to %s: no events", ref)
	}
	now := s.now().UTC()
	envs := make([]events.Envelope, len(evs))
	for i, e := range evs {
		id, e := events.Unwrap(e)
		if id == "" {
			id = events.NewID()
		}
		typ := e.EventType()
		agg, name := events.SplitType(typ)
		if agg != ref.Type || !natsx.ValidToken(name) {
			return nil, fmt.Errorf("append %s to %s: event belongs to aggregate %q", typ, ref, agg)
		}
		data, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", typ, err)
		}
		envs[i] = events.Envelope{
			ID: id, Type: typ, Aggregate: ref.Type, AggregateID: ref.ID,
			Version: expected.Count + uint64(i) + 1, Time: now,
			Account: meta.Account, Actor: meta.Actor, CorrelationID: meta.CorrelationID, CausationID: meta.CausationID,
			Data: data, Event: e,
		}
	}
	return envs, nil
}

// publish stores one envelope, expecting the aggregate's subjects to end at lastSeq.
func (s *Store) publish(ctx context.Context, env *events.Envelope, lastSeq uint64, filter string) (uint64, error) {
	msg, err := s.message(env)
	if err != nil {
		return 0, err
	}
	return s.retrying(ctx, env, len(msg.Data), msg.Subject, func(ctx context.Context) (uint64, error) {
		ack, err := s.js.PublishMsg(ctx, msg, jetstream.WithMsgID(env.ID), jetstream.WithExpectLastSequenceForSubject(lastSeq, filter))
		if err != nil {
			return 0, err
		}
		return ack.Sequence, nil
	})
}

// message is env as the log stores it, on its subject, refused before it is sent if the server would refuse it for
// its size. Its headers are empty: each way of publishing sets its own.
func (s *Store) message(env *events.Envelope) (*nats.Msg, error) {
	body, err := events.EncodeEnvelope(env)
	if err != nil {
		return nil, err
	}
	if err := s.checkSize(env, len(body)); err != nil {
		return nil, err
	}
	return &nats.Msg{Subject: s.names.EventSubject(env.Aggregate, env.AggregateID, eventName(env.Type)), Data: body,
		Header: nats.Header{}}, nil
}

// headerRoom is what an event's headers (Nats-Msg-Id, the expected sequence and its subject) may take of the
// server's max payload, which counts headers and body together.
const headerRoom = 1 << 10

// checkSize refuses an event that the server would refuse for its size, before it is sent.
func (s *Store) checkSize(env *events.Envelope, n int) error {
	if max := s.js.Conn().MaxPayload(); max > 0 && int64(n)+headerRoom > max {
		return tooLarge(env, n, max)
	}
	return nil
}

// tooLarge says that an event is bigger than the log takes: every field has its own limit, but some events carry
// several fields at their limits (a run copies its assistant's instructions and tools) and the sum may not fit.
func tooLarge(env *events.Envelope, n int, max int64) error {
	return &errs.Error{Code: errs.TooLarge, Message: fmt.Sprintf("the %s event this request makes is %d bytes; "+
		"the log takes events of up to %d bytes: send less (shorter texts, fewer tools or messages)",
		env.Type, n, max-headerRoom)}
}

func eventName(eventType string) string {
	_, name := events.SplitType(eventType)
	return name
}

// reconcile runs after a conflict: if every event not yet confirmed is already in the history (a retry of an append
// that had succeeded), the append succeeded. If the history ends where this append's own events end, the rest are
// published again after them: nobody else wrote, so the refusal was not another writer's. That is a retried
// publish whose first attempt went in before the append's later events were sent, or a clustered server that
// refused an expectation because the aggregate's previous write, whose answer the writer already had, was not yet
// applied everywhere on the leader (nats-server answers "wrong last sequence" without a number then). A decision is
// thus stored whole, never half, when nobody else wrote in between. Otherwise it is a real conflict.
func (s *Store) reconcile(ctx context.Context, ref events.Ref, expected events.Version, done, pending []events.Envelope) (Appended, error) {
	for round := range maxReconciles {
		// From the leader: a lagging replica may not hold the events a retried publish did store.
		history, head, err := s.LoadLatest(ctx, ref)
		if err != nil {
			return Appended{}, fmt.Errorf("append to %s: check for a repeated append after a conflict: %w", ref, err)
		}
		byID := make(map[string]events.Envelope, len(history))
		for _, e := range history {
			byID[e.ID] = e
		}
		out := append([]events.Envelope(nil), done...)
		stored := 0
		for _, p := range pending {
			e, ok := byID[p.ID]
			if !ok {
				break
			}
			out = append(out, e)
			stored++
		}
		if stored == len(pending) {
			return Appended{Events: out, Version: head}, nil
		}
		ours := lastVersion(expected, out)
		if head != ours {
			break // another writer's events: a real conflict
		}
		if round > 0 {
			// The leader still counts the aggregate's previous write as in process: give it a moment.
			if err := pause(ctx, round-1); err != nil {
				return Appended{}, err
			}
		}
		rest := pending[stored:]
		n, err := s.publishAfter(ctx, ref, ours, rest)
		if err == nil {
			return Appended{Events: append(out, rest...), Version: lastVersion(ours, rest)}, nil
		}
		if !errors.Is(err, ErrConflict) {
			return Appended{}, err
		}
		done, pending = append(out, rest[:n]...), rest[n:]
	}
	if s.metrics != nil {
		s.metrics.AppendConflicts.WithLabelValues(ref.Type).Inc()
	}
	return Appended{}, &ConflictError{Ref: ref, Expected: expected}
}

// maxReconciles bounds how many times one append publishes again after a refusal that was not another writer's.
const maxReconciles = 5

// publishAfter publishes envs in order after the aggregate's head, setting each one's stream sequence, and stops at
// the first that fails (ErrConflict when the head moved). It returns how many it stored.
func (s *Store) publishAfter(ctx context.Context, ref events.Ref, head events.Version, envs []events.Envelope) (int, error) {
	filter := s.names.AggregateFilter(ref.Type, ref.ID)
	if s.atomicBatches && len(envs) > 1 && len(envs) <= maxAtomicBatch {
		seq, err := s.publishAtomic(ctx, envs, head.Seq, filter)
		if err != nil {
			return 0, err
		}
		for i := range envs {
			envs[i].Sequence = seq - uint64(len(envs)-1-i)
		}
		return len(envs), nil
	}
	for i := range envs {
		seq, err := s.publish(ctx, &envs[i], head.Seq, filter)
		if err != nil {
			return i, err
		}
		envs[i].Sequence = seq
		head = events.Version{Count: envs[i].Version, Seq: seq}
	}
	return len(envs), nil
}

// lastVersion is the aggregate's version after envs, stored after v.
func lastVersion(v events.Version, envs []events.Envelope) events.Version {
	if n := len(envs); n > 0 {
		return events.Version{Count: envs[n-1].Version, Seq: envs[n-1].Sequence}
	}
	return v
}

// Load replays one aggregate's history, in order, with each event decoded.
func (s *Store) Load(ctx context.Context, ref events.Ref) ([]events.Envelope, events.Version, error) {
	if err := checkRef(ref); err != nil {
		return nil, events.Version{}, err
	}
	var out []events.Envelope
	var err error
	if s.cache != nil {
		out, err = s.loadCached(ctx, ref)
	} else {
		_, err = s.Read(ctx, 0, func(e events.Envelope) error {
			out = append(out, e)
			return nil
		}, s.names.AggregateFilter(ref.Type, ref.ID))
	}
	if err != nil {
		return nil, events.Version{}, fmt.Errorf("load %s: %w", ref, err)
	}
	var v events.Version
	if n := len(out); n > 0 {
		v = events.Version{Count: uint64(n), Seq: out[n-1].Sequence}
	}
	return out, v, nil
}

// Read calls fn for every event matching the filter from stream sequence `from` (0 or 1 = the beginning) up to
// the end of the log, in order. It returns the sequence of the last event delivered. With several filters it reads
// each and merges them in sequence order.
func (s *Store) Read(ctx context.Context, from uint64, fn func(events.Envelope) error, filters ...string) (uint64, error) {
	if len(filters) == 0 {
		filters = []string{s.names.EventsWildcard()}
	}
	if err := checkFilters(filters); err != nil {
		return 0, err
	}
	if len(filters) > 1 {
		return s.readMerged(ctx, from, fn, filters)
	}
	var last uint64
	err := s.readDirect(ctx, filters[0], from, func(m stored) error {
		env, err := s.DecodeEnvelope(m.data)
		if err != nil {
			return fmt.Errorf("decode event at sequence %d: %w", m.seq, err)
		}
		env.Sequence = m.seq
		if err := fn(env); err != nil {
			return err
		}
		last = m.seq
		return nil
	})
	return last, err
}

// readMerged reads several filters and delivers their events in stream order.
func (s *Store) readMerged(ctx context.Context, from uint64, fn func(events.Envelope) error, filters []string) (uint64, error) {
	var all []events.Envelope
	for _, f := range filters {
		if _, err := s.Read(ctx, from, func(e events.Envelope) error { all = append(all, e); return nil }, f); err != nil {
			return 0, err
		}
	}
	slices.SortFunc(all, func(a, b events.Envelope) int { return cmp.Compare(a.Sequence, b.Sequence) })
	var last uint64
	for _, e := range all {
		if e.Sequence == last {
			continue // two filters matched the same event
		}
		if err := fn(e); err != nil {
			return last, err
		}
		last = e.Sequence
	}
	return last, nil
}

// Follow yields every event matching the filters from stream sequence `from`, history first and then live, with
// no gap and no duplicate at the switch (one ordered consumer serves both). It ends when ctx ends or on an error,
// which it yields. Its consumer is deleted when it ends (and would expire soon after a crash), so subscriptions that
// come and go do not pile consumers up on the server. A consumer that stops delivering while events wait for it (its
// server died) is replaced by a new one from the next sequence, so a follower never stands still for long.
func (s *Store) Follow(ctx context.Context, from uint64, filters ...string) iter.Seq2[events.Envelope, error] {
	return func(yield func(events.Envelope, error) bool) {
		if err := checkFilters(filters); err != nil {
			yield(events.Envelope{}, err)
			return
		}
		deadline := time.Now().Add(failoverWait)
		for attempt := 0; ; attempt++ {
			next, err := s.followOnce(ctx, from, filters, yield)
			if err == nil || ctx.Err() != nil {
				return
			}
			switch {
			case errors.Is(err, errStalled):
				s.logger.Warn("log reader stopped while events waited; reading again from where it was", "filters", filters, "from", next)
				if s.metrics != nil {
					s.metrics.ProjectionStall.WithLabelValues("follow").Inc()
				}
				deadline = time.Now().Add(failoverWait)
			case transient(err) && time.Now().Before(deadline):
				// The reader could not be opened while the stream elects a leader: open it again shortly.
				if pause(ctx, attempt) != nil {
					return
				}
			default:
				yield(events.Envelope{}, err)
				return
			}
			from = next
		}
	}
}

// errStalled says a reader's consumer stopped delivering while events waited for it.
var errStalled = errors.New("log reader stalled")

// stallAfter is how long a reader may receive nothing while its consumer reports pending events before it is
// replaced.
const stallAfter = 2 * time.Second

// followOnce serves Follow with one consumer. It returns nil when the caller stopped (yield returned false) and
// errStalled, with the sequence to go on from, when the consumer stalled.
func (s *Store) followOnce(ctx context.Context, from uint64, filters []string, yield func(events.Envelope, error) bool) (uint64, error) {
	cons, err := s.orderedConsumer(ctx, from, filters)
	if err != nil {
		return from, err
	}
	defer s.dropConsumer(cons)
	it, err := cons.Messages()
	if err != nil {
		return from, fmt.Errorf("follow log: %w", err)
	}
	defer it.Stop()
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	var progress natsx.Progress
	var stalled atomic.Bool
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	go natsx.Watchdog(wctx, cons, &progress, stallAfter, s.tip, func() {
		stalled.Store(true)
		it.Stop()
	})
	for {
		msg, err := it.Next()
		if err != nil {
			if stalled.Load() {
				return from, errStalled
			}
			if ctx.Err() != nil {
				return from, nil
			}
			return from, fmt.Errorf("follow log: %w", err)
		}
		progress.Mark()
		env, _, err := s.decode(msg)
		if !yield(env, err) || err != nil {
			return from, nil
		}
		from = env.Sequence + 1
	}
}

// followerIdle is how long the server keeps a reader's consumer after its reader went away without deleting it.
const followerIdle = 30 * time.Second

// dropConsumer deletes a reader's consumer (the ordered consumer may have replaced it after a gap: the current one
// is the one to delete).
func (s *Store) dropConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil || info.Name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = s.js.DeleteConsumer(ctx, s.names.EventsStream(), info.Name)
}

func (s *Store) orderedConsumer(ctx context.Context, from uint64, filters []string) (jetstream.Consumer, error) {
	if len(filters) == 0 {
		filters = []string{s.names.EventsWildcard()}
	}
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: filters, DeliverPolicy: jetstream.DeliverAllPolicy,
		InactiveThreshold: followerIdle}
	if from > 1 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = from
	}
	// Bounded apart from the follower's own context: a request to a stream leader that just died is never answered.
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	cons, err := s.js.OrderedConsumer(actx, s.names.EventsStream(), cfg)
	if err != nil {
		return nil, fmt.Errorf("open reader on %v: %w", filters, err)
	}
	return cons, nil
}

// decode turns a stored message into an envelope; it also returns how many matching messages follow it.
func (s *Store) decode(msg jetstream.Msg) (events.Envelope, uint64, error) {
	md, err := msg.Metadata()
	if err != nil {
		return events.Envelope{}, 0, fmt.Errorf("read message metadata: %w", err)
	}
	env, err := s.DecodeEnvelope(msg.Data())
	if err != nil {
		return events.Envelope{}, 0, fmt.Errorf("decode event at sequence %d: %w", md.Sequence.Stream, err)
	}
	env.Sequence = md.Sequence.Stream
	return env, md.NumPending, nil
}

// DecodeEnvelope parses a stored envelope and its payload. An event type this build does not know leaves Event nil
// (it is kept and skipped, not fatal).
func (s *Store) DecodeEnvelope(data []byte) (events.Envelope, error) {
	return events.DecodeEnvelope(s.reg, data)
}

// State is an aggregate rebuilt from its events.
type State interface {
	Apply(events.Envelope)
}

// maxUpdateAttempts bounds an update's retries: past it, contention is a fault to report, not to hide.
const maxUpdateAttempts = 40

// Update loads an aggregate into S, asks decide for the events to append, and appends them expecting the history it
// loaded. On a conflict it reloads and decides again. decide must be pure: it may run several times. It returns
// nothing appended (and no error) when decide returns no events.
//
// It is Repo.Update on a repository of one aggregate, kept for as long as the call: the update loop is written once,
// there.
func Update[S any, P interface {
	*S
	State
}](ctx context.Context, st *Store, ref events.Ref, meta events.Meta, decide func(*S) ([]events.Event, error)) (Appended, error) {
	return NewRepo[S, P](st, ref.Type, 1).Update(ctx, ref.ID, Fresh, meta, decide)
}

// LastSequence is the sequence of the newest event in the log (0 when empty).
func (s *Store) LastSequence(ctx context.Context) (uint64, error) {
	stream, err := s.js.Stream(ctx, s.names.EventsStream())
	if err != nil {
		return 0, fmt.Errorf("look up events stream: %w", err)
	}
	return stream.CachedInfo().State.LastSeq, nil
}
