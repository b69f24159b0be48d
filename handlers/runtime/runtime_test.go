package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/internal/waittest"
)

type submitted struct {
	Job string `json:"job"`
}

func (submitted) EventType() string { return "job.submitted" }

type done struct {
	Job string `json:"job"`
}

func (done) EventType() string { return "job.done" }

type job struct{ done int }

func (j *job) Apply(e events.Envelope) {
	if _, ok := e.Event.(done); ok {
		j.done++
	}
}

type env struct {
	srv   *natstest.Server
	store *eventstore.Store
	names natsx.Names
	// retired is the runtime's Retired.
	retired []string
	// logger is the runtime's Logger, when set.
	logger *slog.Logger
	// shrinkPullsEvery is the runtime's ShrinkPullsEvery, when set.
	shrinkPullsEvery time.Duration
}

func setup(t *testing.T) *env {
	t.Helper()
	srv := natstest.Start(t)
	names, _ := natsx.NewNames("")
	l := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute, Buckets: runtime.Buckets()}
	if err := natsx.Provision(context.Background(), srv.JS, l, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(submitted{}, done{})
	return &env{srv: srv, store: eventstore.NewStore(srv.JS, names, reg), names: names}
}

// run starts a runtime (one node) with the given handlers and stops it when the test ends or stop is called.
func (e *env) run(t *testing.T, hs ...runtime.Handler) (stop func()) {
	t.Helper()
	rt, err := runtime.New(runtime.Config{
		Connect:          func() (*nats.Conn, error) { return natsx.ConnectEmbedded(e.srv.NS, "handlers") },
		JS:               e.srv.JS,
		Store:            e.store,
		Names:            e.names,
		RetryInterval:    5 * time.Millisecond,
		CloseTimeout:     5 * time.Second,
		Retired:          e.retired,
		Logger:           e.logger,
		ShrinkPullsEvery: e.shrinkPullsEvery,
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if err := rt.Add(h); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	finished := make(chan error, 1)
	go func() { finished <- rt.Run(ctx, func() { close(ready) }) }()
	select {
	case <-ready:
	case err := <-finished:
		t.Fatalf("runtime did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("runtime not running after 10s")
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-finished; err != nil {
				t.Errorf("runtime stop: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func (e *env) submit(t *testing.T, id string) events.Envelope {
	t.Helper()
	res, err := e.store.Append(context.Background(), events.Ref{Type: "job", ID: id}, events.Version{}, events.Meta{CorrelationID: "corr-" + id}, submitted{Job: id})
	if err != nil {
		t.Fatal(err)
	}
	return res.Events[0]
}

// markDone is the idempotent reaction every test handler performs: a derived event, appended once whatever the
// number of deliveries.
func (e *env) markDone(ctx context.Context, ev events.Envelope) error {
	_, err := eventstore.Update(ctx, e.store, events.Ref{Type: "job", ID: ev.AggregateID}, events.Meta{CausationID: ev.ID, CorrelationID: ev.CorrelationID},
		func(j *job) ([]events.Event, error) {
			if j.done > 0 {
				return nil, nil
			}
			return []events.Event{events.WithID(events.DeriveID(ev.ID, "done"), done{Job: ev.AggregateID})}, nil
		})
	return err
}

func (e *env) doneCount(t *testing.T, id string) int {
	t.Helper()
	history, _, err := e.store.Load(context.Background(), events.Ref{Type: "job", ID: id})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range history {
		if _, ok := ev.Event.(done); ok {
			n++
		}
	}
	return n
}

func TestFailingAfterItsEffectIsRetriedAndTheEffectHappensOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var attempts atomic.Int32
	var sawCorrelation atomic.Value
	e.run(t, runtime.Handler{
		Name: "flaky", EventTypes: []string{"job.submitted"},
		Handle: func(ctx context.Context, ev events.Envelope) error {
			sawCorrelation.Store(ev.CorrelationID)
			n := attempts.Add(1)
			if err := e.markDone(ctx, ev); err != nil {
				return err
			}
			switch n {
			case 1:
				return errors.New("lost the connection right after appending")
			case 2:
				panic("a bug on the second attempt")
			}
			return nil
		},
	})
	e.submit(t, "j1")
	waittest.Until(t, "three attempts", func() bool { return attempts.Load() >= 3 })
	time.Sleep(50 * time.Millisecond) // a fourth attempt would show now
	if n := attempts.Load(); n != 3 {
		t.Fatalf("handler ran %d times, want 3 (fail, panic, succeed)", n)
	}
	if n := e.doneCount(t, "j1"); n != 1 {
		t.Fatalf("the effect happened %d times, want exactly once", n)
	}
	if got := sawCorrelation.Load(); got != "corr-j1" {
		t.Fatalf("handler saw correlation %v", got)
	}
}

func TestPoisonEventGoesToTheDeadLetterQueueAndCanBeRedriven(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var broken atomic.Bool
	broken.Store(true)
	var attempts atomic.Int32
	e.run(t, runtime.Handler{
		Name: "picky", EventTypes: []string{"job.submitted"}, MaxAttempts: 3,
		Handle: func(ctx context.Context, ev events.Envelope) error {
			attempts.Add(1)
			if broken.Load() && ev.AggregateID == "bad" {
				return errors.New("cannot handle this one")
			}
			return e.markDone(ctx, ev)
		},
	})
	bad := e.submit(t, "bad")
	e.submit(t, "good")
	waittest.Until(t, "the good job done", func() bool { return e.doneCount(t, "good") == 1 })
	var letters []deadletter.DeadLetter
	waittest.Until(t, "a dead letter", func() bool {
		var err error
		letters, err = deadletter.List(context.Background(), e.srv.JS, e.store, e.names)
		return err == nil && len(letters) == 1
	})
	d := letters[0]
	if d.Handler != "picky" || d.EventID != bad.ID || d.EventSeq != bad.Sequence || d.EventType != "job.submitted" ||
		d.Reason == "" {
		t.Fatalf("dead letter = %+v", d)
	}
	if n := attempts.Load(); n != 4 {
		t.Fatalf("%d attempts, want 3 for the poison event and 1 for the good one", n)
	}
	if e.doneCount(t, "bad") != 0 {
		t.Fatal("the poison event had an effect")
	}

	broken.Store(false)
	if _, err := deadletter.Redrive(context.Background(), e.srv.JS, e.names, d.Seq); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the re-driven job done", func() bool { return e.doneCount(t, "bad") == 1 })
	letters, err := deadletter.List(context.Background(), e.srv.JS, e.store, e.names)
	if err != nil || len(letters) != 0 {
		t.Fatalf("dead-letter queue after re-drive: %v, %v", letters, err)
	}
	if _, err := deadletter.Redrive(context.Background(), e.srv.JS, e.names, d.Seq); !errors.Is(err, deadletter.ErrNotFound) {
		t.Fatalf("re-driving twice: %v", err)
	}
}

func TestNodesShareTheWorkAndEachEventIsHandledOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var mu sync.Mutex
	handled := map[string]int{}
	var byNode [2]atomic.Int32
	for i := range 2 {
		e.run(t, runtime.Handler{
			Name: "worker", EventTypes: []string{"job.submitted"}, Concurrency: 2,
			Handle: func(ctx context.Context, ev events.Envelope) error {
				byNode[i].Add(1)
				mu.Lock()
				handled[ev.AggregateID]++
				mu.Unlock()
				time.Sleep(2 * time.Millisecond)
				return e.markDone(ctx, ev)
			},
		})
	}
	const n = 60
	for i := range n {
		e.submit(t, "j"+string(rune('A'+i/26))+string(rune('a'+i%26)))
	}
	waittest.Until(t, "every job handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == n
	})
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for id, c := range handled {
		if c != 1 {
			t.Fatalf("job %s handled %d times", id, c)
		}
	}
	if byNode[0].Load() == 0 || byNode[1].Load() == 0 {
		t.Fatalf("work not shared: node A %d, node B %d", byNode[0].Load(), byNode[1].Load())
	}
}

func TestStopHandsBackWorkAndRestartFinishesIt(t *testing.T) {
	t.Parallel()
	e := setup(t)
	started := make(chan struct{})
	var once sync.Once
	stop := e.run(t, runtime.Handler{
		Name: "slow", EventTypes: []string{"job.submitted"},
		Handle: func(ctx context.Context, ev events.Envelope) error {
			once.Do(func() { close(started) })
			<-ctx.Done() // never finishes on its own: the stop's grace period ends it
			return ctx.Err()
		},
	})
	e.submit(t, "j1")
	<-started
	stop()
	if e.doneCount(t, "j1") != 0 {
		t.Fatal("interrupted work had an effect")
	}
	letters, _ := deadletter.List(context.Background(), e.srv.JS, e.store, e.names)
	if len(letters) != 0 {
		t.Fatalf("a stop sent work to the dead-letter queue: %+v", letters)
	}
	e.run(t, runtime.Handler{
		Name: "slow", EventTypes: []string{"job.submitted"},
		Handle: func(ctx context.Context, ev events.Envelope) error { return e.markDone(ctx, ev) },
	})
	waittest.Until(t, "the job done after the restart", func() bool { return e.doneCount(t, "j1") == 1 })
}

// TestSlowWorkSpreadsOverTheNodes: a handler whose work is slow asks for one event at a time (Prefetch 1): events
// that come one after the other while a node's worker is busy go to the other node's, not behind the busy one.
func TestSlowWorkSpreadsOverTheNodes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	var byNode [2]atomic.Int32
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	for i := range 2 {
		e.run(t, runtime.Handler{
			Name: "slow", EventTypes: []string{"job.submitted"}, Concurrency: 1, Prefetch: 1,
			Handle: e.held(&byNode[i], started, release),
		})
	}
	// Events come one after the other, as they do under light load.
	for i := range 6 {
		e.submit(t, "s"+string(rune('a'+i)))
		time.Sleep(20 * time.Millisecond)
	}
	// Two workers, one on each node, each hold one event: both start before either finishes.
	for range 2 {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d and %d events started", byNode[0].Load(), byNode[1].Load())
		}
	}
	if byNode[0].Load() != 1 || byNode[1].Load() != 1 {
		t.Fatalf("the first two events went to nodes %d/%d, want one each", byNode[0].Load(), byNode[1].Load())
	}
	close(release)
	waittest.Until(t, "every job handled", func() bool { return e.doneCount(t, "sa")+e.doneCount(t, "sf") == 2 })
}

// TestStoppingUnderLoadLosesNothing stops a node three times while events pour in and deliveries wait to be handed
// over (watermill-nats' subscriber closed its channel under such sends: a race, or a panic). After the last restart
// every job is done exactly once.
// It runs with a few workers, each with a subscription of its own, and with many, who share one.
func TestStoppingUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	for _, workers := range []int{2, 16} {
		t.Run(fmt.Sprintf("%d workers", workers), func(t *testing.T) {
			t.Parallel()
			stopUnderLoad(t, workers)
		})
	}
}

