package eventstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Repo keeps the aggregates of one type folded in memory, current with the log, so that a command or a handler
// decides on state it already holds instead of reading and folding the aggregate's history again. One Repo per
// aggregate type is shared by everything on a node that loads or updates that type: what one appends, the others
// see without a read.
//
// The log stays the only truth. Every append expects the version its decision was made on, so a state that missed
// what another node appended meets a conflict and is reloaded, never overwritten. A state is always a prefix of the
// aggregate's history (events are applied in order, none skipped), which is what makes it safe to react to an
// event: a state that holds the event holds everything before it.
type Repo[S any, P interface {
	*S
	State
}] struct {
	store     *Store
	aggregate string
	max       int

	mu      sync.Mutex
	entries map[string]*repoEntry[S]
	tick    uint64
}

type repoEntry[S any] struct {
	// mu is held while the state is loaded, read, decided on or advanced: one decision at a time per aggregate on
	// this node, so that a node does not conflict with itself.
	mu      sync.Mutex
	state   *S // nil: not loaded (or dropped after a surprise)
	version events.Version
	used    uint64
}

// NewRepo returns a repository of the aggregates of one type ("session"), keeping up to size of them in memory.
func NewRepo[S any, P interface {
	*S
	State
}](store *Store, aggregate string, size int) *Repo[S, P] {
	if size <= 0 {
		size = 4096
	}
	return &Repo[S, P]{store: store, aggregate: aggregate, max: size, entries: map[string]*repoEntry[S]{}}
}

// Store is the log the repository reads and appends to.
func (r *Repo[S, P]) Store() *Store { return r.store }

func (r *Repo[S, P]) ref(id string) events.Ref { return events.Ref{Type: r.aggregate, ID: id} }

// entry returns the entry of an aggregate, locked.
func (r *Repo[S, P]) entry(id string) *repoEntry[S] {
	r.mu.Lock()
	e, ok := r.entries[id]
	if !ok {
		if len(r.entries) >= r.max {
			r.evictLocked()
		}
		e = &repoEntry[S]{}
		r.entries[id] = e
	}
	r.tick++
	e.used = r.tick
	r.mu.Unlock()
	e.mu.Lock()
	return e
}

// evictLocked drops the least recently used quarter of the entries that nobody holds.
func (r *Repo[S, P]) evictLocked() {
	threshold := r.tick - min(r.tick, uint64(r.max)*3/4)
	for id, e := range r.entries {
		if e.used <= threshold && e.mu.TryLock() {
			delete(r.entries, id)
			e.mu.Unlock()
		}
	}
}

// Fresh asks Read and Update for the aggregate as the log holds it now (a client's command), rather than as of an
// event the caller reacts to.
const Fresh uint64 = 0

// current brings an entry's state up to the log: to at least stream sequence atLeast when it is not Fresh (an event
// the caller knows is in the aggregate's history), else to whatever the log holds now. Called with e.mu held.
func (r *Repo[S, P]) current(ctx context.Context, id string, e *repoEntry[S], atLeast uint64) error {
	if e.state != nil && atLeast != Fresh && e.version.Seq >= atLeast {
		return nil // it holds the event, so it holds everything before it
	}
	// A client's read on a cluster must see every write acknowledged before it, made on any node: a replica that
	// answers may lag, so what it gave is completed from the stream's leader.
	latest := atLeast == Fresh && r.store.clustered()
	if e.state == nil {
		return r.reload(ctx, id, e, atLeast, latest)
	}
	if atLeast == Fresh && !latest {
		// Reading on from the state's end costs the server a scan of every message appended since, by every
		// aggregate: the index of subjects says first whether anything came after it (on one server, whose answer
		// is the log's).
		if head, ok := r.store.head(ctx, r.store.names.AggregateFilter(r.aggregate, id)); ok && head <= e.version.Seq {
			return nil
		}
	}
	// Read only what came after the state.
	var fresh []events.Envelope
	_, err := r.store.Read(ctx, e.version.Seq+1, func(env events.Envelope) error {
		fresh = append(fresh, env)
		return nil
	}, r.store.names.AggregateFilter(r.aggregate, id))
	if err != nil {
		return fmt.Errorf("load %s: %w", r.ref(id), err)
	}
	if !r.advance(e, fresh) {
		return r.reload(ctx, id, e, atLeast, latest)
	}
	if latest {
		var tail []events.Envelope
		err := r.store.readLeader(ctx, r.store.names.AggregateFilter(r.aggregate, id), e.version.Seq+1, func(env events.Envelope) error {
			tail = append(tail, env)
			return nil
		})
		if err != nil {
			return fmt.Errorf("load %s from the stream leader: %w", r.ref(id), err)
		}
		if !r.advance(e, tail) {
			return r.reload(ctx, id, e, atLeast, true)
		}
	}
	if atLeast != Fresh && e.version.Seq < atLeast {
		// The replica that answered is behind the event the caller holds: the leader settles it.
		return r.reload(ctx, id, e, atLeast, false)
	}
	return nil
}

