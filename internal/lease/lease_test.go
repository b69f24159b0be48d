package lease_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// ttl is short so that a lease expires within a test, and long enough that a loaded machine still renews in time
// (a holder renews every ttl/3).
const ttl = 2 * time.Second

// wait bounds every wait for an outcome; it is not what the tests check. It is shorter than the 30 s a holder keeps
// a lease through a silent bucket (maxSilence), so that a holder which goes on through silence fails.
const wait = 20 * time.Second

const name = "projection.runs"

// TestOneHolderAtATimeAndAStoppedHolderReleases: of two contenders started together, one works at a time; when the
// holder stops, its lease is deleted at once (not left to expire) and the other contender takes it. Three rounds.
func TestOneHolderAtATimeAndAStoppedHolderReleases(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	b := newBoard()
	kv := bucket(t, srv)
	stops := map[string]func(){}
	for _, h := range []string{"node-a", "node-b"} {
		stops[h] = compete(t, srv, h, b, nil)
	}
	w := watch(t, kv)
	for round := range 3 {
		holder := b.waitOne(t)
		// Two renewals: by then the other contender, started before, has tried to take the lease too (it tries
		// every ttl/3), and it has not written the key.
		w.renewals(t, kv, holder, 2)
		stops[holder]()
		// Before any renewal could lapse: the key is gone or already the other's, never left to expire.
		if got, err := lease.Holder(t.Context(), kv, name); err != nil || got == holder {
			t.Fatalf("round %d: after %s stopped the lease is held by %q (err %v); a stopped holder releases it",
				round, holder, got, err)
		}
		other := b.waitFor(t, fmt.Sprintf("round %d: the other contender takes the lease %s released", round, holder),
			func(in map[string]bool) (string, bool) {
				for h := range in {
					return h, h != holder
				}
				return "", false
			})
		if got, err := lease.Holder(t.Context(), kv, name); err != nil || got != other {
			t.Fatalf("round %d: %s works but the lease says %q (err %v)", round, other, got, err)
		}
		stops[holder] = compete(t, srv, holder, b, nil)
	}
	if o := b.overlaps(); len(o) > 0 {
		t.Fatalf("two holders worked at once: %v", o)
	}
}

// TestSilentHolderLosesTheLease: a holder whose node falls silent (its connection goes: no renewal, no release) stops
// its work once its lease may have expired, and the other contender takes the lease after the key expires.
func TestSilentHolderLosesTheLease(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	b := newBoard()
	bucket(t, srv)
	nc := srv.Connect(t)
	compete(t, srv, "node-a", b, func(c *contender) { c.nc = nc })
	b.waitFor(t, "node-a holds the lease", func(in map[string]bool) (string, bool) { return "", in["node-a"] })
	compete(t, srv, "node-b", b, nil)

	nc.Close()
	b.waitFor(t, "the silent node-a stops its work", func(in map[string]bool) (string, bool) { return "", !in["node-a"] })
	b.waitFor(t, "node-b takes the expired lease", func(in map[string]bool) (string, bool) { return "", in["node-b"] })
}