func stopUnderLoad(t *testing.T, workers int) {
	e := setup(t)
	h := runtime.Handler{
		Name: "busy", EventTypes: []string{"job.submitted"}, Concurrency: workers, Prefetch: 16,
		Handle: func(ctx context.Context, ev events.Envelope) error {
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
			return e.markDone(ctx, ev)
		},
	}
	const jobs = 300
	appended := make(chan struct{})
	go func() {
		defer close(appended)
		for i := range jobs {
			if _, err := e.store.Append(context.Background(), events.Ref{Type: "job", ID: fmt.Sprintf("l%d", i)}, events.Version{}, events.Meta{}, submitted{Job: "x"}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 3 {
		stop := e.run(t, h)
		time.Sleep(40 * time.Millisecond)
		stop()
	}
	<-appended
	e.run(t, h)
	defer func() {
		letters, err := deadletter.List(context.Background(), e.srv.JS, e.store, e.names)
		if err != nil || len(letters) != 0 {
			t.Errorf("stops sent work to the dead-letter queue: %v %+v", err, letters)
		}
	}()
	for i := range jobs {
		id := fmt.Sprintf("l%d", i)
		waittest.Until(t, "job "+id+" done", func() bool { return e.doneCount(t, id) >= 1 })
		if n := e.doneCount(t, id); n != 1 {
			t.Fatalf("job %s done %d times", id, n)
		}
	}
}

// TestManyWorkersWorkAtOnce: a handler with many workers that may hold events ahead (Prefetch above 1) shares one
// subscription per node, and still has as many events in hand at once as it has workers.
func TestManyWorkersWorkAtOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const workers = 12
	started := make(chan struct{}, workers)
	release := make(chan struct{})
	e.run(t, runtime.Handler{
		Name: "wide", EventTypes: []string{"job.submitted"}, Concurrency: workers, Prefetch: 2,
		Handle: e.held(new(atomic.Int32), started, release),
	})
	e.allInHandThenDone(t, "w", workers, started, release)
}

// allInHandThenDone submits n jobs named prefix0…, waits until all n are in hand at once (each says so on started),
// lets them finish, and waits until each is done once.
func (e *env) allInHandThenDone(t *testing.T, prefix string, n int, started <-chan struct{}, release chan<- struct{}) {
	t.Helper()
	for i := range n {
		e.submit(t, fmt.Sprintf("%s%d", prefix, i))
	}
	for i := range n {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d events in hand at once, want all", i, n)
		}
	}
	close(release)
	for i := range n {
		id := fmt.Sprintf("%s%d", prefix, i)
		waittest.Until(t, "job "+id+" done", func() bool { return e.doneCount(t, id) == 1 })
	}
}

// held is a Handle that counts and says each event it starts, and finishes it only once release is closed.
func (e *env) held(count *atomic.Int32, started chan<- struct{}, release <-chan struct{}) func(context.Context, events.Envelope) error {
	return func(ctx context.Context, ev events.Envelope) error {
		count.Add(1)
		started <- struct{}{}
		select {
		case <-release:
		case <-ctx.Done():
			return ctx.Err()
		}
		return e.markDone(ctx, ev)
	}
}

// TestSlowWorkOfManyWorkersSpreadsOverTheNodes: with Prefetch 1 a node takes an event only when one of its workers
// is free, however many workers it has: events that outnumber one node's workers start on the other's, none waits
// behind a busy node.
func TestSlowWorkOfManyWorkersSpreadsOverTheNodes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const workers = 8
	var byNode [2]atomic.Int32
	started := make(chan struct{}, 4*workers)
	release := make(chan struct{})
	for i := range 2 {
		e.run(t, runtime.Handler{
			Name: "shared", EventTypes: []string{"job.submitted"}, Concurrency: workers, Prefetch: 1,
			Handle: e.held(&byNode[i], started, release),
		})
	}
	for i := range 2 * workers {
		e.submit(t, fmt.Sprintf("n%d", i))
	}
	// Both nodes' workers together are as many as the events: every event starts.
	for range 2 * workers {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d and %d events started", byNode[0].Load(), byNode[1].Load())
		}
	}
	close(release)
	for i := range 2 * workers {
		id := fmt.Sprintf("n%d", i)
		waittest.Until(t, "job "+id+" done", func() bool { return e.doneCount(t, id) == 1 })
	}
}