// reload folds the aggregate's whole history again, from the leader when latest is set.
func (r *Repo[S, P]) reload(ctx context.Context, id string, e *repoEntry[S], atLeast uint64, latest bool) error {
	var history []events.Envelope
	var v events.Version
	var err error
	switch {
	case latest:
		history, v, err = r.store.LoadLatest(ctx, r.ref(id))
	case atLeast != Fresh:
		history, v, err = r.store.LoadAt(ctx, r.ref(id), atLeast)
	default:
		history, v, err = r.store.Load(ctx, r.ref(id))
	}
	if err != nil {
		e.state = nil
		return err
	}
	s := P(new(S))
	for _, env := range history {
		if env.Event != nil {
			s.Apply(env)
		}
	}
	e.state, e.version = (*S)(s), v
	return nil
}

// advance applies events that follow the entry's version, in order. It reports false when they do not follow it
// (a gap or an overlap: the state is then dropped and reloaded).
func (r *Repo[S, P]) advance(e *repoEntry[S], evs []events.Envelope) bool {
	for _, env := range evs {
		if env.Version != e.version.Count+1 {
			if env.Version <= e.version.Count && env.Sequence <= e.version.Seq {
				continue // already applied (a read that overlapped an append of ours)
			}
			e.state = nil
			return false
		}
		if env.Event != nil {
			P(e.state).Apply(env)
		}
		e.version = events.Version{Count: env.Version, Seq: env.Sequence}
	}
	return true
}

// Read calls fn with the aggregate's state: as of at least stream sequence atLeast, or as the log holds it now when
// atLeast is Fresh. fn must neither keep nor change the state; it runs while the aggregate is held on this node.
func (r *Repo[S, P]) Read(ctx context.Context, id string, atLeast uint64, fn func(s *S, v events.Version) error) error {
	if !validAggregateID(id) {
		var zero S
		return fn(&zero, events.Version{})
	}
	e := r.entry(id)
	defer e.mu.Unlock()
	if err := r.current(ctx, id, e, atLeast); err != nil {
		return err
	}
	return fn(e.state, e.version)
}

// Cloner is a state that holds pointers, maps or slices the fold changes in place: Get hands out a copy that the
// fold's later changes do not reach.
type Cloner[S any] interface {
	Clone() S
}

// Get returns a copy of the aggregate's state, which the caller may keep: deep when the state is a Cloner, else a
// plain copy (a state whose fold only replaces what it changes).
func (r *Repo[S, P]) Get(ctx context.Context, id string, atLeast uint64) (S, events.Version, error) {
	var out S
	var ver events.Version
	err := r.Read(ctx, id, atLeast, func(s *S, v events.Version) error {
		if c, ok := any(s).(Cloner[S]); ok {
			out = c.Clone()
		} else {
			out = *s
		}
		ver = v
		return nil
	})
	return out, ver, err
}

// Update brings the aggregate up to the log (as Read does), asks decide for the events to append, and appends them
// expecting the version decide saw. On a conflict (another node appended first) it reloads from the stream's leader
// and decides again. decide must be pure: it may run several times and must not change the state. No events, no
// append (and no error): the returned Appended then holds the version decided on.
func (r *Repo[S, P]) Update(ctx context.Context, id string, atLeast uint64, meta events.Meta, decide func(s *S) ([]events.Event, error)) (Appended, error) {
	if err := checkRef(r.ref(id)); err != nil {
		return Appended{}, fmt.Errorf("update: %w", err)
	}
	e := r.entry(id)
	defer e.mu.Unlock()
	// A write asked of the log's now is decided first on the state held: the append expects the held version, so
	// the log itself says whether the state was current (a conflict reloads it), and asking beforehand where the
	// aggregate ends would cost a request for nothing. A refusal or a no-op may come of what the held state lacks:
	// those are decided again on the log's now.
	held := atLeast == Fresh && e.state != nil
	if !held {
		if err := r.current(ctx, id, e, atLeast); err != nil {
			return Appended{}, err
		}
	}
	for attempt := 1; ; attempt++ {
		evs, err := decide(e.state)
		if held && (err != nil || len(evs) == 0) {
			held = false
			if err := r.current(ctx, id, e, atLeast); err != nil {
				return Appended{}, err
			}
			continue
		}
		held = false
		if err != nil || len(evs) == 0 {
			return Appended{Version: e.version}, err
		}
		res, err := r.store.Append(ctx, r.ref(id), e.version, meta, evs...)
		if err == nil {
			if !r.advance(e, res.Events) || e.version != res.Version {
				// The append was found already in the log (a retry): fold it all again next time.
				e.state = nil
			}
			return res, nil
		}
		if errors.Is(err, ErrConflict) && attempt == maxUpdateAttempts {
			// Past its retries a conflict is contention to report, as a conflict the client may retry.
			e.state = nil
			return res, &errs.Error{Code: errs.Conflict, Err: err,
				Message: "the object was changed by other requests at the same time, too often to apply this one; try again"}
		}
		if !errors.Is(err, ErrConflict) {
			e.state = nil
			return res, err
		}
		// Jittered backoff so that writers on several nodes contending on one aggregate spread out.
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return Appended{}, ctx.Err()
			case <-time.After(time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt, 5)))):
			}
		}
		if err := r.reload(ctx, id, e, atLeast, true); err != nil {
			return Appended{}, err
		}
	}
}

// Forget drops an aggregate's state from memory (a test's way to make the next use read the log).
func (r *Repo[S, P]) Forget(id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.entries, id)
}

func validAggregateID(id string) bool { return natsx.ValidToken(id) }
