package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/metrics"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Config wires a Runner.
type Config struct {
	JS     jetstream.JetStream
	Store  *eventstore.Store
	Layout natsx.Layout
	// Holder names this node in leases.
	Holder string
	// LeaseTTL is how long a dead node keeps a projection before another takes it over.
	LeaseTTL time.Duration
	// BatchSize bounds how many events one write to the bucket covers.
	BatchSize int
	// ReadWait bounds how long Shows waits for the read models to show an append (default 5s).
	ReadWait time.Duration
	Metrics  *metrics.Metrics
	Logger   *slog.Logger
}

// Runner keeps projections current and serves reads of their buckets.
type Runner struct {
	cfg    Config
	names  natsx.Names
	projs  map[string]*state
	order  []string
	meta   jetstream.KeyValue
	leases jetstream.KeyValue
	wg     sync.WaitGroup
	cancel context.CancelFunc
	// tip is the log's last sequence, shared by the readers' watchdogs.
	tip *natsx.Tip

	streamMu sync.Mutex
	stream   jetstream.Stream // the log's stream handle, once looked up (eventsStream)
}

// generation is what the meta bucket records per projection: which bucket is current.
type generation struct {
	Generation int `json:"generation"`
}

const metaBucket = "projections"

// leasesBucket holds the projection leases; its TTL is the lease time.
const leasesBucket = "projection_leases"