// A handler that no longer exists leaves no consumer behind, where the events it would have taken would wait for
// ever; a retired name never used, or used again by a handler, is left alone.
func TestARetiredHandlersConsumerIsDeleted(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	for _, name := range []string{"old", "kept"} { // as an older build left them
		if _, err := e.srv.JS.CreateOrUpdateConsumer(ctx, e.names.EventsStream(), jetstream.ConsumerConfig{
			Durable: e.names.Consumer("h", name), AckPolicy: jetstream.AckExplicitPolicy,
			FilterSubjects: []string{e.names.TypeFilter("job.submitted")}}); err != nil {
			t.Fatal(err)
		}
	}
	e.retired = []string{"old", "never_used", "kept"}
	e.run(t, runtime.Handler{Name: "kept", EventTypes: []string{"job.submitted"},
		Handle: func(context.Context, events.Envelope) error { return nil }})
	// Retiring runs beside the handlers' start (Runtime.Run), so it may end after the runtime says it is ready.
	waittest.Until(t, "the retired handler's consumer deleted", func() bool {
		_, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "old"))
		return errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	if _, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "kept")); err != nil {
		t.Fatalf("a running handler's consumer: %v", err)
	}
}

// A retired handler's consumer may hold an event nobody handled when the build that had the handler stopped. The
// handler that took its work over reads the log from where its own consumer was, past that event: the runtime hands
// the event to it before it deletes the retired consumer, so the work is done once, not lost.
func TestARetiredHandlersLeftoverEventsGoToTheHandlerThatTookItsWork(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	// The older build: "old" takes submissions (and is stopped before it handles this one); "new" takes only done
	// events.
	if _, err := e.srv.JS.CreateOrUpdateConsumer(ctx, e.names.EventsStream(), jetstream.ConsumerConfig{
		Durable: e.names.Consumer("h", "old"), AckPolicy: jetstream.AckExplicitPolicy,
		FilterSubjects: []string{e.names.TypeFilter("job.submitted")}}); err != nil {
		t.Fatal(err)
	}
	var seen atomic.Int32
	stop := e.run(t, runtime.Handler{Name: "new", EventTypes: []string{"job.done"},
		Handle: func(context.Context, events.Envelope) error { seen.Add(1); return nil }})
	e.submit(t, "left")
	if _, err := e.store.Append(ctx, events.Ref{Type: "job", ID: "other"}, events.Version{}, events.Meta{}, done{Job: "other"}); err != nil {
		t.Fatal(err)
	}
	waittest.Until(t, "the older build's new handler past the submission", func() bool { return seen.Load() == 1 })
	stop()

	// The newer build: "new" takes submissions too, and "old" is retired.
	e.retired = []string{"old"}
	var handled atomic.Int32
	e.run(t, runtime.Handler{Name: "new", EventTypes: []string{"job.submitted", "job.done"},
		Handle: func(ctx context.Context, ev events.Envelope) error {
			if _, ok := ev.Event.(submitted); ok {
				handled.Add(1)
				return e.markDone(ctx, ev)
			}
			return nil
		}})
	waittest.Until(t, "the leftover submission handled", func() bool { return e.doneCount(t, "left") == 1 })
	waittest.Until(t, "the retired consumer deleted", func() bool {
		_, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "old"))
		return errors.Is(err, jetstream.ErrConsumerNotFound)
	})
	time.Sleep(100 * time.Millisecond) // a second handling would show itself
	if n := handled.Load(); n != 1 {
		t.Fatalf("the leftover submission was handled %d times", n)
	}
}

