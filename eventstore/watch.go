package eventstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"sync"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/nats-io/nats.go"
)

// A Watch follows one aggregate's events as the log commits them, for a reader that shows them as they happen (a
// run's stream of server-sent events, a session's subscription). The log republishes every event it stores on a
// core NATS subject (natsx.Names.CommittedFilter): the node listens there (once per aggregate type) and hands
// each event to the watches of its aggregate, which costs the server a subject match per event, where a reader
// of the stored log would be a consumer made, fed and deleted for each reader. Republished events are committed
// ones only, with their stream sequence, so a watch never shows an append the log refused.
//
// Core NATS may drop what a slow reader does not take, and a stream leader that dies between storing an event and
// republishing it never republishes it. The aggregate's version numbers are consecutive, so a watch that sees one
// skipped reads the gap from the log; one that sees nothing for a while asks the log where the aggregate ends.
//
// Make the watch before reading the aggregate, then follow from where the read ended: an event appended in between
// is then in the watch. A log without republishing (a stream set up by hand) is followed with a consumer instead.
type Watch struct {
	s      *Store
	ref    events.Ref
	filter string
	ch     chan *nats.Msg // nil: the log does not republish; Follow reads with a consumer
}

// watchBuffer is how many committed events a watch holds for a reader that is busy: past it, core NATS drops them
// and the reader reads them from the log instead.
const watchBuffer = 512

// Watch starts watching one aggregate. Close it when done.
func (s *Store) Watch(ctx context.Context, ref events.Ref) (*Watch, error) {
	if err := checkRef(ref); err != nil {
		return nil, err
	}
	w := &Watch{s: s, ref: ref, filter: s.names.AggregateFilter(ref.Type, ref.ID)}
	if !s.republishes(ctx) {
		return w, nil
	}
	w.ch = make(chan *nats.Msg, watchBuffer)
	if err := s.watches.add(s, w); err != nil {
		return nil, fmt.Errorf("watch %s: %w", ref, err)
	}
	return w, nil
}

// Close ends the watch.
func (w *Watch) Close() {
	if w.ch != nil {
		w.s.watches.remove(w)
	}
}

// watches hands the committed events of the aggregates watched on this node to their watches. The node listens
// once per aggregate type, not once per watch: a subscription made and dropped for every run's stream makes the
// server insert it into its subject index and then sweep it out of the index's cache, which costs more than the
// events it carries.
type watches struct {
	mu     sync.Mutex
	byType map[string]*nats.Subscription
	byRef  map[events.Ref]map[*Watch]struct{}
}

func (ws *watches) add(s *Store, w *Watch) error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.byType[w.ref.Type] == nil {
		sub, err := s.js.Conn().Subscribe(s.names.CommittedFilter(w.ref.Type, "*"), func(m *nats.Msg) { ws.deliver(s, m) })
		if err != nil {
			return err
		}
		if ws.byType == nil {
			ws.byType, ws.byRef = map[string]*nats.Subscription{}, map[events.Ref]map[*Watch]struct{}{}
		}
		ws.byType[w.ref.Type] = sub
	}
	set := ws.byRef[w.ref]
	if set == nil {
		set = map[*Watch]struct{}{}
		ws.byRef[w.ref] = set
	}
	set[w] = struct{}{}
	return nil
}

func (ws *watches) remove(w *Watch) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if set := ws.byRef[w.ref]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(ws.byRef, w.ref)
		}
	}
}

