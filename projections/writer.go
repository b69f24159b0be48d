package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx"
)

// errRevisionMoved means another writer changed a document between our read and our write.
var errRevisionMoved = errors.New("document changed by another writer")

// maxCached bounds the writer's cache of documents; past it the cache starts afresh.
const maxCached = 200_000

type cached struct {
	rev uint64
	doc doc
}

// writer applies batches of events to one bucket. It caches what it read and wrote so that a batch costs one
// compare-and-set write per changed document, and coalesces several events on one document into one write.
type writer struct {
	js      jetstream.JetStream
	kv      jetstream.KeyValue
	subject string // "$KV.<bucket>."
	proj    Projection
	logger  *slog.Logger

	cache map[string]cached
	// known, when not nil, is every key the bucket holds: a key outside it is absent without asking the server.
	// It is only trusted while this writer is the bucket's one writer; a revision conflict drops it.
	known  map[string]struct{}
	staged map[string]doc
	// decoded holds the value Modify last wrote to a key, with the bytes it wrote: valid while the document's
	// bytes are those very bytes.
	decoded map[string]keptValue
	order   []string // staged keys in first-write order, so flushes are deterministic
	skipped int      // events whose fold failed, for the log and tests
}

func newWriter(js jetstream.JetStream, kv jetstream.KeyValue, p Projection, logger *slog.Logger) *writer {
	return &writer{
		js: js, kv: kv, proj: p, logger: logger,
		subject: "$KV." + kv.Bucket() + ".",
		cache:   map[string]cached{},
		decoded: map[string]keptValue{},
	}
}

type keptValue struct {
	raw []byte
	v   any
}

// kept returns the value Modify wrote as raw, or nil when the document is no longer what it wrote.
func (w *writer) kept(key string, raw []byte) any {
	k, ok := w.decoded[key]
	if !ok || len(raw) == 0 || len(k.raw) != len(raw) || &k.raw[0] != &raw[0] {
		return nil
	}
	return k.v
}

func (w *writer) keep(key string, raw []byte, v any) {
	if len(w.decoded) >= maxCached {
		clear(w.decoded)
	}
	w.decoded[key] = keptValue{raw: raw, v: v}
}

func (w *writer) forget(key string) { delete(w.decoded, key) }

// doc returns the current document at key: staged in this batch, cached, or read from the bucket.
func (w *writer) doc(ctx context.Context, key string) (doc, error) {
	if d, ok := w.staged[key]; ok {
		return d, nil
	}
	c, err := w.load(ctx, key)
	return c.doc, err
}

func (w *writer) load(ctx context.Context, key string) (cached, error) {
	if c, ok := w.cache[key]; ok {
		return c, nil
	}
	if w.known != nil {
		if _, ok := w.known[key]; !ok {
			c := cached{}
			w.remember(key, c)
			return c, nil
		}
	}
	e, err := natsx.KVGet(ctx, w.kv, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		c := cached{}
		w.remember(key, c)
		return c, nil
	}
	if err != nil {
		return cached{}, fmt.Errorf("read %s/%s: %w", w.kv.Bucket(), key, err)
	}
	var d doc
	if key == checkpointKey {
		d.Seq, err = strconv.ParseUint(string(e.Value()), 10, 64)
	} else {
		err = json.Unmarshal(e.Value(), &d)
	}
	if err != nil {
		return cached{}, fmt.Errorf("decode %s/%s: %w", w.kv.Bucket(), key, err)
	}
	c := cached{rev: e.Revision(), doc: d}
	w.remember(key, c)
	return c, nil
}

func (w *writer) remember(key string, c cached) {
	if len(w.cache) >= maxCached {
		clear(w.cache)
	}
	w.cache[key] = c
}

// stage records a write unless the document already reflects this event or a later one.
func (w *writer) stage(ctx context.Context, key string, d doc) error {
	cur, err := w.doc(ctx, key)
	if err != nil {
		return err
	}
	if cur.Seq >= d.Seq {
		return nil
	}
	if _, ok := w.staged[key]; !ok {
		w.order = append(w.order, key)
	}
	w.staged[key] = d
	return nil
}

// apply folds a batch (in order) and writes the result with the checkpoint. On a revision conflict it forgets what
// it cached and folds the batch again on fresh documents; events already applied to a document are skipped by
// sequence, so this converges.
func (w *writer) apply(ctx context.Context, batch []events.Envelope) error {
	if len(batch) == 0 {
		return nil
	}
	for attempt := 0; ; attempt++ {
		w.staged = map[string]doc{}
		w.order = w.order[:0]
		for _, e := range batch {
			if e.Event == nil {
				continue // a type this build does not know
			}
			if err := w.proj.Apply(&Tx{ctx: ctx, w: w, seq: e.Sequence}, e); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if isTransient(err) {
					return err
				}
				w.skipped++
				w.logger.Error("projection skipped an event it could not fold", "projection", w.proj.Name(),
					"seq", e.Sequence, "type", e.Type, "id", e.ID, "err", err)
			}
		}
		err := w.flush(ctx, batch[len(batch)-1].Sequence)
		if !errors.Is(err, errRevisionMoved) || attempt >= 5 {
			return err
		}
		// Another writer was here: nothing cached can be trusted any more.
		clear(w.cache)
		clear(w.decoded)
		w.known = nil
	}
}