// A renamed handler's consumer goes on where the old one was: what the old one left unhandled is handled, what it
// handled is not handed out again, and the old consumer is gone.
func TestARenamedHandlersConsumerTakesOverFromItsOldOne(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	var mu sync.Mutex
	seen := map[string]int{}
	handle := func(ctx context.Context, ev events.Envelope) error {
		mu.Lock()
		seen[ev.AggregateID]++
		mu.Unlock()
		return e.markDone(ctx, ev)
	}
	// The older build handles "before" under the old name, and stops before "after" is submitted.
	stop := e.run(t, runtime.Handler{Name: "old", EventTypes: []string{"job.submitted"}, Handle: handle})
	e.submit(t, "before")
	waittest.Until(t, "the old handler's work done", func() bool { return e.doneCount(t, "before") == 1 })
	stop()
	e.submit(t, "after")

	// The newer build names the handler for what it serves.
	e.run(t, runtime.Handler{Name: "renamed", Formerly: "old", EventTypes: []string{"job.submitted"}, Handle: handle})
	waittest.Until(t, "the work left by the old consumer done", func() bool { return e.doneCount(t, "after") == 1 })
	if _, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "old")); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("the old consumer after the takeover: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["before"] != 1 {
		t.Fatalf("the event the old consumer had handled was handled %d times", seen["before"])
	}
}