// TestRenewalMeetingAnotherHoldersKeyEnds: when another holder has written the key (it took the lease, say, while
// this one's renewals went unanswered), this holder's next renewal ends its work at once, without trying again, and
// leaves the other's key alone: it neither overwrites it nor deletes it on release.
func TestRenewalMeetingAnotherHoldersKeyEnds(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	b := newBoard()
	kv := bucket(t, srv)
	logs := &records{}
	stop := compete(t, srv, "node-a", b, func(c *contender) { c.logger = slog.New(logs) })
	b.waitFor(t, "node-a holds the lease", func(in map[string]bool) (string, bool) { return "", in["node-a"] })

	w := watch(t, kv)
	// The other holder keeps its key alive for as long as the test looks, so node-a cannot take it again lawfully.
	ictx, istop := context.WithCancel(t.Context())
	idone := make(chan struct{})
	took, err := kv.Put(t.Context(), name, []byte("node-x"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(idone)
		for {
			select {
			case <-ictx.Done():
				return
			case <-time.After(ttl / 4):
			}
			_, _ = kv.Put(ictx, name, []byte("node-x"))
		}
	}()

	b.waitFor(t, "node-a stops its work", func(in map[string]bool) (string, bool) { return "", !in["node-a"] })
	stop()
	istop()
	<-idone
	if _, err := kv.Put(t.Context(), name, []byte("end")); err != nil {
		t.Fatal(err)
	}
	for _, e := range w.until(t, "end") {
		if e.Revision() < took {
			continue // node-a's renewals before node-x took the key
		}
		if e.Operation() != jetstream.KeyValuePut || string(e.Value()) != "node-x" {
			t.Errorf("after node-x took the key: %v %q at revision %d; node-a must leave another holder's key alone",
				e.Operation(), e.Value(), e.Revision())
		}
	}
	msgs := logs.messages()
	if !slices.Contains(msgs, "lease lost") {
		t.Errorf("node-a logged %q; want it to say the lease was lost", msgs)
	}
	if slices.Contains(msgs, "lease: renewal failed; trying again") {
		t.Errorf("node-a logged %q; a renewal refused because another holder wrote the key is a lost lease, "+
			"not one to try again", msgs)
	}
}

// TestRenewalReclaimsItsOwnKey: a renewal refused for a wrong revision while nobody else holds the key is not a lost
// lease: the key was deleted (it expired while its bucket elected a leader), or it is at a later revision of this
// holder's own (a renewal went in but its answer was lost). The holder writes the key again and its work goes on.
func TestRenewalReclaimsItsOwnKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		what string
		// touch writes the key behind node-a's back, and returns the revision it wrote (0 for a delete: node-a
		// never deletes the key while it holds it).
		touch func(context.Context, jetstream.KeyValue) (uint64, error)
	}{
		{"deleted", func(ctx context.Context, kv jetstream.KeyValue) (uint64, error) { return 0, kv.Delete(ctx, name) }},
		{"rewritten with its own name", func(ctx context.Context, kv jetstream.KeyValue) (uint64, error) {
			return kv.Put(ctx, name, []byte("node-a"))
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			t.Parallel()
			srv := natstest.Start(t)
			b := newBoard()
			kv := bucket(t, srv)
			compete(t, srv, "node-a", b, nil)
			b.waitFor(t, "node-a holds the lease", func(in map[string]bool) (string, bool) { return "", in["node-a"] })

			w := watch(t, kv)
			rev, err := tc.touch(t.Context(), kv)
			if err != nil {
				t.Fatal(err)
			}
			// The touch itself (after node-a's renewals, if any came in between), then the first renewal after it:
			// node-a's, refused and reclaimed. A holder that gave the lease up would end its work before it could
			// write the key again.
			touched := w.next(t)
			for (rev == 0 && touched.Operation() == jetstream.KeyValuePut) || (rev != 0 && touched.Revision() != rev) {
				touched = w.next(t)
			}
			renewed := w.next(t)
			if renewed.Operation() != jetstream.KeyValuePut || string(renewed.Value()) != "node-a" ||
				renewed.Revision() <= touched.Revision() {
				t.Fatalf("after the key was %s: %v %q; want node-a to write it again",
					tc.what, renewed.Operation(), renewed.Value())
			}
			if n := b.entries("node-a"); n != 1 || !b.holding("node-a") {
				t.Fatalf("node-a started its work %d times and holds %v; want its first work to go on",
					n, b.holding("node-a"))
			}
		})
	}
}

// TestStopDuringRenewalReleases: a holder stopped while its renewal is on its way to the bucket still releases the
// lease, though the renewal's answer never reaches it. The test stops the holder the moment the renewal reaches the
// server (a plain subscriber on the key's subject sees it before the stream answers), round after round.
func TestStopDuringRenewalReleases(t *testing.T) {
	t.Parallel()
	const short = 300 * time.Millisecond
	srv := natstest.Start(t)
	b := newBoard()
	kv := bucketTTL(t, srv, short)
	const rounds = 20
	held := 0
	for round := range rounds {
		// A lease of its own each round: its first write, the take, is over no revision, as no earlier round's
		// release left a marker in its key.
		key := fmt.Sprintf("round%d", round)
		writes, err := srv.NC.SubscribeSync("$KV." + lease.Bucket + "." + key)
		if err != nil {
			t.Fatal(err)
		}
		stop := compete(t, srv, "node-a", b, func(c *contender) { c.ttl, c.lease = short, key })
		b.waitFor(t, "node-a holds the lease", func(in map[string]bool) (string, bool) { return "", in["node-a"] })
		for {
			m, err := writes.NextMsg(wait)
			if err != nil {
				t.Fatalf("round %d: no renewal: %v", round, err)
			}
			// A renewal: node-a's value, written over a revision (a take writes over none, a release deletes).
			if string(m.Data) == "node-a" && m.Header.Get(jetstream.ExpectedLastSubjSeqHeader) != "0" {
				break
			}
		}
		stop()
		_ = writes.Unsubscribe()
		if got, err := lease.Holder(t.Context(), kv, key); err != nil || got == "node-a" {
			held++
			t.Logf("round %d: after node-a stopped, the lease is held by %q (err %v)", round, got, err)
		}
	}
	if held > 0 {
		t.Errorf("%d rounds of %d left the lease held by the stopped node; a stopped holder releases it", held, rounds)
	}
}

// bucket makes the lease bucket on srv, its values expiring after ttl, and opens it on srv's connection.
func bucket(t *testing.T, srv *natstest.Server) jetstream.KeyValue {
	t.Helper()
	return bucketTTL(t, srv, ttl)
}

