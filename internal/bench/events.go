package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// EventsOptions sizes the events benchmark.
type EventsOptions struct {
	// Dir is an empty directory for the embedded server's files.
	Dir string
	// N is the number of events in each throughput measurement.
	N int
	// Payload is the size of each event's text, in bytes.
	Payload int
	// Loads is the number of 10-event aggregates loaded for the latency figures.
	Loads int
	// SyncAlways makes the server fsync every write (what `--nats-sync-always` does).
	SyncAlways bool
}

// benchEvent is the event every measurement appends.
type benchEvent struct {
	Text string `json:"text"`
	N    int    `json:"n"`
}

func (benchEvent) EventType() string { return "bench.appended" }

// Rig is an embedded server with Contrail's layout, a store, and raw JetStream beside it.
type Rig struct {
	NS    *server.Server
	NC    *nats.Conn
	JS    jetstream.JetStream
	Store *eventstore.Store
	Names natsx.Names
	text  string
}

// NewRig starts an embedded server in dir and provisions Contrail's streams there.
func NewRig(ctx context.Context, dir string, payload int, syncAlways bool) (*Rig, error) {
	ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: dir, SyncAlways: syncAlways})
	if err != nil {
		return nil, err
	}
	nc, err := natsx.ConnectEmbedded(ns, "bench")
	if err != nil {
		ns.Shutdown()
		return nil, err
	}
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(4096))
	if err != nil {
		return nil, err
	}
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: 2 * time.Minute}
	if err := natsx.Provision(ctx, js, layout, slog.New(slog.DiscardHandler)); err != nil {
		return nil, err
	}
	reg := events.NewRegistry()
	reg.Register(benchEvent{})
	text := make([]byte, payload)
	for i := range text {
		text[i] = 'a' + byte(i%26)
	}
	return &Rig{NS: ns, NC: nc, JS: js, Store: eventstore.NewStore(js, names, reg), Names: names, text: string(text)}, nil
}

// Close stops the server.
func (r *Rig) Close() {
	r.NC.Close()
	r.NS.Shutdown()
	r.NS.WaitForShutdown()
}

// rawMessage is a message of the same size and headers as Store.Append's, published without the store.
func (r *Rig) rawMessage(agg, id string, n int) *nats.Msg {
	env := events.Envelope{ID: events.NewID(), Type: "bench.appended", Aggregate: agg, AggregateID: id, Version: uint64(n),
		Time: time.Now().UTC(), Account: "acct_bench", Actor: "bench"}
	env.Data, _ = json.Marshal(benchEvent{Text: r.text, N: n})
	body, _ := json.Marshal(env)
	return &nats.Msg{Subject: r.Names.EventSubject(agg, id, "appended"), Data: body, Header: nats.Header{}}
}

// RawSyncPublish publishes n messages one at a time with a message ID and an expected last sequence for the
// aggregate's subjects, the headers Store.Append sends. Aggregates take 10 events each.
func (r *Rig) RawSyncPublish(ctx context.Context, n int, prefix string) (time.Duration, error) {
	last := map[string]uint64{}
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		msgs[i] = r.rawMessage("bench", prefix+strconv.Itoa(i/10), i%10+1)
	}
	start := time.Now()
	for i, m := range msgs {
		id := prefix + strconv.Itoa(i/10)
		ack, err := r.JS.PublishMsg(ctx, m, jetstream.WithMsgID(events.NewID()),
			jetstream.WithExpectLastSequenceForSubject(last[id], r.Names.AggregateFilter("bench", id)))
		if err != nil {
			return 0, fmt.Errorf("raw publish: %w", err)
		}
		last[id] = ack.Sequence
	}
	return time.Since(start), nil
}

// StoreAppend appends n events one at a time through Store.Append, 10 per aggregate.
func (r *Rig) StoreAppend(ctx context.Context, n int, prefix string) (time.Duration, error) {
	versions := map[string]events.Version{}
	start := time.Now()
	for i := 0; i < n; i++ {
		id := prefix + strconv.Itoa(i/10)
		res, err := r.Store.Append(ctx, events.Ref{Type: "bench", ID: id}, versions[id],
			events.Meta{Account: "acct_bench", Actor: "bench"}, benchEvent{Text: r.text, N: i})
		if err != nil {
			return 0, err
		}
		versions[id] = res.Version
	}
	return time.Since(start), nil
}