// A handler whose many workers each ask for an event only when free is one subscription on its consumer, which the
// node makes once: not once per worker, each a request the server answers by writing the consumer's state to disk
// (what made a node's start slow). Its workers still all work at once.
func TestAHandlersConsumerIsMadeOncePerNodeWhateverItsWorkers(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const workers = 16
	apiCalls := func() uint64 {
		info, err := e.srv.JS.AccountInfo(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return info.API.Total
	}
	before := apiCalls()
	started := make(chan struct{}, workers)
	release := make(chan struct{})
	e.run(t, runtime.Handler{
		Name: "wide", EventTypes: []string{"job.submitted"}, Concurrency: workers, Prefetch: 1,
		Handle: e.held(new(atomic.Int32), started, release),
	})
	// The handler's consumer of the log (asked for as it is, found not to exist, its handler's mark looked up, and
	// made), its consumer of re-driven events, and this count's own request.
	if calls := apiCalls() - before; calls > 5 {
		t.Errorf("%d JetStream API requests to start one handler of %d workers, want 5 at most", calls, workers)
	}
	e.allInHandThenDone(t, "w", workers, started, release)
}

// TestPullsGrowWithTheWorkAndEbbAfter: a handler whose workers each pull for themselves (Prefetch 1) asks the server
// for an event on a few pulls only while idle, not one per worker; a burst grows its pulls until every worker has
// an event in hand, and once the work is done the surplus goes again.
func TestPullsGrowWithTheWorkAndEbbAfter(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.shrinkPullsEvery = 50 * time.Millisecond
	const workers = 24
	started := make(chan struct{}, workers)
	release := make(chan struct{})
	e.run(t, runtime.Handler{
		Name: "elastic", EventTypes: []string{"job.submitted"}, Concurrency: workers, Prefetch: 1,
		Handle: e.held(new(atomic.Int32), started, release),
	})
	ctx := context.Background()
	cons, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "elastic"))
	if err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		info, err := cons.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.NumWaiting
	}
	// The pulls are made as the runtime starts: each is a waiting request on the server once it reached it.
	waittest.Until(t, "a pull waiting while idle", func() bool { return waiting() > 0 })
	if n := waiting(); n > 2 {
		t.Fatalf("an idle handler of %d workers has %d pulls waiting, want 2 at most", workers, n)
	}
	e.allInHandThenDone(t, "e", workers, started, release)
	waittest.Until(t, "the pulls to ebb once the work is done", func() bool { return waiting() <= 2 })
}

