package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx"
)

// ErrUnknownProjection is returned for a name no projection has.
var ErrUnknownProjection = errors.New("unknown projection")

func (r *Runner) state(name string) (*state, error) {
	st, ok := r.projs[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownProjection, name)
	}
	return st, nil
}

// Get reads one document of a read model into v and reports whether it exists. On a cluster any replica of the
// bucket may answer; a document one does not have yet is asked of the bucket's leader before it is called missing,
// so that an object made on one node is found on another as soon as its projection has written it.
func (r *Runner) Get(ctx context.Context, name, key string, v any) (bool, error) {
	st, err := r.state(name)
	if err != nil {
		return false, err
	}
	// A key that cannot be one names no document. A long one is refused before it is sent: the server closes the
	// connection of a client whose request line (which holds the key) is longer than its max_control_line.
	if !natsx.ValidKey(key, false) {
		return false, nil
	}
	e, err := natsx.KVGet(ctx, st.bucket(), key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		if r.clustered() {
			return r.getFromLeader(ctx, st, name, key, v)
		}
		return false, nil
	}
	if errors.Is(err, jetstream.ErrInvalidKey) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read %s/%s: %w", name, key, err)
	}
	return decodeDoc(name, key, e.Value(), v)
}

// GetAfter reads one document once the read model has applied the event at stream sequence seq: a client reading
// what it just wrote. On a cluster it reads from the bucket's leader, since a follower replica may not yet hold what
// the projection wrote. It waits as long as ctx allows.
func (r *Runner) GetAfter(ctx context.Context, name string, seq uint64, key string, v any) (bool, error) {
	if err := r.WaitFor(ctx, name, seq); err != nil {
		return false, err
	}
	if !r.clustered() {
		return r.Get(ctx, name, key, v)
	}
	st, err := r.state(name)
	if err != nil {
		return false, err
	}
	return r.getFromLeader(ctx, st, name, key, v)
}

// GetAfterAs is GetAfter decoding into a T.
func GetAfterAs[T any](ctx context.Context, r *Runner, name string, seq uint64, key string) (T, bool, error) {
	var v T
	ok, err := r.GetAfter(ctx, name, seq, key, &v)
	return v, ok, err
}

func (r *Runner) clustered() bool { return r.cfg.Layout.Replicas > 1 }

// mark is where a read model stands on this node: its generation and the last sequence it has applied. A document
// read while the mark stays where it was is the document the model holds.
type mark struct {
	gen     int
	applied uint64
}

func (r *Runner) mark(name string) (mark, error) {
	st, err := r.state(name)
	if err != nil {
		return mark{}, err
	}
	return st.mark(), nil
}

// getLatest reads a document as the read model's bucket holds it: from the bucket's leader on a cluster, where a
// replica may lag behind the checkpoint this node has seen, and as Get does on one server. latest is false when the
// leader could not be asked (an election) and a replica answered instead.
func (r *Runner) getLatest(ctx context.Context, name, key string, v any) (found, latest bool, err error) {
	if !r.clustered() {
		found, err = r.Get(ctx, name, key, v)
		return found, true, err
	}
	st, err := r.state(name)
	if err != nil {
		return false, false, err
	}
	if found, err = r.getFromLeader(ctx, st, name, key, v); err == nil {
		return found, true, nil
	}
	found, err = r.Get(ctx, name, key, v)
	return found, false, err
}

func (r *Runner) getFromLeader(ctx context.Context, st *state, name, key string, v any) (bool, error) {
	if err := validKey(key); err != nil {
		return false, nil
	}
	raw, ok, err := natsx.LeaderKVGet(ctx, r.cfg.JS.Conn(), st.bucket().Bucket(), key)
	if err != nil || !ok {
		return false, err
	}
	return decodeDoc(name, key, raw, v)
}