// NewRunner prepares a runner for the given projections. Start makes it run.
func NewRunner(cfg Config, ps ...Projection) *Runner {
	if cfg.LeaseTTL == 0 {
		cfg.LeaseTTL = lease.DefaultTTL
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = 512
	}
	if cfg.ReadWait == 0 {
		cfg.ReadWait = 5 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	r := &Runner{cfg: cfg, names: cfg.Layout.Names, projs: map[string]*state{}}
	r.tip = natsx.NewTip(cfg.JS, r.names.EventsStream(), stallAfter/2)
	for _, p := range ps {
		var filters []string
		for _, t := range p.EventTypes() {
			filters = append(filters, r.names.TypeFilter(t))
		}
		r.projs[p.Name()] = &state{p: p, key: storageKey(p), filters: filters, match: natsx.NewSubjectFilter(filters...),
			changed: make(chan struct{})}
		r.order = append(r.order, p.Name())
	}
	return r
}

// Buckets are the KV buckets the runner needs besides the read models themselves.
func (r *Runner) Buckets() []natsx.BucketSpec {
	return []natsx.BucketSpec{
		{Name: metaBucket, Description: "Which bucket generation each projection reads and writes"},
		{Name: leasesBucket, Description: "Which node writes each projection", TTL: r.cfg.LeaseTTL},
	}
}

// Start opens every projection's current bucket and starts keeping them current. It returns once reads can be
// served; catching up continues in the background (Ready says when it is done).
//
// On a fresh cluster, nodes start together while streams elect their leaders: each step is retried until it
// succeeds or a deadline passes (natsx.Retry).
func (r *Runner) Start(ctx context.Context) error {
	err := natsx.Retry(ctx, r.cfg.Logger, "open the projections' buckets", func(ctx context.Context) error {
		for _, b := range r.Buckets() {
			if err := natsx.EnsureBucket(ctx, r.cfg.JS, r.cfg.Layout, b); err != nil {
				return err
			}
		}
		var err error
		if r.meta, err = r.cfg.JS.KeyValue(ctx, r.names.Bucket(metaBucket)); err != nil {
			return fmt.Errorf("open projections meta bucket: %w", err)
		}
		if r.leases, err = r.cfg.JS.KeyValue(ctx, r.names.Bucket(leasesBucket)); err != nil {
			return fmt.Errorf("open projection leases: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// The read models open side by side: on a new data dir each is a bucket to create, whose store the server
	// makes and syncs to disk, and one after the other they were a large part of a node's start.
	var buckets []string
	for b := range r.cfg.JS.KeyValueStoreNames(ctx).Name() {
		buckets = append(buckets, b)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, name := range r.order {
		st := r.projs[name]
		g.Go(func() error {
			return natsx.Retry(gctx, r.cfg.Logger, "open read model "+name, func(ctx context.Context) error {
				gen, err := r.currentGeneration(ctx, st.key)
				if err != nil {
					return err
				}
				kv, err := r.ensureGenerationBucket(ctx, st.key, gen)
				if err != nil {
					return err
				}
				cp, err := newWriter(r.cfg.JS, kv, st.p, r.cfg.Logger).checkpoint(ctx)
				if err != nil {
					return err
				}
				st.setGeneration(gen, kv)
				st.setApplied(cp)
				r.dropOldGenerations(ctx, buckets, st.key, gen)
				return nil
			})
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.watchGenerations(runCtx)
	}()
	for _, name := range r.order {
		st := r.projs[name]
		r.wg.Add(2)
		go func() {
			defer r.wg.Done()
			r.watchCheckpoint(runCtx, st)
		}()
		go func() {
			defer r.wg.Done()
			lease.Run(runCtx, r.leases, "projection."+st.key, r.cfg.Holder, r.cfg.LeaseTTL, r.cfg.Logger,
				func(ctx context.Context) { r.lead(ctx, st) })
		}()
	}
	return nil
}

// Stop ends every projection's work; a batch being written is finished or abandoned (and re-read by the next
// leader), never half-counted.
func (r *Runner) Stop() {
	if r.cancel != nil {
		r.cancel()
	}
	r.wg.Wait()
}

// Names lists the projections, in registration order.
func (r *Runner) Names() []string { return slices.Clone(r.order) }

// bucketName names the bucket of one generation of a projection's documents; key is the projection's storage key.
func (r *Runner) bucketName(key string, gen int) string {
	return r.names.Bucket("rm_" + key + "_g" + strconv.Itoa(gen))
}

// byKey finds a projection by its storage key.
func (r *Runner) byKey(key string) (*state, bool) {
	for _, st := range r.projs {
		if st.key == key {
			return st, true
		}
	}
	return nil, false
}

func (r *Runner) currentGeneration(ctx context.Context, name string) (int, error) {
	e, err := r.meta.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		body, _ := json.Marshal(generation{Generation: 1})
		_, err = r.meta.Create(ctx, name, body)
		if err == nil {
			return 1, nil // what it recorded: no need to read it back
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return 0, fmt.Errorf("record generation of %s: %w", name, err)
		}
		e, err = r.meta.Get(ctx, name)
	}
	if err != nil {
		return 0, fmt.Errorf("read generation of %s: %w", name, err)
	}
	var g generation
	if err := json.Unmarshal(e.Value(), &g); err != nil {
		return 0, fmt.Errorf("decode generation of %s: %w", name, err)
	}
	return g.Generation, nil
}

func (r *Runner) ensureGenerationBucket(ctx context.Context, name string, gen int) (jetstream.KeyValue, error) {
	bucket := r.bucketName(name, gen)
	kv, err := r.cfg.JS.KeyValue(ctx, bucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("open bucket %s: %w", bucket, err)
	}
	kv, err = r.cfg.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "read model " + name,
		History:     1,
		Storage:     jetstream.FileStorage,
		Replicas:    r.cfg.Layout.Replicas,
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return r.cfg.JS.KeyValue(ctx, bucket)
	}
	if err != nil {
		return nil, fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return kv, natsx.WaitBucket(ctx, kv)
}

// dropOldGenerations deletes buckets of generations before the current one (left by a rebuild whose node stopped
// before it could clean up), among the buckets listed at start. Newer ones may belong to a rebuild in progress and
// are left alone.
func (r *Runner) dropOldGenerations(ctx context.Context, buckets []string, name string, current int) {
	prefix := r.names.Bucket("rm_" + name + "_g")
	for _, bucket := range buckets {
		g, err := strconv.Atoi(strings.TrimPrefix(bucket, prefix))
		if !strings.HasPrefix(bucket, prefix) || err != nil || g >= current {
			continue
		}
		if err := r.cfg.JS.DeleteKeyValue(ctx, bucket); err != nil {
			r.cfg.Logger.Warn("drop old read model generation", "bucket", bucket, "err", err)
		}
	}
}

// watchGenerations follows the meta bucket so that every node switches to a rebuilt generation.
func (r *Runner) watchGenerations(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := r.meta.WatchAll(ctx, jetstream.UpdatesOnly())
		if err != nil {
			r.cfg.Logger.Warn("watch projection generations", "err", err)
			sleep(ctx, time.Second)
			continue
		}
		for e := range w.Updates() {
			if e == nil || e.Operation() != jetstream.KeyValuePut {
				continue
			}
			st, ok := r.byKey(e.Key())
			if !ok {
				continue
			}
			var g generation
			if json.Unmarshal(e.Value(), &g) != nil || g.Generation == st.generation() {
				continue
			}
			kv, err := r.cfg.JS.KeyValue(ctx, r.bucketName(e.Key(), g.Generation))
			if err != nil {
				r.cfg.Logger.Error("open rebuilt read model", "projection", e.Key(), "generation", g.Generation, "err", err)
				continue
			}
			cp, _ := newWriter(r.cfg.JS, kv, st.p, r.cfg.Logger).checkpoint(ctx)
			st.setGeneration(g.Generation, kv)
			st.resetApplied(cp)
			r.cfg.Logger.Info("read model switched to a new generation", "projection", e.Key(), "generation", g.Generation)
		}
		_ = w.Stop()
	}
}

// watchCheckpoint learns how far the projection is applied while another node applies it, following the checkpoint
// of the current generation's bucket (natsx.FollowKey, which comes back within moments of a failover). While this
// node leads, its writer says so itself, and the follower's consumer (one per projection, with its goroutines on
// both sides and its heartbeats) is not kept: on a single node that is every projection, always.
func (r *Runner) watchCheckpoint(ctx context.Context, st *state) {
	for ctx.Err() == nil {
		leading, leadChanged := st.leadership()
		if leading {
			select {
			case <-leadChanged:
			case <-ctx.Done():
			}
			continue
		}
		if !r.ledElsewhere(ctx, st) {
			// This node is about to take the lease (it is starting), or the lease is between holders: look again
			// soon, or when this node leads.
			select {
			case <-leadChanged:
			case <-ctx.Done():
			case <-time.After(unledRecheck):
			}
			continue
		}
		_, kv, genChanged := st.current()
		gctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-genChanged:
			case <-leadChanged:
			case <-gctx.Done():
			}
			cancel()
		}()
		natsx.FollowKey(gctx, r.cfg.JS, kv.Bucket(), checkpointKey, func(v []byte) {
			if seq, err := strconv.ParseUint(string(v), 10, 64); err == nil {
				st.setApplied(seq)
			}
		})
		cancel()
	}
}

// unledRecheck is how often a node that does not lead a projection looks whether another node has taken it.
const unledRecheck = 500 * time.Millisecond

// ledElsewhere reports whether another node holds the projection's lease. When the bucket does not answer it says
// yes: following a checkpoint nobody moves costs a consumer, while missing one that moves leaves reads waiting.
func (r *Runner) ledElsewhere(ctx context.Context, st *state) bool {
	lctx, cancel := context.WithTimeout(ctx, startAttempt)
	defer cancel()
	holder, err := lease.Holder(lctx, r.leases, "projection."+st.key)
	if err != nil {
		return ctx.Err() == nil
	}
	return holder != "" && holder != r.cfg.Holder
}

// lead applies the log to the projection while this node holds its lease.
func (r *Runner) lead(ctx context.Context, st *state) {
	st.setLeading(true)
	defer st.setLeading(false)
	// The lease lost, another node may write at once, while this one still finishes its batch: it follows from then.
	defer context.AfterFunc(ctx, func() { st.setLeading(false) })()
	name := st.p.Name()
	r.cfg.Logger.Debug("projection leader", "projection", name, "node", r.cfg.Holder)
	backoff := 100 * time.Millisecond
	// One writer while this node leads a generation: a reader opened again after a failover keeps what the writer
	// knows of the bucket (its keys, the documents' revisions) rather than list the bucket again. What another writer
	// may have changed meanwhile shows as a revision conflict, which makes the writer forget and fold again.
	var w *writer
	wGen := -1
	for ctx.Err() == nil {
		started := time.Now()
		gen, kv, genChanged := st.current()
		gctx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-genChanged:
				cancel()
			case <-gctx.Done():
			}
		}()
		if w == nil || wGen != gen {
			w, wGen = newWriter(r.cfg.JS, kv, st.p, r.cfg.Logger.With("projection", name)), gen
		}
		err := r.consume(gctx, st, w, func(applied, pending uint64, n int) {
			// Counted before the readers waiting for the batch are woken, so that they find it counted.
			r.cfg.Metrics.ProjectionApply.WithLabelValues(name).Add(float64(n))
			if n > 0 {
				r.cfg.Metrics.ProjectionBatches.WithLabelValues(name).Inc()
			}
			r.cfg.Metrics.ProjectionSeq.WithLabelValues(name).Set(float64(applied))
			r.cfg.Metrics.ProjectionLag.WithLabelValues(name).Set(float64(pending))
			st.setLag(pending)
			st.setApplied(applied)
		}, false)
		cancel()
		if err != nil && ctx.Err() == nil && st.generation() == gen {
			// At once after a reader that ran a while (a stall, a leader change); slower while NATS keeps failing.
			if time.Since(started) > 5*time.Second {
				backoff = 100 * time.Millisecond
			}
			r.cfg.Logger.Warn("projection stopped; resuming", "projection", name, "in", backoff, "err", err)
			sleep(ctx, backoff)
			backoff = min(2*backoff, 500*time.Millisecond)
		}
	}
}

// consume reads the projection's events from the writer's checkpoint and applies them in batches. With untilCaughtUp
// it returns once the log is applied to its end as it was when it started.
//
// Far behind the end of the log, it reads the whole log and passes over what the projection does not fold: the
// server looks for the next message matching a filter by walking every subject of the block it is in, so a
// filtered reader far from the end gets slower the more aggregates the log holds (on 81,000 events of about 44,000
// aggregates: 3-5k events/s with two filters, 38-57k with one, 85-133k with none). Near the end the server walks
// the few messages instead, and the reader switches to the filtered one, which is woken only by what it folds.
func (r *Runner) consume(ctx context.Context, st *state, w *writer, onBatch func(applied, pending uint64, n int), untilCaughtUp bool) error {
	var after uint64
	wholeLog := true
	for {
		seen, err := r.read(ctx, st, w, onBatch, untilCaughtUp, wholeLog, after)
		if !errors.Is(err, errNearEnd) {
			return err
		}
		wholeLog, after = false, seen
	}
}

// errNearEnd ends a read of the whole log once the log's end is near.
var errNearEnd = errors.New("reader of the whole log is near its end")

// wholeLogFrom and wholeLogUntil set when a reader reads the whole log: from this many events behind its end, until
// this many. (The server walks a block's messages rather than its subjects when it has more subjects than
// messages left to walk; a block holds thousands of subjects.)
const (
	wholeLogFrom  = 2000
	wholeLogUntil = 256
)

// read is one reader of the log from the checkpoint (or from after `after`, events up to which are applied).
// Reading the whole log (wholeLog, and far behind), it returns errNearEnd with the last sequence it read once near
// the end; every event it handed over by then is applied.
func (r *Runner) read(ctx context.Context, st *state, w *writer, onBatch func(applied, pending uint64, n int), untilCaughtUp, wholeLog bool, after uint64) (uint64, error) {
	rd, err := r.openReader(ctx, st, w, wholeLog, after)
	if err != nil {
		return 0, err
	}
	it := rd.it
	defer it.Delete()
	if it.Consumer().CachedInfo().NumPending == 0 {
		onBatch(rd.from, 0, 0)
		if untilCaughtUp {
			return 0, nil
		}
	}
	// A reader whose consumer's server died ends within two missed heartbeats (natsx.OrderedHeartbeat). One parked
	// in Next while the log moves on for another reason is noticed by the watchdog, which stops it; either way the
	// leader loop opens a new reader from the checkpoint.
	wctx, cancelWatch := context.WithCancel(ctx)
	defer cancelWatch()
	go natsx.Watchdog(wctx, it.Consumer(), &rd.progress, stallAfter, r.tip, func() {
		r.cfg.Logger.Warn("projection reader stopped while events waited; opening a new one", "projection", st.p.Name())
		r.cfg.Metrics.ProjectionStall.WithLabelValues(st.p.Name()).Inc()
		it.Stop()
	})
	// The reader decodes as it reads, so that decoding the next events overlaps with folding and writing the
	// batch before them.
	go rd.decode(ctx)
	stop := context.AfterFunc(ctx, it.Stop)
	defer stop()
	// The batch grows to what the log gives (at most BatchSize): a projection that follows a quiet log holds a few
	// events' room, not BatchSize's (with the read-ahead below, 4 MiB of an idle node's 14 MiB heap).
	var batch []events.Envelope
	for {
		var pending uint64
		batch, pending, err = rd.next(ctx, batch[:0])
		if err != nil {
			if errors.Is(err, errNearEnd) {
				return rd.seen, err
			}
			return 0, err
		}
		if err := r.applyBatch(ctx, st, w, batch); err != nil {
			return 0, err
		}
		rd.progress.Mark() // a slow batch is not a stalled reader
		pending += uint64(len(rd.msgs))
		onBatch(batch[len(batch)-1].Sequence, pending, len(batch))
		if untilCaughtUp && pending == 0 {
			return 0, nil
		}
	}
}

// reader is one ordered reader of the log feeding a projection, and the goroutine decoding what it delivers.
type reader struct {
	r        *Runner
	st       *state
	it       *natsx.OrderedReader
	from     uint64 // the last sequence applied before it
	wholeLog bool   // it reads every event, passing over what the projection does not fold

	progress natsx.Progress
	msgs     chan decoded
	readErr  chan error // why decode stopped, sent before msgs is closed
	seen     uint64     // the last sequence read; read only after msgs is closed
}

// openReader creates the consumer that reads on from the writer's checkpoint (or from after `after`).
func (r *Runner) openReader(ctx context.Context, st *state, w *writer, wholeLog bool, after uint64) (*reader, error) {
	// The checkpoint read and the consumer's creation are bounded: while a stream elects a leader (a server died) a
	// request gets no answer, and the client's default wait (5s) per request would keep the projection still for
	// long after the election is over. (The listing of keys is bounded by its silence: it may take long on a large
	// bucket.)
	sctx, cancel := context.WithTimeout(ctx, startAttempt)
	from, err := w.checkpoint(sctx)
	cancel()
	if err != nil {
		return nil, err
	}
	from = max(from, after)
	if w.known == nil {
		if err := w.learnKeys(ctx, startAttempt); err != nil {
			return nil, err
		}
	}
	sctx, cancel = context.WithTimeout(ctx, startAttempt)
	defer cancel()
	if wholeLog {
		wholeLog = r.farBehind(sctx, from)
	}
	cfg := natsx.OrderedConfig{Stream: r.names.EventsStream(), Filters: st.filters, After: from,
		InactiveThreshold: 30 * time.Second, MaxMessages: 2 * r.cfg.BatchSize}
	if wholeLog {
		cfg.Filters = nil
		r.cfg.Logger.Info("projection reads the whole log to catch up", "projection", st.p.Name(), "from", from)
	}
	it, err := natsx.OpenOrdered(sctx, r.cfg.JS, cfg)
	if err != nil {
		return nil, fmt.Errorf("open reader for %s: %w", st.p.Name(), err)
	}
	return &reader{r: r, st: st, it: it, from: from, wholeLog: wholeLog,
		msgs: make(chan decoded, min(r.cfg.BatchSize, readAhead)), readErr: make(chan error, 1)}, nil
}

// readAhead bounds how many decoded events wait for the projection's writer: enough to decode the next events while
// a batch is written (the batch itself still fills up to BatchSize while more are pending), not a batch's worth held
// by every projection of every node from its start.
const readAhead = 64

// decode reads the consumer's messages and hands the projection's events on, decoded, until the read fails, ctx
// ends, or a reader of the whole log nears the log's end (errNearEnd).
func (rd *reader) decode(ctx context.Context) {
	defer close(rd.msgs)
	for {
		m, err := rd.it.Next()
		if err != nil {
			rd.readErr <- err
			return
		}
		rd.progress.Mark()
		md, err := m.Metadata()
		if err != nil {
			rd.readErr <- fmt.Errorf("message metadata: %w", err)
			return
		}
		rd.seen = md.Sequence.Stream
		if !rd.wholeLog || rd.st.match.Match(m.Subject()) {
			env, err := rd.r.cfg.Store.DecodeEnvelope(m.Data())
			if err != nil {
				// A stored event that does not decode is kept in the log; the projection passes over it.
				rd.r.cfg.Logger.Error("projection cannot decode an event", "projection", rd.st.p.Name(), "seq", md.Sequence.Stream, "err", err)
				env = events.Envelope{}
			}
			env.Sequence = md.Sequence.Stream
			select {
			case rd.msgs <- decoded{env: env, pending: md.NumPending}:
			case <-ctx.Done():
				return
			}
		}
		if rd.wholeLog && md.NumPending <= wholeLogUntil {
			rd.readErr <- errNearEnd
			return
		}
	}
}

// next appends the next batch of decoded events to batch, at most BatchSize of them, with what the server counted
// as pending after its last.
// A batch takes every event already read, and while the log holds more, waits a moment for them: a batch is one
// round of writes whatever its size, and reading is slower than folding, so without the wait batches stay tiny.
// (What the server counts as pending leaves out what this reader holds: a reader that fell behind holds hundreds of
// events the server delivered when they were the last.) A live event, with nothing read or pending behind it, is
// written at once. Once decode has stopped, next returns why (errNearEnd included).
func (rd *reader) next(ctx context.Context, batch []events.Envelope) ([]events.Envelope, uint64, error) {
	var pending uint64
	select {
	case d, ok := <-rd.msgs:
		if !ok {
			return batch, 0, rd.stopped(ctx)
		}
		batch, pending = append(batch, d.env), d.pending
	case <-ctx.Done():
		return batch, 0, ctx.Err()
	}
	var linger <-chan time.Time
	for len(batch) < rd.r.cfg.BatchSize {
		select {
		case d, ok := <-rd.msgs:
			if !ok {
				return batch, pending, nil
			}
			batch, pending = append(batch, d.env), d.pending
			continue
		default:
		}
		if pending == 0 {
			break
		}
		if linger == nil {
			linger = time.After(batchLinger)
		}
		select {
		case d, ok := <-rd.msgs:
			if !ok {
				return batch, pending, nil
			}
			batch, pending = append(batch, d.env), d.pending
		case <-linger:
			return batch, pending, nil
		case <-ctx.Done():
			return batch, 0, ctx.Err()
		}
	}
	return batch, pending, nil
}

// stopped is why decode stopped, once msgs is closed.
func (rd *reader) stopped(ctx context.Context) error {
	select {
	case err := <-rd.readErr:
		if errors.Is(err, errNearEnd) {
			return err
		}
		return fmt.Errorf("read log for %s: %w", rd.st.p.Name(), err)
	default:
		return ctx.Err()
	}
}

// applyBatch applies a batch, retrying until it is written or ctx ends: the events are the log's, so a failure is
// the read model's store failing for a while.
func (r *Runner) applyBatch(ctx context.Context, st *state, w *writer, batch []events.Envelope) error {
	for attempt := 1; ; attempt++ {
		err := w.apply(ctx, batch)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.cfg.Logger.Warn("projection batch failed; retrying", "projection", st.p.Name(), "attempt", attempt, "err", err)
		sleep(ctx, time.Duration(min(attempt, 10))*200*time.Millisecond)
	}
}

// farBehind reports whether the log holds more than wholeLogFrom events after `from`. When it cannot tell, it
// says no: the filtered reader is right at any distance, only slower.
func (r *Runner) farBehind(ctx context.Context, from uint64) bool {
	stream, err := r.cfg.JS.Stream(ctx, r.names.EventsStream())
	if err != nil {
		return false
	}
	last := stream.CachedInfo().State.LastSeq
	return last > from && last-from > wholeLogFrom
}

// dropConsumer deletes a reader's consumer when the reader is done with it, rather than leave it to expire.
func (r *Runner) dropConsumer(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil || info.Name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = r.cfg.JS.DeleteConsumer(ctx, r.names.EventsStream(), info.Name)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// stallAfter is how long a reader may receive nothing while its consumer reports pending events before it is
// replaced (a second or two: a leader election in a cluster takes about that long).
const stallAfter = 2 * time.Second

// startAttempt bounds a reader's start (checkpoint, keys, consumer): an answer takes milliseconds from live leaders,
// and never comes from a dead one. It is also about the longest a projection waits, after a stream has its new
// leader, for an attempt begun during the election to give up.
const startAttempt = 2 * time.Second

// flushAttempt bounds the wait for a batch's writes to be acknowledged: a write sent to a bucket's leader that died
// is never answered, and the batch is written again (compare-and-set makes that safe).
const flushAttempt = 5 * time.Second

// batchLinger is how long a batch waits for events the log is known to hold before it is written.
const batchLinger = 2 * time.Millisecond

// decoded is an event as the reader hands it over, with the number of matching events after it.
type decoded struct {
	env     events.Envelope
	pending uint64
}

// state is what a node knows of one projection.
type state struct {
	p       Projection
	key     string // storageKey(p): names its buckets, generation record and lease
	filters []string
	match   natsx.SubjectFilter // filters, to pass over events when reading the whole log

	mu        sync.Mutex
	gen       int
	kv        jetstream.KeyValue
	genSwitch chan struct{} // closed when the generation changes
	applied   uint64
	changed   chan struct{} // closed when applied moves
	lag       uint64

	leading    bool          // this node writes the projection
	leadSwitch chan struct{} // closed when leading changes
}

// setLeading records whether this node writes the projection.
func (s *state) setLeading(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leading == on {
		return
	}
	s.leading = on
	if s.leadSwitch != nil {
		close(s.leadSwitch)
	}
	s.leadSwitch = make(chan struct{})
}

// leadership says whether this node writes the projection, and a channel closed when that changes.
func (s *state) leadership() (bool, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.leadSwitch == nil {
		s.leadSwitch = make(chan struct{})
	}
	return s.leading, s.leadSwitch
}

func (s *state) setGeneration(gen int, kv jetstream.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen, s.kv = gen, kv
	if s.genSwitch != nil {
		close(s.genSwitch)
	}
	s.genSwitch = make(chan struct{})
}

// mark is the generation and the applied sequence together, read under one hold of the lock.
func (s *state) mark() mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mark{gen: s.gen, applied: s.applied}
}

func (s *state) generation() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen
}

func (s *state) current() (int, jetstream.KeyValue, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gen, s.kv, s.genSwitch
}

func (s *state) bucket() jetstream.KeyValue {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv
}

// setApplied moves the applied sequence forward (never back: checkpoints may arrive out of order from watches).
func (s *state) setApplied(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.applied {
		return
	}
	s.applied = seq
	close(s.changed)
	s.changed = make(chan struct{})
}

// resetApplied sets the applied sequence of a new generation.
func (s *state) resetApplied(seq uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied = seq
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *state) progress() (uint64, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.applied, s.changed
}

func (s *state) setLag(n uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lag = n
}