// Two nodes of the newer build start at once on a log whose handler was renamed, as in a rolling upgrade: each takes
// the old consumer over. The second may look for the new consumer before the first makes it and for the old one
// after the first deletes it; it then asks for a consumer reading the log from the start, which the server refuses
// (a consumer's start cannot change). The node works the takeover out again and tries again, so both start, and the
// new consumer starts where the old one's settled deliveries ended. The race comes about in a few rounds of sixty;
// each round has names of its own.
func TestTwoNodesTakingOverARenamedHandlersConsumerAtOnceBothStart(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	for i := range 3 {
		e.submit(t, fmt.Sprintf("j%d", i))
	}
	conflicts := &retries{}
	const rounds = 60
	for round := range rounds {
		old, renamed := fmt.Sprintf("old%d", round), fmt.Sprintf("renamed%d", round)
		// The older build's consumer (its durable name, filter and explicit acks) has settled the first event.
		oc, err := e.srv.JS.CreateOrUpdateConsumer(ctx, e.names.EventsStream(), jetstream.ConsumerConfig{
			Durable: e.names.Consumer("h", old), AckPolicy: jetstream.AckExplicitPolicy,
			FilterSubjects: []string{e.names.TypeFilter("job.submitted")},
		})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := oc.Fetch(1)
		if err != nil {
			t.Fatal(err)
		}
		for m := range batch.Messages() {
			if err := m.DoubleAck(ctx); err != nil {
				t.Fatal(err)
			}
		}
		info, err := oc.Info(ctx)
		if err != nil || info.AckFloor.Stream == 0 {
			t.Fatalf("round %d: the old consumer settled nothing (%v)", round, err)
		}
		floor := info.AckFloor.Stream

		start := make(chan struct{})
		nodes, cancel := context.WithCancel(ctx)
		ready := make(chan struct{}, 2)
		finished := make(chan error, 2)
		for range 2 {
			rt, err := runtime.New(runtime.Config{
				Connect: func() (*nats.Conn, error) { return natsx.ConnectEmbedded(e.srv.NS, "handlers") },
				JS:      e.srv.JS, Store: e.store, Names: e.names, CloseTimeout: 5 * time.Second,
				Logger: slog.New(conflicts),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := rt.Add(runtime.Handler{Name: renamed, Formerly: old, EventTypes: []string{"job.submitted"},
				Handle: func(context.Context, events.Envelope) error { return nil }}); err != nil {
				t.Fatal(err)
			}
			go func() {
				<-start
				finished <- rt.Run(nodes, func() { ready <- struct{}{} })
			}()
		}
		close(start)
		failed := 0
		for range 2 {
			select {
			case <-ready:
			case err := <-finished:
				failed++
				t.Errorf("round %d: a node did not start: %v", round, err)
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: the nodes not running after 30s", round)
			}
		}
		cancel()
		for range 2 - failed {
			if err := <-finished; err != nil {
				t.Errorf("round %d: stop: %v", round, err)
			}
		}
		if failed > 0 {
			continue
		}
		cur, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", renamed))
		if err != nil {
			t.Fatalf("round %d: the new consumer: %v", round, err)
		}
		c := cur.CachedInfo().Config
		if c.DeliverPolicy != jetstream.DeliverByStartSequencePolicy || c.OptStartSeq != floor+1 {
			t.Errorf("round %d: the new consumer starts %v at %d, want at %d, after the old one's ack floor",
				round, c.DeliverPolicy, c.OptStartSeq, floor+1)
		}
		_, err = e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", old))
		if !errors.Is(err, jetstream.ErrConsumerNotFound) {
			t.Errorf("round %d: the old consumer after the takeover: %v", round, err)
		}
	}
	// How often the race came about: each is a start that met the other node's takeover and tried again.
	t.Logf("%d starts of %d rounds tried again: %q", len(conflicts.seen()), rounds, conflicts.seen())
}

// retries records the steps of a node's start that failed and were tried again.
type retries struct {
	mu   sync.Mutex
	errs []string
}

func (r *retries) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.errs...)
}