// bucketTTL makes the lease bucket on srv, its values expiring after ttl, and opens it on srv's connection.
func bucketTTL(t *testing.T, srv *natstest.Server, ttl time.Duration) jetstream.KeyValue {
	t.Helper()
	kv, err := srv.JS.CreateKeyValue(t.Context(),
		jetstream.KeyValueConfig{Bucket: lease.Bucket, TTL: ttl, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// kvOn opens the lease bucket on nc.
func kvOn(t *testing.T, nc *nats.Conn) jetstream.KeyValue {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), lease.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// contender is one node competing for the lease.
type contender struct {
	nc     *nats.Conn // its node's connection; a fresh one unless set
	logger *slog.Logger
	ttl    time.Duration // the bucket's TTL; ttl unless set
	lease  string        // the lease's name; name unless set
}

// compete runs lease.Run for holder on its own connection to srv, its work marking holder in b while it holds the
// lease. The returned stop ends Run and waits for it to return.
func compete(t *testing.T, srv *natstest.Server, holder string, b *board, opt func(*contender)) (stop func()) {
	t.Helper()
	c := &contender{logger: slog.New(slog.DiscardHandler), ttl: ttl, lease: name}
	if opt != nil {
		opt(c)
	}
	if c.nc == nil {
		c.nc = srv.Connect(t)
	}
	kv := kvOn(t, c.nc)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		lease.Run(ctx, kv, c.lease, holder, c.ttl, c.logger, func(ctx context.Context) {
			b.enter(holder)
			defer b.leave(holder)
			<-ctx.Done()
		})
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// board records which holders are at work, how often each started, and every moment two worked at once.
type board struct {
	mu      sync.Mutex
	in      map[string]bool
	started map[string]int
	both    []string
	changed chan struct{} // closed at each change
}

func newBoard() *board {
	return &board{in: map[string]bool{}, started: map[string]int{}, changed: make(chan struct{})}
}

func (b *board) enter(h string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for o := range b.in {
		b.both = append(b.both, o+" and "+h)
	}
	b.in[h] = true
	b.started[h]++
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *board) leave(h string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.in, h)
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *board) overlaps() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.both...)
}

func (b *board) entries(h string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.started[h]
}

func (b *board) holding(h string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.in[h]
}

// waitFor waits until ok says the holders at work are as wanted, and returns what it found.
func (b *board) waitFor(t *testing.T, what string, ok func(in map[string]bool) (string, bool)) string {
	t.Helper()
	deadline := time.After(wait)
	for {
		b.mu.Lock()
		found, done := ok(b.in)
		changed := b.changed
		b.mu.Unlock()
		if done {
			return found
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("%s: not after %v", what, wait)
		}
	}
}

// waitOne waits until one holder is at work and returns it.
func (b *board) waitOne(t *testing.T) string {
	t.Helper()
	return b.waitFor(t, "one contender holds the lease", func(in map[string]bool) (string, bool) {
		for h := range in {
			return h, len(in) == 1
		}
		return "", false
	})
}

// watcher sees every later write of the lease key.
type watcher struct{ w jetstream.KeyWatcher }

func watch(t *testing.T, kv jetstream.KeyValue) *watcher {
	t.Helper()
	w, err := kv.Watch(t.Context(), name, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })
	return &watcher{w: w}
}

func (w *watcher) next(t *testing.T) jetstream.KeyValueEntry {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case e := <-w.w.Updates():
			if e != nil {
				return e
			}
		case <-deadline:
			t.Fatalf("no write of the lease key after %v", wait)
		}
	}
}

// renewals waits until holder, which holds the lease now, has written the key n times more, and fails if anybody
// else writes it meanwhile.
func (w *watcher) renewals(t *testing.T, kv jetstream.KeyValue, holder string, n int) {
	t.Helper()
	now, err := kv.Get(t.Context(), name)
	if err != nil || string(now.Value()) != holder {
		t.Fatalf("%s works but the lease is not its own (err %v)", holder, err)
	}
	for n > 0 {
		e := w.next(t)
		if e.Revision() <= now.Revision() {
			continue
		}
		if e.Operation() != jetstream.KeyValuePut || string(e.Value()) != holder {
			t.Fatalf("while %s held the lease: %v %q", holder, e.Operation(), e.Value())
		}
		n--
	}
}

// until returns the writes before the one with value last.
func (w *watcher) until(t *testing.T, last string) []jetstream.KeyValueEntry {
	t.Helper()
	var seen []jetstream.KeyValueEntry
	for {
		e := w.next(t)
		if string(e.Value()) == last {
			return seen
		}
		seen = append(seen, e)
	}
}

// records keeps the messages of the records logged to it.
type records struct {
	mu   sync.Mutex
	msgs []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, rec.Message)
	return nil
}

func (r *records) messages() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}