func decodeDoc(name, key string, raw []byte, v any) (bool, error) {
	var d doc
	if err := json.Unmarshal(raw, &d); err != nil {
		return false, fmt.Errorf("decode %s/%s: %w", name, key, err)
	}
	if d.Deleted {
		return false, nil
	}
	if err := json.Unmarshal(d.V, v); err != nil {
		return false, fmt.Errorf("decode %s/%s: %w", name, key, err)
	}
	return true, nil
}

// Get reads one document of a read model as a T.
func Get[T any](ctx context.Context, r *Runner, name, key string) (T, bool, error) {
	var v T
	ok, err := r.Get(ctx, name, key, &v)
	return v, ok, err
}

// GetLatest is Get reading, on a cluster, from the bucket's leader, and from a replica only when the leader cannot be
// asked (getLatest): for a read that follows a wait for the model to show a write, which a replica that lags the
// leader (a direct get may go to any) would answer as it was before the write.
func GetLatest[T any](ctx context.Context, r *Runner, name, key string) (T, bool, error) {
	var v T
	ok, _, err := r.getLatest(ctx, name, key, &v)
	return v, ok, err
}

// List calls fn with every live document whose key matches the filter (KV wildcards: "acct_1.>", "*.x"), in no
// particular order. One watcher delivers them all, which costs one round trip rather than one per key.
func (r *Runner) List(ctx context.Context, name, filter string, fn func(key string, raw json.RawMessage) error) error {
	st, err := r.state(name)
	if err != nil {
		return err
	}
	if !natsx.ValidKey(filter, true) {
		return &errs.Error{Code: errs.Invalid, Message: "not a valid ID", Err: fmt.Errorf("list %s: filter %.120q is not a valid key filter", name, filter)}
	}
	w, err := st.bucket().WatchFiltered(ctx, []string{filter}, jetstream.IgnoreDeletes())
	if err != nil {
		return fmt.Errorf("list %s %s: %w", name, filter, err)
	}
	defer w.Stop()
	for {
		select {
		case e, ok := <-w.Updates():
			if !ok {
				return fmt.Errorf("list %s %s: watcher closed", name, filter)
			}
			if e == nil {
				return nil // the initial values are all delivered
			}
			if e.Key() == checkpointKey {
				continue
			}
			var d doc
			if err := json.Unmarshal(e.Value(), &d); err != nil {
				return fmt.Errorf("decode %s/%s: %w", name, e.Key(), err)
			}
			if d.Deleted {
				continue
			}
			if err := fn(e.Key(), d.V); err != nil {
				return err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ListAll decodes every live document matching the filter as a T.
func ListAll[T any](ctx context.Context, r *Runner, name, filter string) ([]T, error) {
	var out []T
	err := r.List(ctx, name, filter, func(key string, raw json.RawMessage) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("decode %s/%s: %w", name, key, err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// WaitFor waits until the read model has applied the event at stream sequence seq (one that matches the projection),
// so that a client reads its own write. It gives up when ctx ends.
func (r *Runner) WaitFor(ctx context.Context, name string, seq uint64) error {
	st, err := r.state(name)
	if err != nil {
		return err
	}
	for {
		applied, changed := st.progress()
		if applied >= seq {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("wait for %s to apply sequence %d (at %d): %w", name, seq, applied, ctx.Err())
		}
	}
}

// Shows waits until each model has applied the last event of an append that it folds, so that a client reads its
// own write (a model never reaches the sequence of an event it does not fold, so each is waited for at its own).
// It is how a face that answers from a read model reads what its command just appended; commands themselves never
// wait. It waits at most Config.ReadWait: past it, it returns the deadline error, and the write stays made.
func (r *Runner) Shows(ctx context.Context, res eventstore.Appended, models ...Projection) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.ReadWait)
	defer cancel()
	for _, m := range models {
		var seq uint64
		for _, e := range res.Events {
			if Folds(m, e.Type) {
				seq = max(seq, e.Sequence)
			}
		}
		if seq == 0 {
			continue
		}
		if err := r.WaitFor(ctx, m.Name(), seq); err != nil {
			return err
		}
	}
	return nil
}

// ShowsWrite is a command's error, or else Shows of what it appended: how a caller that answers from read models
// finishes a command ("res, err := cmd(...); if err := views.ShowsWrite(ctx, res, err, models...); ...").
func (r *Runner) ShowsWrite(ctx context.Context, res eventstore.Appended, err error, models ...Projection) error {
	if err != nil {
		return err
	}
	return r.Shows(ctx, res, models...)
}

// Folds reports whether a projection folds events of a type.
func Folds(p Projection, eventType string) bool {
	agg, _ := events.SplitType(eventType)
	for _, t := range p.EventTypes() {
		if t == eventType || t == agg+".*" {
			return true
		}
	}
	return false
}

// Status is what `contrail projections status` shows of one projection.
type Status struct {
	Name       string `json:"name"`
	Generation int    `json:"generation"`
	Bucket     string `json:"bucket"`
	Applied    uint64 `json:"applied_sequence"`
	Pending    uint64 `json:"pending"`
	Leader     string `json:"leader"`
	CaughtUp   bool   `json:"caught_up"`
}

// Status reports every projection: where it is applied to and how many matching events wait.
func (r *Runner) Status(ctx context.Context) ([]Status, error) {
	out := make([]Status, 0, len(r.order))
	for _, name := range r.order {
		st := r.projs[name]
		gen, kv, _ := st.current()
		applied, _ := st.progress()
		pending, err := r.pending(ctx, st, applied)
		if err != nil {
			return nil, err
		}
		leader, _ := lease.Holder(ctx, r.leases, "projection."+st.key)
		out = append(out, Status{Name: name, Generation: gen, Bucket: kv.Bucket(), Applied: applied,
			Pending: pending, Leader: leader, CaughtUp: pending == 0})
	}
	return out, nil
}

// pending counts the events matching the projection after sequence `applied`.
func (r *Runner) pending(ctx context.Context, st *state, applied uint64) (uint64, error) {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: st.filters, DeliverPolicy: jetstream.DeliverAllPolicy,
		InactiveThreshold: 5 * time.Second}
	if applied > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = applied + 1
	}
	cons, err := r.cfg.JS.OrderedConsumer(ctx, r.names.EventsStream(), cfg)
	if err != nil {
		return 0, fmt.Errorf("count pending events of %s: %w", st.p.Name(), err)
	}
	defer r.dropConsumer(cons)
	return cons.CachedInfo().NumPending, nil
}

// CaughtUp reports whether every projection has applied every matching event in the log: whether any event the
// projection folds lies after the sequence it applied (unappliedFrom). Cheap enough for a readiness probe.
func (r *Runner) CaughtUp(ctx context.Context) (bool, string, error) {
	stream, err := r.eventsStream(ctx)
	if err != nil {
		return false, "", err
	}
	end, err := lastInLog(ctx, stream)
	if err != nil {
		return false, "", err
	}
	for _, name := range r.order {
		st := r.projs[name]
		applied, _ := st.progress()
		next, err := unappliedFrom(ctx, stream, st.filters, applied, end)
		if err != nil {
			return false, name, err
		}
		if next != 0 {
			return false, name, nil
		}
	}
	return true, "", nil
}

// ShowsAggregate waits until the read model p has applied the last event of an aggregate that it folds, at most
// Config.ReadWait as Shows does. It reports whether the model shows them: past the wait it returns false and no
// error, and the caller answers from the log (FoldAggregate) or, where being behind is harmless, what the model
// holds. It is for a read that follows writes the reader did not make itself (a run's worker wrote the answer a
// client lists after seeing the run completed in another read model): without it, such a read answered without
// them whenever the model stood still a moment (its lease renewed late on a loaded node, or moving to another
// node). aggregateID must be valid: it names subjects.
//
// It asks for the last event of each type the model folds: one lookup each. One lookup on the aggregate's wildcard
// subject (AggregateFilter) would find the aggregate's last event of any type, and a model never reaches the
// sequence of an event it does not fold: a thread's last event is most often its run's (completed after the run's
// message was written), and the messages model would then be waited for the whole ReadWait on every read. That
// one lookup comes first all the same: a model that has applied past the aggregate's last event shows all of it,
// and a read polled often (a run's, whose model folds eleven types) then costs one lookup, not one per type.
func (r *Runner) ShowsAggregate(ctx context.Context, p Projection, aggregateID string) (bool, error) {
	stream, err := r.eventsStream(ctx)
	if err != nil {
		return false, err
	}
	st, err := r.state(p.Name())
	if err != nil {
		return false, err
	}
	var aggregates, subjects []string
	for _, t := range p.EventTypes() {
		agg, name := events.SplitType(t)
		if f := r.names.AggregateFilter(agg, aggregateID); !slices.Contains(aggregates, f) {
			aggregates = append(aggregates, f)
		}
		subjects = append(subjects, r.names.EventSubject(agg, aggregateID, name))
	}
	newest, err := lastSequence(ctx, stream, aggregates)
	if err != nil {
		return r.unknown(ctx, p, err)
	}
	if applied, _ := st.progress(); applied >= newest {
		return true, nil
	}
	last, err := lastSequence(ctx, stream, subjects)
	if err != nil {
		return r.unknown(ctx, p, err)
	}
	return r.showsWithin(ctx, p, last)
}

// ShowsLatest waits, at most Config.ReadWait as Shows does, until the read model p has applied every event it folds
// that the log held when it was called, of any aggregate. It reports whether the model shows them: past the wait it
// returns false and no error. It is for a read that spans aggregates (an account's Julep agents), which
// FoldAggregate cannot answer from the log: past the wait such a read says the model is behind rather than answer
// what it holds.
//
// It looks for the first event the model folds after the sequence it applied (unappliedFrom), waits for the model
// to apply it, and looks again, up to the log's end as it was at the call. It does not ask for the last event of
// each type: on a subject with a wildcard where the aggregate's ID goes, the server finds that by walking every
// aggregate's subject, which cost 80 ms a list at 100,000 aggregates (BenchmarkShowsLatest); the first event after
// a sequence near the end is found by walking the few messages after it.
func (r *Runner) ShowsLatest(ctx context.Context, p Projection) (bool, error) {
	stream, err := r.eventsStream(ctx)
	if err != nil {
		return false, err
	}
	st, err := r.state(p.Name())
	if err != nil {
		return false, err
	}
	wctx, cancel := context.WithTimeout(ctx, r.cfg.ReadWait)
	defer cancel()
	ictx, icancel := context.WithTimeout(wctx, logEndWait)
	end, err := lastInLog(ictx, stream)
	icancel()
	if err != nil {
		// Only the stream's leader says where the log ends, and none does while one is elected after a server's
		// failure. Any replica answers for the last event of each filter: slow on a log of many aggregates, but
		// answered, so that lists go on through an election.
		last, lerr := lastSequence(wctx, stream, st.filters)
		if lerr != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return false, nil // past the wait
			}
			return r.unknown(ctx, p, lerr)
		}
		return r.waited(ctx, wctx, p, last)
	}
	for {
		applied, _ := st.progress()
		next, err := unappliedFrom(wctx, stream, st.filters, applied, end)
		switch {
		case err != nil && wctx.Err() != nil && ctx.Err() == nil:
			return false, nil // past the wait
		case err != nil:
			return r.unknown(ctx, p, err)
		case next == 0:
			return true, nil
		}
		if shown, err := r.waited(ctx, wctx, p, next); !shown || err != nil {
			return shown, err
		}
	}
}

// logEndWait bounds the lookup of the log's end within a read's wait: the stream's leader answers it at once, and
// while none is elected the read falls back on lookups any replica answers.
const logEndWait = time.Second

// waited waits within wctx (a read's wait, from ctx) until p has applied seq, and reports whether it has: past the
// wait, false and no error.
func (r *Runner) waited(ctx, wctx context.Context, p Projection, seq uint64) (bool, error) {
	if seq == 0 {
		return true, nil
	}
	if err := r.WaitFor(wctx, p.Name(), seq); err != nil {
		if PastWait(ctx, err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// unknown is what ShowsAggregate and ShowsLatest answer when the log could not say its last event (its stream's
// leader moving after a failure, a lookup timed out): not shown, and no error, as past the wait, so that the caller
// reads the log itself or says the model is behind, rather than fail a read, or a write that went in, with a 5xx.
func (r *Runner) unknown(ctx context.Context, p Projection, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	r.cfg.Logger.Warn("projections: cannot tell whether a read model is current; answering as if it were behind",
		"projection", p.Name(), "err", err)
	return false, nil
}

// ListCaughtUp is ShowsLatest for a list that spans aggregates (an account's threads, sessions, Julep agents), which
// cannot be folded from the log: nil once the model shows the log's last event of each type it folds, and past the
// wait an Unavailable error (a 503) saying the model is behind, not an answer from what it holds (an object made a
// moment ago left out, one deleted still listed).
func (r *Runner) ListCaughtUp(ctx context.Context, p Projection) error {
	shown, err := r.ShowsLatest(ctx, p)
	if err != nil || shown {
		return err
	}
	return &errs.Error{Code: errs.Unavailable,
		Message: "this list cannot be answered now: its read model is behind; retry",
		Err:     fmt.Errorf("list %s: the read model did not catch up within the read wait", p.Name())}
}

// lastSequence is the sequence of the log's newest event on any of filters (0: none).
func lastSequence(ctx context.Context, stream jetstream.Stream, filters []string) (uint64, error) {
	var last uint64
	for _, f := range filters {
		m, err := stream.GetLastMsgForSubject(ctx, f)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("last event on %s: %w", f, err)
		}
		last = max(last, m.Sequence)
	}
	return last, nil
}

// lastInLog is the sequence of the log's last event.
func lastInLog(ctx context.Context, stream jetstream.Stream) (uint64, error) {
	info, err := stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("the log's last event: %w", err)
	}
	return info.State.LastSeq, nil
}

// unappliedFrom is the sequence of the log's first event on any of filters after `applied` and up to `end` (0:
// none, the model shows the log up to end).
func unappliedFrom(ctx context.Context, stream jetstream.Stream, filters []string, applied, end uint64) (uint64, error) {
	var first uint64
	for _, f := range filters {
		if applied >= end {
			break
		}
		m, err := stream.GetMsg(ctx, applied+1, jetstream.WithGetMsgSubject(f))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("first event on %s after %d: %w", f, applied, err)
		}
		if m.Sequence <= end {
			// A later filter's first event counts only if it comes before this one.
			first, end = m.Sequence, m.Sequence-1
		}
	}
	return first, nil
}

// showsWithin waits, at most Config.ReadWait, until p has applied sequence seq (0: nothing to wait for), and
// reports whether it has: past the wait, false and no error.
func (r *Runner) showsWithin(ctx context.Context, p Projection, seq uint64) (bool, error) {
	wctx, cancel := context.WithTimeout(ctx, r.cfg.ReadWait)
	defer cancel()
	return r.waited(ctx, wctx, p, seq)
}

// eventsStream is the log's stream handle, looked up once: a read that checks a model against the log would
// otherwise pay a round trip for it every time. The handle only names the stream, so it stays good; a failed
// lookup is not kept.
func (r *Runner) eventsStream(ctx context.Context) (jetstream.Stream, error) {
	r.streamMu.Lock()
	defer r.streamMu.Unlock()
	if r.stream != nil {
		return r.stream, nil
	}
	stream, err := r.cfg.JS.Stream(ctx, r.names.EventsStream())
	if err != nil {
		return nil, fmt.Errorf("look up events stream: %w", err)
	}
	r.stream = stream
	return stream, nil
}