func (r *retries) Enabled(context.Context, slog.Level) bool { return true }
func (r *retries) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *retries) WithGroup(string) slog.Handler            { return r }
func (r *retries) Handle(_ context.Context, rec slog.Record) error {
	if rec.Message != "the cluster is not ready yet; trying again" {
		return nil
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "err" {
			r.mu.Lock()
			r.errs = append(r.errs, a.Value.String())
			r.mu.Unlock()
		}
		return true
	})
	return nil
}

// In a rolling upgrade a node of the older build may restart after a node of the newer one took a renamed handler's
// consumer over and deleted it. Made afresh, the old consumer would read the log from its start and handle it all
// again; the newer build marked it taken over, so the older node does not make it, does not run the handler, and
// says so once. The newer build goes on.
func TestAnOlderBuildDoesNotMakeAgainTheConsumerOfARenamedHandler(t *testing.T) {
	t.Parallel()
	olderBuildMeetsTheNewer(t, runtime.Handler{Name: "y", Formerly: "x"}, "y")
}

// The same for a handler the newer build retired: the older node does not make its consumer again, which would
// also have the newer build's next retiring hand the whole log to the running handlers.
func TestAnOlderBuildDoesNotMakeAgainTheConsumerOfARetiredHandler(t *testing.T) {
	t.Parallel()
	olderBuildMeetsTheNewer(t, runtime.Handler{Name: "new"}, "(retired)")
}

// olderBuildMeetsTheNewer runs build A (handler "x"), then build B (newer, its handler given) beside a restarted
// node of build A. B's handler retires "x" unless it was formerly "x"; by is what A's node says took "x" over.
func olderBuildMeetsTheNewer(t *testing.T, newer runtime.Handler, by string) {
	e := setup(t)
	ctx := context.Background()
	xConsumer := func() error {
		_, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", "x"))
		return err
	}
	// Build A handles the first events with "x", and stops.
	stop := e.run(t, runtime.Handler{Name: "x", EventTypes: []string{"job.submitted"}, Handle: e.markDone})
	for i := range 3 {
		e.submit(t, fmt.Sprintf("a%d", i))
	}
	for i := range 3 {
		waittest.Until(t, "build A's work done", func() bool { return e.doneCount(t, fmt.Sprintf("a%d", i)) == 1 })
	}
	stop()

	// Build B takes "x" over, or retires it, and deletes its consumer.
	if newer.Formerly == "" {
		e.retired = []string{"x"}
	}
	newer.EventTypes, newer.Handle = []string{"job.submitted"}, e.markDone
	e.run(t, newer)
	waittest.Until(t, "the consumer of x deleted", func() bool { return errors.Is(xConsumer(), jetstream.ErrConsumerNotFound) })

	// A node of build A restarts.
	e.retired = nil
	logs := &logged{}
	e.logger = slog.New(logs)
	var seenByA atomic.Int32
	e.run(t, runtime.Handler{Name: "x", EventTypes: []string{"job.submitted"},
		Handle: func(context.Context, events.Envelope) error { seenByA.Add(1); return nil }})
	if err := xConsumer(); !errors.Is(err, jetstream.ErrConsumerNotFound) {
		t.Fatalf("the consumer of x after build A's node started: %v, want it not made", err)
	}
	e.submit(t, "b0")
	waittest.Until(t, "build B's handler handles a new event", func() bool { return e.doneCount(t, "b0") == 1 })
	if n := seenByA.Load(); n != 0 {
		t.Fatalf("build A's node handled %d events, want none", n)
	}
	said := logs.with("not running a handler")
	want := "handler=x taken_over_by=" + by
	if len(said) != 1 || !strings.Contains(said[0], want) {
		t.Fatalf("build A's node said %q, want once %q", said, want)
	}
}