// deliver hands a committed event to the watches of its aggregate. A watch whose reader is busy past its buffer
// misses it, and reads it from the log when it sees the gap.
func (ws *watches) deliver(s *Store, m *nats.Msg) {
	typ, id, ok := s.names.SplitCommittedSubject(m.Subject)
	if !ok {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for w := range ws.byRef[events.Ref{Type: typ, ID: id}] {
		select {
		case w.ch <- m:
		default:
		}
	}
}

// Follow yields the aggregate's events after `after` (the version a read made after the watch began ended at: the
// zero Version for its whole history), in order, with no gap and no duplicate, until ctx ends or an error, which it
// yields.
func (w *Watch) Follow(ctx context.Context, after events.Version) iter.Seq2[events.Envelope, error] {
	return func(yield func(events.Envelope, error) bool) {
		if w.ch == nil {
			w.followLog(ctx, after.Seq+1, yield)
			return
		}
		f := follower{w: w, next: after.Seq + 1, version: after.Count, known: true, yield: yield}
		f.run(ctx)
	}
}

// FollowFrom yields the aggregate's events from stream sequence `from` on (0: its whole history), in order, with
// no gap and no duplicate, until ctx ends or an error, which it yields. It reads what the log holds from `from`
// first, then follows the watch.
func (w *Watch) FollowFrom(ctx context.Context, from uint64) iter.Seq2[events.Envelope, error] {
	return func(yield func(events.Envelope, error) bool) {
		if w.ch == nil {
			w.followLog(ctx, from, yield)
			return
		}
		f := follower{w: w, next: max(from, 1), yield: yield}
		if !f.catchUp(ctx) {
			return
		}
		if !f.known && !f.learnVersion(ctx) {
			return
		}
		f.run(ctx)
	}
}

// followLog is Follow on a log that does not republish: a consumer reads it.
func (w *Watch) followLog(ctx context.Context, from uint64, yield func(events.Envelope, error) bool) {
	for e, err := range w.s.Follow(ctx, from, w.filter) {
		if !yield(e, err) {
			return
		}
	}
}

// FollowAggregate yields one aggregate's events from stream sequence `from` on (0: its whole history), history
// first and then live, with no gap and no duplicate: a Watch made for the one reader.
func (s *Store) FollowAggregate(ctx context.Context, ref events.Ref, from uint64) iter.Seq2[events.Envelope, error] {
	return func(yield func(events.Envelope, error) bool) {
		w, err := s.Watch(ctx, ref)
		if err != nil {
			yield(events.Envelope{}, err)
			return
		}
		defer w.Close()
		for e, err := range w.FollowFrom(ctx, from) {
			if !yield(e, err) {
				return
			}
		}
	}
}

// The idle checks of a watch: after quietFirst without an event it asks the log where the aggregate ends, then
// less and less often, up to quietMost apart.
const (
	quietFirst = 2 * time.Second
	quietMost  = 30 * time.Second
)

// follower is one Follow of a watch: the next stream sequence it may yield and the version of the last event
// yielded (known is false until it has learnt it).
type follower struct {
	w       *Watch
	next    uint64
	version uint64
	known   bool
	yield   func(events.Envelope, error) bool
}

func (f *follower) run(ctx context.Context) {
	quiet := quietFirst
	timer := time.NewTimer(quiet)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-f.w.ch:
			if !f.committed(ctx, m) {
				return
			}
			quiet = quietFirst
		case <-timer.C:
			// Nothing for a while: an event may have been stored and never republished (its leader died).
			if head, ok := f.w.s.head(ctx, f.w.filter); !ok || head >= f.next {
				if !f.catchUp(ctx) {
					return
				}
			}
			quiet = min(2*quiet, quietMost)
		}
		timer.Reset(quiet)
	}
}

// committed takes one republished event: yielded when it is the next one, read from the log with what it skipped
// when it is not. It reports whether to go on.
func (f *follower) committed(ctx context.Context, m *nats.Msg) bool {
	seq, err := strconv.ParseUint(m.Header.Get("Nats-Sequence"), 10, 64)
	if err != nil {
		return f.catchUp(ctx)
	}
	if seq < f.next {
		return true // read from the log already
	}
	env, err := f.w.s.DecodeEnvelope(m.Data)
	if err != nil {
		f.yield(events.Envelope{}, fmt.Errorf("follow %s: decode event at sequence %d: %w", f.w.ref, seq, err))
		return false
	}
	if !f.known || env.Version != f.version+1 {
		return f.catchUp(ctx) // something was missed: the log has it, and this one
	}
	env.Sequence = seq
	return f.emit(env)
}

// catchUp yields what the log holds from f.next on.
func (f *follower) catchUp(ctx context.Context) bool {
	goOn := true
	_, err := f.w.s.Read(ctx, f.next, func(e events.Envelope) error {
		if goOn = f.emit(e); !goOn {
			return errStopped
		}
		return nil
	}, f.w.filter)
	if err != nil && goOn {
		if ctx.Err() == nil {
			f.yield(events.Envelope{}, fmt.Errorf("follow %s: %w", f.w.ref, err))
		}
		return false
	}
	return goOn
}

// learnVersion finds the aggregate's version before f.next when the read from there found nothing.
func (f *follower) learnVersion(ctx context.Context) bool {
	last, ok := f.w.s.last(ctx, f.w.filter)
	if !ok {
		if ctx.Err() == nil {
			f.yield(events.Envelope{}, fmt.Errorf("follow %s: the log did not say where the aggregate ends", f.w.ref))
		}
		return false
	}
	if last.seq >= f.next {
		return f.catchUp(ctx) // appended since the read
	}
	if last.seq > 0 {
		env, err := f.w.s.DecodeEnvelope(last.data)
		if err != nil {
			f.yield(events.Envelope{}, fmt.Errorf("follow %s: decode event at sequence %d: %w", f.w.ref, last.seq, err))
			return false
		}
		f.version = env.Version
	}
	f.known = true
	return true
}

func (f *follower) emit(e events.Envelope) bool {
	if e.Sequence < f.next {
		return true
	}
	f.next, f.version, f.known = e.Sequence+1, e.Version, true
	return f.yield(e, nil)
}

// errStopped ends a read whose reader stopped.
var errStopped = errors.New("reader stopped")

// republishes reports whether the log republishes what it stores where watches listen. It asks the server once;
// a failed question is asked again next time.
func (s *Store) republishes(ctx context.Context) bool {
	switch s.republish.Load() {
	case republishOn:
		return true
	case republishOff:
		return false
	}
	actx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	stream, err := s.js.Stream(actx, s.names.EventsStream())
	if err != nil {
		return false
	}
	rp := stream.CachedInfo().Config.RePublish
	on := rp != nil && !rp.HeadersOnly && rp.Source == s.names.EventsWildcard() && rp.Destination == s.names.CommittedWildcard()
	if on {
		s.republish.Store(republishOn)
	} else {
		s.republish.Store(republishOff)
	}
	return on
}

const (
	republishUnknown int32 = iota
	republishOn
	republishOff
)