// RawAsyncPublish pipelines n messages in windows of `window`, with the same headers, one per aggregate.
func (r *Rig) RawAsyncPublish(ctx context.Context, n, window int) (time.Duration, error) {
	prefix := "rawa" + events.NewID()[20:] + "-"
	msgs := make([]*nats.Msg, n)
	for i := range msgs {
		msgs[i] = r.rawMessage("bench", prefix+strconv.Itoa(i), 1)
	}
	start := time.Now()
	for lo := 0; lo < n; lo += window {
		hi := min(lo+window, n)
		futures := make([]jetstream.PubAckFuture, 0, hi-lo)
		for i := lo; i < hi; i++ {
			f, err := r.JS.PublishMsgAsync(msgs[i], jetstream.WithMsgID(events.NewID()),
				jetstream.WithExpectLastSequenceForSubject(0, r.Names.AggregateFilter("bench", prefix+strconv.Itoa(i))))
			if err != nil {
				return 0, err
			}
			futures = append(futures, f)
		}
		for _, f := range futures {
			select {
			case <-f.Ok():
			case err := <-f.Err():
				return 0, err
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
	}
	return time.Since(start), nil
}

// StoreAppendBatch appends n events with AppendBatch in windows of `window`, one per aggregate.
func (r *Rig) StoreAppendBatch(ctx context.Context, n, window int) (time.Duration, error) {
	prefix := "batch" + events.NewID()[20:] + "-"
	start := time.Now()
	for lo := 0; lo < n; lo += window {
		hi := min(lo+window, n)
		batch := make([]eventstore.Batch, 0, hi-lo)
		for i := lo; i < hi; i++ {
			batch = append(batch, eventstore.Batch{Ref: events.Ref{Type: "bench", ID: prefix + strconv.Itoa(i)},
				Meta: events.Meta{Account: "acct_bench", Actor: "bench"}, Event: benchEvent{Text: r.text, N: i}})
		}
		_, errs := r.Store.AppendBatch(ctx, batch)
		for _, err := range errs {
			if err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start), nil
}

// RawOrderedRead reads every bench event with a raw ordered consumer and decodes it: the baseline of a projection's
// read side. It reads the whole log (which holds nothing else), the fastest raw read: a filtered consumer far behind
// the end is slower on the server (see projections.Runner.consume).
func (r *Rig) RawOrderedRead(ctx context.Context) (int, time.Duration, error) {
	start := time.Now()
	cons, err := r.JS.OrderedConsumer(ctx, r.Names.EventsStream(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		return 0, 0, err
	}
	total := cons.CachedInfo().NumPending
	it, err := cons.Messages(jetstream.PullMaxMessages(1024))
	if err != nil {
		return 0, 0, err
	}
	defer it.Stop()
	n := 0
	for read := uint64(0); read < total; read++ {
		m, err := it.Next()
		if err != nil {
			return n, 0, err
		}
		var env events.Envelope
		if err := json.Unmarshal(m.Data(), &env); err != nil {
			return n, 0, err
		}
		if env.Type == "bench.appended" {
			n++
		}
	}
	return n, time.Since(start), nil
}

// benchProjection keeps one document per aggregate: a count and a sum, the shape of most read models.
type benchProjection struct{ name string }

func (p benchProjection) Name() string       { return p.name }
func (benchProjection) EventTypes() []string { return []string{"bench.appended"} }
func (benchProjection) Apply(tx *projections.Tx, e events.Envelope) error {
	d := e.Event.(benchEvent)
	return projections.Modify(tx, "agg."+e.AggregateID, func(v *struct{ Count, Sum int }, _ bool) error {
		v.Count++
		v.Sum += d.N
		return nil
	})
}

// ProjectionApply starts a fresh read model over every bench event and waits until it has folded the last one: the
// apply path run flat out, as a node taking over a projection or a new projection meets the log. It returns how
// many events the model folded and how long that took.
func (r *Rig) ProjectionApply(ctx context.Context) (uint64, time.Duration, error) {
	filter := r.Names.TypeFilter("bench.appended")
	last, err := r.JS.OrderedConsumer(ctx, r.Names.EventsStream(), jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{filter}, DeliverPolicy: jetstream.DeliverLastPolicy})
	if err != nil {
		return 0, 0, err
	}
	m, err := last.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		return 0, 0, fmt.Errorf("find the last bench event: %w", err)
	}
	md, err := m.Metadata()
	if err != nil {
		return 0, 0, err
	}
	all, err := r.JS.OrderedConsumer(ctx, r.Names.EventsStream(), jetstream.OrderedConsumerConfig{FilterSubjects: []string{filter}})
	if err != nil {
		return 0, 0, err
	}
	n := all.CachedInfo().NumPending
	// A name of its own gives each run a fresh bucket, so that it folds from nothing.
	proj := benchProjection{name: "bench_" + strings.ToLower(events.NewID()[20:])}
	runner := projections.NewRunner(projections.Config{JS: r.JS, Store: r.Store,
		Layout: natsx.Layout{Names: r.Names, Replicas: 1}, Holder: "bench"}, proj)
	start := time.Now()
	if err := runner.Start(ctx); err != nil {
		return 0, 0, err
	}
	defer runner.Stop()
	if err := runner.WaitFor(ctx, proj.Name(), md.Sequence.Stream); err != nil {
		return 0, 0, err
	}
	return n, time.Since(start), nil
}

// LoadLatency loads random 10-event aggregates written by StoreAppend (ids prefix0..) and returns the samples;
// raw does the same read with direct gets and no decoding.
func (r *Rig) LoadLatency(ctx context.Context, prefix string, aggregates, loads int) (store, raw []time.Duration, err error) {
	for i := 0; i < loads; i++ {
		id := prefix + strconv.Itoa(rand.IntN(aggregates))
		t := time.Now()
		history, _, err := r.Store.Load(ctx, events.Ref{Type: "bench", ID: id})
		if err != nil {
			return nil, nil, err
		}
		if len(history) != 10 {
			return nil, nil, fmt.Errorf("loaded %d events of %s, want 10", len(history), id)
		}
		store = append(store, time.Since(t))

		t = time.Now()
		if n, err := r.rawLoad(ctx, id); err != nil || n != 10 {
			return nil, nil, fmt.Errorf("raw load of %s: %d events, %v", id, n, err)
		}
		raw = append(raw, time.Since(t))
	}
	return store, raw, nil
}

// rawLoad is the same batched direct get Store.Load sends, without decoding.
func (r *Rig) rawLoad(ctx context.Context, id string) (int, error) {
	inbox := r.NC.NewRespInbox()
	sub, err := r.NC.SubscribeSync(inbox)
	if err != nil {
		return 0, err
	}
	defer sub.Unsubscribe()
	req, _ := json.Marshal(map[string]any{"seq": 1, "next_by_subj": r.Names.AggregateFilter("bench", id), "batch": 256})
	if err := r.NC.PublishRequest("$JS.API.DIRECT.GET."+r.Names.EventsStream(), inbox, req); err != nil {
		return 0, err
	}
	n := 0
	for {
		m, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			return n, err
		}
		if m.Header.Get("Status") != "" {
			return n, nil
		}
		n++
	}
}

// Events runs every measurement of `contrail bench events`.
func Events(ctx context.Context, o EventsOptions, progress func(string)) (Report, error) {
	if o.N == 0 {
		o.N = 20000
	}
	if o.Payload == 0 {
		o.Payload = 200
	}
	if o.Loads == 0 {
		o.Loads = 2000
	}
	rig, err := NewRig(ctx, o.Dir, o.Payload, o.SyncAlways)
	if err != nil {
		return Report{}, err
	}
	defer rig.Close()
	rep := Report{Title: fmt.Sprintf("contrail bench events: %d events per measure, %d-byte payloads, embedded server, file storage", o.N, o.Payload)}
	step := func(s string) {
		if progress != nil {
			progress(s)
		}
	}

	// Warm up both paths so the first measure does not pay for the server's and the runtime's start.
	if _, err := rig.RawSyncPublish(ctx, 500, "rawwarm"); err != nil {
		return rep, err
	}
	if _, err := rig.StoreAppend(ctx, 500, "warm"); err != nil {
		return rep, err
	}

	step("sync appends")
	// Interleave raw and store runs so that drift in the machine's speed hits both alike.
	var rawSync, storeSync time.Duration
	for round := 0; round < 2; round++ {
		d, err := rig.RawSyncPublish(ctx, o.N/2, "raw"+strconv.Itoa(round)+"-")
		if err != nil {
			return rep, err
		}
		rawSync += d
		d, err = rig.StoreAppend(ctx, o.N/2, "s"+strconv.Itoa(round)+"-")
		if err != nil {
			return rep, err
		}
		storeSync += d
	}
	f := rate("Store.Append (sync, expected version + msg id)", o.N, storeSync, rawSync)
	f.Note = "baseline: raw sync PublishMsg with the same headers and payload size"
	rep.Figures = append(rep.Figures, f)

	step("batched appends")
	rawAsync, err := rig.RawAsyncPublish(ctx, o.N, 1000)
	if err != nil {
		return rep, err
	}
	storeBatch, err := rig.StoreAppendBatch(ctx, o.N, 1000)
	if err != nil {
		return rep, err
	}
	f = rate("Store.AppendBatch (async, 1000 per window)", o.N, storeBatch, rawAsync)
	f.Note = "baseline: raw PublishMsgAsync with the same headers, same windows"
	rep.Figures = append(rep.Figures, f)

	step("projection apply")
	n, rawRead, err := rig.RawOrderedRead(ctx)
	if err != nil {
		return rep, err
	}
	applied, apply, err := rig.ProjectionApply(ctx)
	if err != nil {
		return rep, err
	}
	if applied != uint64(n) {
		return rep, fmt.Errorf("projection applied %d events, the log has %d", applied, n)
	}
	f = rate(fmt.Sprintf("projection apply (%d events, one document per aggregate)", n), n, apply, rawRead)
	f.Note = "baseline: raw ordered consumer reading and decoding the whole log, which holds only these events (no KV writes)"
	rep.Figures = append(rep.Figures, f)

	step("loads")
	storeLoads, rawLoads, err := rig.LoadLatency(ctx, "s0-", o.N/20, o.Loads)
	if err != nil {
		return rep, err
	}
	rep.Figures = append(rep.Figures,
		latency("Store.Load of a 10-event aggregate, p50", Percentile(storeLoads, 50), Percentile(rawLoads, 50)),
		latency("Store.Load of a 10-event aggregate, p99", Percentile(storeLoads, 99), Percentile(rawLoads, 99)),
	)
	rep.Figures[len(rep.Figures)-1].Note = "baseline: the same batched direct get without decoding"
	return rep, nil
}