// logged records what a runtime logs at Info and above, a line each: the message, then key=value.
type logged struct {
	mu    sync.Mutex
	lines []string
}

// with lists the lines that hold s.
func (l *logged) with(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

func (l *logged) Enabled(_ context.Context, level slog.Level) bool { return level >= slog.LevelInfo }
func (l *logged) WithAttrs([]slog.Attr) slog.Handler               { return l }
func (l *logged) WithGroup(string) slog.Handler                    { return l }
func (l *logged) Handle(_ context.Context, rec slog.Record) error {
	line := rec.Message
	rec.Attrs(func(a slog.Attr) bool {
		line += " " + a.Key + "=" + a.Value.String()
		return true
	})
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
	return nil
}

// A renamed handler may be renamed again. A node of the middle build ("y", formerly "x") that restarts once the
// newest build ("z", formerly "y") took "y" over neither makes "y" again from the log's start nor touches "x": it
// does not run "y".
func TestAMiddleBuildDoesNotMakeAgainARenamedHandlersConsumerThatWasRenamedAgain(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	e.submit(t, "a0")
	e.run(t, runtime.Handler{Name: "z", Formerly: "y", EventTypes: []string{"job.submitted"}, Handle: e.markDone})
	waittest.Until(t, "the newest build's work done", func() bool { return e.doneCount(t, "a0") == 1 })
	var seen atomic.Int32
	e.run(t, runtime.Handler{Name: "y", Formerly: "x", EventTypes: []string{"job.submitted"},
		Handle: func(context.Context, events.Envelope) error { seen.Add(1); return nil }})
	for _, name := range []string{"x", "y"} {
		if _, err := e.srv.JS.Consumer(ctx, e.names.EventsStream(), e.names.Consumer("h", name)); !errors.Is(err, jetstream.ErrConsumerNotFound) {
			t.Fatalf("the consumer of %s after the middle build's node started: %v, want none", name, err)
		}
	}
	e.submit(t, "b0")
	waittest.Until(t, "the newest build's handler handles a new event", func() bool { return e.doneCount(t, "b0") == 1 })
	if n := seen.Load(); n != 0 {
		t.Fatalf("the middle build's node handled %d events, want none", n)
	}
}

// A former or retired name is a key of the marks and part of a consumer's name: one that could not be a handler's
// name is refused, naming it.
func TestABadFormerOrRetiredNameIsRefused(t *testing.T) {
	t.Parallel()
	if _, err := runtime.New(runtime.Config{Retired: []string{"ok", "a.b"}}); err == nil || !strings.Contains(err.Error(), `"a.b"`) {
		t.Fatalf("a retired name with a dot: %v, want it refused by name", err)
	}
	rt, err := runtime.New(runtime.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, former := range []string{"a.b", "x>", "same"} {
		err := rt.Add(runtime.Handler{Name: "same", Formerly: former, EventTypes: []string{"job.submitted"},
			Handle: func(context.Context, events.Envelope) error { return nil }})
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("former name %q", former)) {
			t.Errorf("former name %q: %v, want it refused by name", former, err)
		}
	}
}
