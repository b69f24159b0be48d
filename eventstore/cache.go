package eventstore

import (
	"context"
	"slices"
	"sync"

	"github.com/contrailhq/contrail/events"
)

// historyCache keeps the decoded histories of recently loaded aggregates, so that loading a long-lived aggregate
// (a session with hundreds of messages, a thread) reads and decodes only what was appended since the last load
// instead of its whole history every time. It is safe across nodes: a load always reads the log after the cached
// sequence, so an event appended elsewhere is never missed.
//
// Cached envelopes are shared by every load that returns them: State.Apply must not change an event's maps or
// slices in place (states copy what they change, as they always have, since a decide may run several times).
type historyCache struct {
	mu      sync.Mutex
	max     int
	tick    uint64
	entries map[events.Ref]*cachedHistory
}

type cachedHistory struct {
	events []events.Envelope
	used   uint64
}

// WithHistoryCache keeps the histories of up to n aggregates in memory (see historyCache). Loads and updates of
// those aggregates then cost one request for what is new.
func WithHistoryCache(n int) Option {
	return func(s *Store) { s.cache = &historyCache{max: n, entries: map[events.Ref]*cachedHistory{}} }
}

// get returns a copy of the cached history of ref (nil when not cached).
func (c *historyCache) get(ref events.Ref) []events.Envelope {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[ref]
	if !ok {
		return nil
	}
	c.tick++
	e.used = c.tick
	return append([]events.Envelope(nil), e.events...)
}

// put stores a history, unless a longer one is already there (a concurrent load got further).
func (c *historyCache) put(ref events.Ref, history []events.Envelope) {
	if len(history) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[ref]; ok && len(e.events) >= len(history) {
		return
	}
	if len(c.entries) >= c.max {
		c.evict()
	}
	c.tick++
	c.entries[ref] = &cachedHistory{events: slices.Clip(history), used: c.tick}
}

// extends reports whether extend would take an append to ref that began at from.
func (c *historyCache) extends(ref events.Ref, from events.Version) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[ref]
	return ok && e.endsAt(from)
}

func (e *cachedHistory) endsAt(v events.Version) bool {
	n := len(e.events)
	return uint64(n) == v.Count && (n == 0 || e.events[n-1].Sequence == v.Seq)
}

// extend adds appended to the cached history of ref when that history ends at from. A history that ends elsewhere
// is left as it is: the next load reads what it lacks. An aggregate the cache does not hold starts no history: it
// may never be loaded through the cache (a session is folded by its repository), and decoding every append of
// it would be work for nothing.
func (c *historyCache) extend(ref events.Ref, from events.Version, appended []events.Envelope) {
	if len(appended) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[ref]; ok && e.endsAt(from) {
		// In place: put keeps a history clipped to its length, so the first append moves it to an array of the
		// cache's own, and a load that holds the old one never sees it change.
		e.events = append(e.events, appended...)
	}
}

// evict drops the least recently used quarter of the entries: amortised, so a full cache does not scan on every put.
func (c *historyCache) evict() {
	var threshold uint64
	if c.tick > uint64(c.max) {
		threshold = c.tick - uint64(c.max)*3/4
	}
	for ref, e := range c.entries {
		if e.used <= threshold {
			delete(c.entries, ref)
		}
	}
	if len(c.entries) >= c.max { // every entry recent: drop half at random (map order)
		n := 0
		for ref := range c.entries {
			if n >= c.max/2 {
				break
			}
			delete(c.entries, ref)
			n++
		}
	}
}

// loadCached is Load through the cache: the cached history and what the log holds after it.
func (s *Store) loadCached(ctx context.Context, ref events.Ref) ([]events.Envelope, error) {
	history := s.cache.get(ref)
	filter := s.names.AggregateFilter(ref.Type, ref.ID)
	var from uint64
	if n := len(history); n > 0 {
		last := history[n-1].Sequence
		// Reading on from the cached end costs the server a scan of every message appended since, by every
		// aggregate: for one whose last event is old (an assistant a run names), most of the log. The index of
		// subjects says first whether anything came after it.
		if head, ok := s.head(ctx, filter); ok && head <= last {
			return history, nil
		}
		from = last + 1
	}
	_, err := s.Read(ctx, from, func(e events.Envelope) error {
		history = append(history, e)
		return nil
	}, filter)
	if err != nil {
		return nil, err
	}
	s.cache.put(ref, history)
	return history, nil
}