// isTransient tells a failed read of the bucket (retry the batch) from a fold's own error (skip the event).
func isTransient(err error) bool {
	return errors.Is(err, nats.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, jetstream.ErrNoHeartbeat)
}

// flush writes every staged document and then the checkpoint, each compare-and-set on the revision last seen. The
// documents are pipelined (async publish) and awaited; the checkpoint is written only once every one of them is
// in: a reader that sees the checkpoint at a sequence must find what the events up to it made. (Pipelined with the
// documents, a checkpoint could land while a document's write failed on a revision another writer had moved, for
// a moment of a lease changing hands, and a node answered 404 for a thread it had just created.)
func (w *writer) flush(ctx context.Context, lastSeq uint64) error {
	ctx, cancel := context.WithTimeout(ctx, flushAttempt)
	defer cancel()
	type pending struct {
		key string
		d   doc
		f   jetstream.PubAckFuture
	}
	publish := func(futures []pending, key string, body []byte, d doc) ([]pending, error) {
		c, err := w.load(ctx, key)
		if err != nil {
			return futures, err
		}
		msg := &nats.Msg{Subject: w.subject + key, Data: body, Header: nats.Header{}}
		msg.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(c.rev, 10))
		f, err := w.js.PublishMsgAsync(msg)
		if err != nil {
			return futures, fmt.Errorf("write %s/%s: %w", w.kv.Bucket(), key, err)
		}
		return append(futures, pending{key: key, d: d, f: f}), nil
	}
	await := func(futures []pending) error {
		var firstErr error
		for _, p := range futures {
			select {
			case ack := <-p.f.Ok():
				w.remember(p.key, cached{rev: ack.Sequence, doc: p.d})
				if w.known != nil {
					w.known[p.key] = struct{}{}
				}
			case err := <-p.f.Err():
				delete(w.cache, p.key)
				var apiErr *jetstream.APIError
				if errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
					apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant) {
					err = errRevisionMoved
				}
				if firstErr == nil || errors.Is(err, errRevisionMoved) {
					firstErr = err
				}
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if firstErr != nil && !errors.Is(firstErr, errRevisionMoved) {
			return fmt.Errorf("write to %s: %w", w.kv.Bucket(), firstErr)
		}
		return firstErr
	}
	futures := make([]pending, 0, len(w.order))
	for _, key := range w.order {
		d := w.staged[key]
		var err error
		if futures, err = publish(futures, key, encodeDoc(d), d); err != nil {
			return err
		}
	}
	if err := await(futures); err != nil {
		return err
	}
	cp, cur := doc{Seq: lastSeq}, w.cache[checkpointKey]
	if cur.doc.Seq >= lastSeq {
		return nil
	}
	futures, err := publish(futures[:0], checkpointKey, []byte(strconv.FormatUint(lastSeq, 10)), cp)
	if err != nil {
		return err
	}
	return await(futures)
}

// learnKeys lists the bucket's keys so that reads of keys it does not hold cost nothing. Worth it when this writer
// is about to apply many events (a leader taking over, a rebuild); a bucket too large to list is read key by key.
//
// The listing may take long on a large bucket, so it is not bounded as a whole; but a listing that receives nothing
// for `idle` (its consumer's server died, its bucket elects a leader) is given up, and the writer reads key by key: a
// projection does not wait for the listing's own consumer to be recreated. A listing cut short is never used, as it
// would leave keys out.
func (w *writer) learnKeys(ctx context.Context, idle time.Duration) error {
	w.known = nil
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	quiet := time.AfterFunc(idle, cancel)
	defer quiet.Stop()
	lister, err := w.kv.ListKeys(lctx)
	if err != nil {
		if ctx.Err() == nil {
			w.logger.Warn("projection reads keys one by one: the listing did not open", "bucket", w.kv.Bucket(), "err", err)
			return nil
		}
		return fmt.Errorf("list keys of %s: %w", w.kv.Bucket(), err)
	}
	known := map[string]struct{}{}
	for k := range lister.Keys() {
		quiet.Reset(idle)
		if len(known) >= maxCached {
			_ = lister.Stop()
			return nil
		}
		known[k] = struct{}{}
	}
	if lctx.Err() != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		w.logger.Warn("projection reads keys one by one: the listing stopped answering", "bucket", w.kv.Bucket(), "listed", len(known))
		return nil
	}
	w.known = known
	return nil
}

// checkpoint reads the sequence the bucket has applied up to.
func (w *writer) checkpoint(ctx context.Context) (uint64, error) {
	c, err := w.load(ctx, checkpointKey)
	return c.doc.Seq, err
}

// encodeDoc writes a document's JSON by hand: its value is already JSON (from Tx.Put), and encoding/json would
// re-validate and compact it on every write.
func encodeDoc(d doc) []byte {
	b := make([]byte, 0, 32+len(d.V))
	b = append(b, `{"seq":`...)
	b = strconv.AppendUint(b, d.Seq, 10)
	if d.Deleted {
		b = append(b, `,"deleted":true`...)
	}
	if len(d.V) > 0 {
		b = append(b, `,"v":`...)
		b = append(b, d.V...)
	}
	return append(b, '}')
}
