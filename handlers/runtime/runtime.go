package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/ThreeDotsLabs/watermill/message/router/middleware"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/sync/errgroup"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/metrics"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Handler is one reactor.
type Handler struct {
	// Name names the durable consumer and the poison subject: letters, digits, '_' and '-'.
	Name string
	// EventTypes are what it reacts to ("session.message_posted", or "session.*").
	EventTypes []string
	// Handle reacts to one event. It must be idempotent: an event can be delivered more than once. Returning an
	// error retries it (with backoff) up to MaxAttempts times; Permanent(err) gives up at once. After the last
	// attempt the event goes to the dead-letter queue.
	Handle func(ctx context.Context, e events.Envelope) error
	// Concurrency is how many events this node handles at once (default 1).
	Concurrency int
	// MaxAttempts bounds the attempts in one delivery (default 5).
	MaxAttempts int
	// AckWait is how long the server waits for an answer before it redelivers; the runtime sends heartbeats while
	// Handle runs, so long work is fine (default 30s).
	AckWait time.Duration
	// Prefetch is how many events a node holds per worker, those being handled included (default 4). A handler
	// whose work is slow (a model call, an agent over HTTP) keeps it at 1, so that events go to the node with a
	// free worker rather than wait behind a busy one.
	Prefetch int
	// Formerly is the name the handler had before (a renamed handler). Its consumer takes over the old one: it is
	// made to start at the old consumer's ack floor, so that nothing the old one had not settled is lost and the log
	// before it is not handled again, and the old consumer is deleted. The old name is marked taken over first (see
	// RetiredBucket), and is not used again by any handler.
	Formerly string
}

// RetiredBucket holds, by handler name, the handlers a build took over (renamed: Handler.Formerly) or retired
// (Config.Retired). In a rolling upgrade a node of the older build may start after a newer one deleted the old
// consumer; made afresh, the consumer would read the log from its start, and a later retiring would hand all of it
// to the running handlers. A node about to make a handler's consumer that does not exist looks here first, and does
// not run a handler named here. A name once marked is therefore never a handler's again.
const RetiredBucket = "retired_handlers"

// Buckets lists the KV buckets the runtime needs; the platform provisions them.
func Buckets() []natsx.BucketSpec {
	return []natsx.BucketSpec{{Name: RetiredBucket, Description: "Handlers a newer build took over or retired, by name"}}
}

// successor is the value of a handler's key in RetiredBucket.
type successor struct {
	// By is the handler that took the consumer over; empty when the handler was retired.
	By string `json:"by,omitempty"`
}

// permanent marks an error not worth retrying.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps an error that retrying cannot fix: the event goes to the dead-letter queue at once.
func Permanent(err error) error { return permanent{err: err} }

// Config wires the runtime.
type Config struct {
	// Connect opens a NATS connection for the runtime's own use: watermill's subscriber drains the connection it is
	// given when it closes, so it must not share the node's main one.
	Connect func() (*nats.Conn, error)
	JS      jetstream.JetStream
	Store   *eventstore.Store
	Names   natsx.Names
	Metrics *metrics.Metrics
	Logger  *slog.Logger
	// MaxDeliveries sends an event to the dead-letter queue once the server has delivered it this many times without
	// an answer (a handler that crashes the node on it, every time). Default 10.
	MaxDeliveries int
	// RetryInterval is the first pause between attempts (default 100ms; tests shorten it).
	RetryInterval time.Duration
	// CloseTimeout bounds how long a stop waits for handlers in flight (default 20s).
	CloseTimeout time.Duration
	// ShrinkPullsEvery is how often a handler whose workers each pull for themselves (Prefetch 1) lets go of the
	// pulls the work no longer needs (default 10s; tests shorten it).
	ShrinkPullsEvery time.Duration
	// AckWait, when set, replaces every handler's own: how long after a node dies its deliveries go to another
	// (tests of crash recovery shorten it; heartbeats keep long work alive whatever it is).
	AckWait time.Duration
	// Retired names handlers that no longer exist: their consumers are deleted at start, so that the server does
	// not keep the events they would have taken, once the events they still hold have been handed to the running
	// handlers that take their types. Each is marked retired first (RetiredBucket).
	Retired []string
}

// Runtime runs handlers until stopped.
type Runtime struct {
	cfg      Config
	handlers map[string]Handler
	order    []string
	router   *message.Router
	// inflight holds the deliveries taken and not yet answered (to hand back on stop), with their envelope decoded
	// once for every attempt.
	inflight sync.Map // delivery reply subject -> delivered
	wmLog    watermill.LoggerAdapter
	stopping chan struct{}
	// gone are the handlers not run because a newer build took their consumers over or retired them; set by Run
	// before anything reads it.
	gone map[string]bool
	// graceCtx ends when a stop begins: handlers in flight are cancelled and their deliveries handed back.
	graceCtx    context.Context
	graceCancel context.CancelFunc
}

// New creates a runtime; add handlers, then Run it.
func New(cfg Config) (*Runtime, error) {
	for _, name := range cfg.Retired {
		if !natsx.ValidToken(name) {
			return nil, fmt.Errorf("retired handler name %q: letters, digits, '_' and '-' only", name)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Metrics == nil {
		cfg.Metrics = metrics.New()
	}
	if cfg.MaxDeliveries == 0 {
		cfg.MaxDeliveries = 10
	}
	if cfg.RetryInterval == 0 {
		cfg.RetryInterval = 100 * time.Millisecond
	}
	if cfg.CloseTimeout == 0 {
		cfg.CloseTimeout = 20 * time.Second
	}
	// Watermill logs every message at Info; that is Debug for us. Its lines say they are watermill's; the caller's
	// logger already names the component, and a second "component" would repeat the key.
	wmLog := watermill.NewSlogLoggerWithLevelMapping(cfg.Logger.With("library", "watermill"),
		map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
	grace, cancel := context.WithCancel(context.Background())
	return &Runtime{cfg: cfg, handlers: map[string]Handler{}, wmLog: wmLog, stopping: make(chan struct{}),
		graceCtx: grace, graceCancel: cancel}, nil
}

// Add registers a handler. Call before Run.
func (rt *Runtime) Add(h Handler) error {
	if !natsx.ValidToken(h.Name) {
		return fmt.Errorf("handler name %q: letters, digits, '_' and '-' only", h.Name)
	}
	if _, dup := rt.handlers[h.Name]; dup {
		return fmt.Errorf("handler %q added twice", h.Name)
	}
	if h.Formerly != "" && (!natsx.ValidToken(h.Formerly) || h.Formerly == h.Name) {
		return fmt.Errorf("handler %q: former name %q: letters, digits, '_' and '-' only, not its own", h.Name, h.Formerly)
	}
	if len(h.EventTypes) == 0 || h.Handle == nil {
		return fmt.Errorf("handler %q: needs event types and a Handle func", h.Name)
	}
	if h.Concurrency <= 0 {
		h.Concurrency = 1
	}
	if h.MaxAttempts <= 0 {
		h.MaxAttempts = 5
	}
	if h.AckWait <= 0 {
		h.AckWait = 30 * time.Second
	}
	if h.Prefetch <= 0 {
		h.Prefetch = 4
	}
	if rt.cfg.AckWait > 0 {
		h.AckWait = rt.cfg.AckWait
	}
	rt.handlers[h.Name] = h
	rt.order = append(rt.order, h.Name)
	return nil
}

// Handlers lists the registered handler names.
func (rt *Runtime) Handlers() []string { return append([]string(nil), rt.order...) }

// Metadata keys the runtime puts on watermill messages.
const (
	mdDelivery = "contrail_delivery" // identifies one delivery of one message, for heartbeats
	mdSeq      = "contrail_seq"      // stream sequence in EVENTS
	mdHandler  = "contrail_handler"
	mdRedriven = "contrail_redriven"
)

// Run starts every handler and blocks until ctx ends; then it stops taking events, waits for those in flight (up to
// CloseTimeout; what does not finish is handed back to the server), and returns.
func (rt *Runtime) Run(ctx context.Context, ready func()) error {
	if len(rt.order) == 0 {
		// A router without handlers closes itself at once; there is nothing to run.
		if ready != nil {
			ready()
		}
		<-ctx.Done()
		return nil
	}
	// One subscriber (and connection) per handler: it asks the server for about as many events at a time as the
	// node's workers can take on (pullBatch), so that work spreads over the nodes sharing a consumer instead of
	// piling up on whichever pulled first; a connection of its own keeps one handler's flow control from holding
	// another's up.
	subs := make(map[string]*subscriber, len(rt.order))
	redrives := make(map[string]*subscriber, len(rt.order))
	var conns []*nats.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// The consumers are made side by side before the router subscribes, which it does one handler after another:
	// each is a request the server answers once it has written the consumer's state to disk.
	var madeMu sync.Mutex
	made := make(map[string]jetstream.Consumer, 2*len(rt.order))
	premade := func(ctx context.Context, js jetstream.JetStream, topic string) (jetstream.Consumer, error) {
		madeMu.Lock()
		c, ok := made[topic]
		madeMu.Unlock()
		if ok {
			return c, nil
		}
		return rt.consumerFor(ctx, js, topic)
	}
	for _, name := range rt.order {
		h := rt.handlers[name]
		conn, err := rt.cfg.Connect()
		if err != nil {
			return fmt.Errorf("handlers: connect: %w", err)
		}
		conns = append(conns, conn)
		js, err := jetstream.New(conn)
		if err != nil {
			return fmt.Errorf("handlers: jetstream for %s: %w", name, err)
		}
		newSub := func(pulls int) *subscriber {
			return &subscriber{
				js:           js,
				consumer:     premade,
				unmarshal:    unmarshaler{rt: rt}.Unmarshal,
				nakDelay:     time.Second,
				drainTimeout: rt.cfg.CloseTimeout,
				workers:      workers(h),
				pulls:        pulls,
				shrinkEvery:  rt.cfg.ShrinkPullsEvery,
				opts:         []jetstream.PullConsumeOpt{jetstream.PullMaxMessages(pullBatch(h))},
				log:          rt.cfg.Logger,
				closing:      make(chan struct{}),
			}
		}
		// Re-driven events are few: one pull serves them.
		subs[name], redrives[name] = newSub(h.Concurrency/workers(h)), newSub(1)
	}
	// A handler's re-driven events are its own: a handler that a newer build took over (its consumer of the log
	// not made) takes none, so its consumers are made one after the other.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	gone := make(map[string]bool)
	for _, name := range rt.order {
		g.Go(func() error {
			for _, topic := range []string{"events:" + name, "redrive:" + name} {
				c, err := rt.consumerFor(gctx, subs[name].js, topic)
				var over takenOver
				if errors.As(err, &over) {
					by := over.by
					if by == "" {
						by = "(retired)"
					}
					rt.cfg.Logger.Info("handlers: not running a handler whose consumer a newer build took over or retired; this node's build is older and should be upgraded",
						"handler", name, "taken_over_by", by)
					madeMu.Lock()
					gone[name] = true
					madeMu.Unlock()
					return nil
				}
				if err != nil {
					return err
				}
				madeMu.Lock()
				made[topic] = c
				madeMu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("handlers: %w", err)
	}
	// Retiring starts once the running handlers are known: it hands events only to them.
	rt.gone = gone
	retireCtx, stopRetiring := context.WithCancel(ctx)
	retired := make(chan struct{})
	go func() {
		defer close(retired)
		rt.retire(retireCtx)
	}()
	defer func() {
		stopRetiring()
		<-retired
	}()
	if len(gone) == len(rt.order) {
		// A router without handlers closes itself at once; there is nothing to run.
		if ready != nil {
			ready()
		}
		<-ctx.Done()
		return nil
	}
	router, err := message.NewRouter(message.RouterConfig{CloseTimeout: rt.cfg.CloseTimeout}, rt.wmLog)
	if err != nil {
		return fmt.Errorf("handlers: router: %w", err)
	}
	rt.router = router
	// A failure caused by stopping is not poison: the event is handed back and handled after the restart.
	poison, err := middleware.PoisonQueueWithFilter(dlqPublisher{rt: rt}, "dlq", func(error) bool { return !rt.isStopping() })
	if err != nil {
		return err
	}
	router.AddMiddleware(rt.forget, middleware.CorrelationID, poison)
	for _, name := range rt.order {
		if gone[name] {
			continue
		}
		h := rt.handlers[name]
		fn := rt.wrap(h)
		// One router handler per consumer, whatever the workers: the router runs each message it is handed in a
		// goroutine of its own, and the subscription hands over no more than the workers can take on.
		wh := router.AddNoPublisherHandler(name, "events:"+name, subs[name], fn)
		rt.addHandlerMiddleware(wh, h)
		wh = router.AddNoPublisherHandler(name+"#redrive", "redrive:"+name, redrives[name], fn)
		rt.addHandlerMiddleware(wh, h)
	}
	go func() {
		<-router.Running()
		if ready != nil {
			ready()
		}
	}()
	runErr := make(chan error, 1)
	go func() { runErr <- router.Run(context.Background()) }()
	select {
	case <-ctx.Done():
	case err := <-runErr:
		return fmt.Errorf("handlers stopped: %w", err)
	}
	close(rt.stopping)
	// Work in flight is cancelled at once (a model call, a func call): every handler's work is resumable from the
	// log, so what was cancelled is handed back and done again, after the restart or on another node, rather than
	// holding the stop up.
	rt.graceCancel()
	err = router.Close()
	rt.nakInflight()
	if err != nil {
		return fmt.Errorf("handlers: stop: %w", err)
	}
	return nil
}

// sharedPull is the Concurrency from which a node serves all of a handler's workers with one pull, when the handler
// may hold events beyond its busy workers (Prefetch above 1). Below it, or with Prefetch 1, each worker has a pull of
// its own whose callback waits for the handler's answer, so that a node asks for an event only when a worker is free
// (the pulls of one handler share its subscription, router handler and connection). A shared subscription asks for Concurrency×(Prefetch−1) events at a time, so at least this
// many: nats.go asks for more only when a delivery's callback returns, and a callback that returns the moment it
// hands an event over can do so before the request that brought it is marked sent, which leaves a batch of one
// waiting for nothing until the heartbeat check (30 s).
const sharedPull = 8

// workers is how many of a handler's workers one pull serves.
func workers(h Handler) int {
	if h.Concurrency < sharedPull || h.Prefetch <= 1 {
		return 1
	}
	return h.Concurrency
}

// pullBatch is how many deliveries a subscription asks for at a time beyond those its workers are on:
// Concurrency×Prefetch held in all, as when each worker had its own; with one worker, Prefetch in all.
func pullBatch(h Handler) int {
	if workers(h) == 1 {
		return h.Prefetch
	}
	return h.Concurrency * (h.Prefetch - 1)
}

func (rt *Runtime) addHandlerMiddleware(wh *message.Handler, h Handler) {
	wh.AddMiddleware(
		middleware.Retry{
			MaxRetries:          h.MaxAttempts - 1,
			InitialInterval:     rt.cfg.RetryInterval,
			MaxInterval:         30 * rt.cfg.RetryInterval,
			Multiplier:          2,
			RandomizationFactor: 0.3,
			ResetContextOnRetry: true,
			ShouldRetry: func(p middleware.RetryParams) bool {
				var perm permanent
				return !errors.As(p.Err, &perm) && !rt.isStopping()
			},
		}.Middleware,
		middleware.Recoverer,
	)
}

// retire deletes the consumers of retired handlers. A retired handler's consumer may still hold events nobody
// handled: an older build stopped before it got to them, and the handler that took its work over reads the log from
// where its own consumer was. Each of those events is first handed to the running handler that takes its type, so
// that retiring a handler loses none of its work. It runs beside the handlers (an event delivered to a node that
// died comes back only after its ack wait); a consumer that could not be emptied is left to the next start.
func (rt *Runtime) retire(ctx context.Context) {
	for _, name := range rt.cfg.Retired {
		if _, ok := rt.handlers[name]; ok {
			continue
		}
		// Marked first, so that an older build's node that starts once the consumer is gone does not make it again.
		if err := rt.mark(ctx, rt.cfg.JS, name, ""); err != nil {
			if ctx.Err() != nil {
				return
			}
			rt.cfg.Logger.Warn("handlers: could not mark a handler retired; retiring it at the next start", "handler", name, "err", err)
			continue
		}
		durable := rt.cfg.Names.Consumer("h", name)
		cons, err := rt.cfg.JS.Consumer(ctx, rt.cfg.Names.EventsStream(), durable)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			continue
		}
		if err == nil {
			err = rt.drain(ctx, cons)
		}
		if err == nil {
			dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err = rt.cfg.JS.DeleteConsumer(dctx, rt.cfg.Names.EventsStream(), durable)
			cancel()
		}
		switch {
		case err == nil:
			rt.cfg.Logger.Info("handlers: deleted the consumer of a retired handler", "handler", name)
		case ctx.Err() != nil:
			return
		case !errors.Is(err, jetstream.ErrConsumerNotFound):
			rt.cfg.Logger.Warn("handlers: could not retire the consumer of a retired handler; trying again at the next start",
				"handler", name, "err", err)
		}
	}
}

// drainWait bounds how long retire waits for a retired consumer's events: long enough for those delivered to a
// node that died to come back.
const drainWait = time.Minute

// drain hands what a retired consumer holds to the running handlers that take its events' types, until it holds
// nothing, not even a delivery waiting for its ack.
func (rt *Runtime) drain(ctx context.Context, cons jetstream.Consumer) error {
	ctx, cancel := context.WithTimeout(ctx, drainWait)
	defer cancel()
	for {
		info, err := cons.Info(ctx)
		if err != nil {
			return fmt.Errorf("retired consumer: %w", err)
		}
		if info.NumPending == 0 && info.NumAckPending == 0 {
			return nil
		}
		batch, err := cons.Fetch(16, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			return fmt.Errorf("read the retired consumer %s: %w", info.Name, err)
		}
		for m := range batch.Messages() {
			if err := rt.handOver(ctx, m); err != nil {
				_ = m.Nak()
				return fmt.Errorf("hand over an event of the retired consumer %s: %w", info.Name, err)
			}
			if err := m.DoubleAck(ctx); err != nil {
				return fmt.Errorf("acknowledge an event of the retired consumer %s: %w", info.Name, err)
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			return fmt.Errorf("read the retired consumer %s: %w", info.Name, err)
		}
	}
}

// handOver handles one event of a retired consumer with the running handler that takes its type. An event no
// running handler takes goes with the consumer, as every event did before retiring handed any over.
func (rt *Runtime) handOver(ctx context.Context, m jetstream.Msg) error {
	md, err := m.Metadata()
	if err != nil {
		return err
	}
	env, err := rt.cfg.Store.DecodeEnvelope(m.Data())
	if err != nil {
		return err // not an event any handler could take: leave it for someone to look at
	}
	env.Sequence = md.Sequence.Stream
	for _, name := range rt.order {
		h := rt.handlers[name]
		if !takes(h, env.Type) {
			continue
		}
		if rt.gone[name] {
			// Its work is a newer build's now: the event stays for that build's retiring to hand over.
			return fmt.Errorf("handler %s, which takes %s, was taken over by a newer build", name, env.Type)
		}
		return h.Handle(ctx, env)
	}
	return nil
}

// takes reports whether a handler takes events of a type: named whole, or by its aggregate ("session.*").
func takes(h Handler, eventType string) bool {
	agg, _, _ := strings.Cut(eventType, ".")
	for _, t := range h.EventTypes {
		if t == eventType || t == agg+".*" {
			return true
		}
	}
	return false
}

func (rt *Runtime) isStopping() bool {
	select {
	case <-rt.stopping:
		return true
	default:
		return false
	}
}

// consumerFor is watermill's ResourceInitializer: a topic names a handler's consumer of the log ("events:<name>")
// or of re-driven events ("redrive:<name>"). Several nodes and workers share each durable consumer.
func (rt *Runtime) consumerFor(ctx context.Context, js jetstream.JetStream, topic string) (jetstream.Consumer, error) {
	kind, name, _ := strings.Cut(topic, ":")
	h, ok := rt.handlers[name]
	if !ok {
		return nil, fmt.Errorf("no handler %q", name)
	}
	stream := rt.cfg.Names.EventsStream()
	cfg := jetstream.ConsumerConfig{
		Durable:       rt.cfg.Names.Consumer("h", name),
		Description:   "handler " + name,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       h.AckWait,
		DeliverPolicy: jetstream.DeliverAllPolicy,
		MaxAckPending: 1000,
	}
	for _, t := range h.EventTypes {
		cfg.FilterSubjects = append(cfg.FilterSubjects, rt.cfg.Names.TypeFilter(t))
	}
	if kind == "redrive" {
		stream = rt.cfg.Names.RedriveStream()
		cfg.Durable = rt.cfg.Names.Consumer("redrive", name)
		cfg.FilterSubjects = []string{rt.cfg.Names.RedriveSubject(name)}
	}
	// A node may start while the cluster elects leaders (a server restarted a moment ago): the creation is tried
	// again until the provisioning deadline, as the streams' own is, rather than stopping the node.
	var cons jetstream.Consumer
	var over *takenOver
	err := natsx.Retry(ctx, rt.cfg.Logger, "consumer for handler "+name, func(ctx context.Context) error {
		var err error
		switch {
		case kind == "redrive":
			cons, err = js.CreateOrUpdateConsumer(ctx, stream, cfg)
			return err
		case h.Formerly == "":
			// A consumer that exists is used as it is (one request, as every start makes it); one that does not is
			// made unless a newer build took it over.
			if cons, err = js.UpdateConsumer(ctx, stream, cfg); !errors.Is(err, jetstream.ErrConsumerDoesNotExist) {
				return err
			}
			if over, err = rt.takenOverBy(ctx, js, name); err != nil || over != nil {
				return err
			}
			cons, err = js.CreateOrUpdateConsumer(ctx, stream, cfg)
			return err
		}
		former := rt.cfg.Names.Consumer("h", h.Formerly)
		if cfg, over, err = rt.takeOver(ctx, js, cfg, name, former); err != nil || over != nil {
			return err
		}
		// The old name is marked before its consumer is deleted: from then on an older build's node finds the mark
		// rather than no consumer. It is marked at every start, so that a takeover done before marks existed is
		// marked too.
		if err := rt.mark(ctx, js, h.Formerly, name); err != nil {
			return err
		}
		if cons, err = js.CreateOrUpdateConsumer(ctx, stream, cfg); err != nil {
			return err
		}
		err = js.DeleteConsumer(ctx, stream, former)
		if err == nil {
			rt.cfg.Logger.Info("handlers: a renamed handler's consumer took over from its old one", "handler", name, "was", h.Formerly)
		}
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			err = nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("consumer for handler %s: %w", name, err)
	}
	if over != nil {
		return nil, *over
	}
	return cons, nil
}

// takeOver sets where a renamed handler's consumer starts. Once made, it keeps where it started (a consumer's start
// cannot change); the first time, it starts where the old consumer's settled deliveries end, as the old one would
// have gone on: what the old one had delivered and not had acknowledged is delivered again, and every handler takes
// an event twice safely. With neither, it reads the log from the start, as any new handler does. A consumer not yet
// made whose handler a newer build took over in its turn is not made: takeOver reports who took it.
func (rt *Runtime) takeOver(ctx context.Context, js jetstream.JetStream, cfg jetstream.ConsumerConfig, name, former string) (jetstream.ConsumerConfig, *takenOver, error) {
	stream := rt.cfg.Names.EventsStream()
	cur, err := js.Consumer(ctx, stream, cfg.Durable)
	if err == nil {
		info := cur.CachedInfo()
		cfg.DeliverPolicy, cfg.OptStartSeq = info.Config.DeliverPolicy, info.Config.OptStartSeq
		return cfg, nil, nil
	}
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return cfg, nil, err
	}
	if over, err := rt.takenOverBy(ctx, js, name); err != nil || over != nil {
		return cfg, over, err
	}
	old, err := js.Consumer(ctx, stream, former)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return cfg, nil, nil
	}
	if err != nil {
		return cfg, nil, err
	}
	cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
	cfg.OptStartSeq = old.CachedInfo().AckFloor.Stream + 1
	return cfg, nil, nil
}

// takenOver says that a handler's consumer is not made: a newer build took it over (by names the handler that did)
// or retired it (by is empty).
type takenOver struct{ handler, by string }

func (t takenOver) Error() string {
	if t.by == "" {
		return fmt.Sprintf("handler %s was retired by a newer build", t.handler)
	}
	return fmt.Sprintf("handler %s was taken over by %s, of a newer build", t.handler, t.by)
}

// takenOverBy reads a handler's mark in RetiredBucket: nil when it has none. It asks the bucket's leader, which has
// every mark the server acknowledged, so that a mark put just before a consumer's deletion is seen once the
// consumer is gone. A bucket not provisioned holds no mark.
func (rt *Runtime) takenOverBy(ctx context.Context, js jetstream.JetStream, name string) (*takenOver, error) {
	if !natsx.ValidKey(name, false) {
		return nil, fmt.Errorf("handler name %q is not a key", name)
	}
	v, ok, err := natsx.LeaderKVGet(ctx, js.Conn(), rt.cfg.Names.Bucket(RetiredBucket), name)
	if err != nil || !ok {
		return nil, err
	}
	// A mark is a mark whatever its value says: one that does not decode names no successor.
	var s successor
	_ = json.Unmarshal(v, &s)
	return &takenOver{handler: name, by: s.By}, nil
}

// mark records in RetiredBucket that handler name was taken over by handler by (retired, when by is empty). A mark
// that exists is kept: the first says what became of the handler.
func (rt *Runtime) mark(ctx context.Context, js jetstream.JetStream, name, by string) error {
	if !natsx.ValidKey(name, false) {
		return fmt.Errorf("handler name %q is not a key", name)
	}
	kv, err := js.KeyValue(ctx, rt.cfg.Names.Bucket(RetiredBucket))
	if err != nil {
		return fmt.Errorf("open %s: %w", RetiredBucket, err)
	}
	v, _ := json.Marshal(successor{By: by})
	if _, err := kv.Create(ctx, name, v); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("mark handler %s taken over: %w", name, err)
	}
	return nil
}

// unmarshaler turns a delivery into a watermill message carrying the envelope JSON and its correlation ID, and
// remembers the delivery, decoded, so that the handler's wrapper decodes nothing and can send heartbeats (or a nak on
// stop) for it.
type unmarshaler struct{ rt *Runtime }

// delivered is a delivery taken: its envelope, or why it does not decode.
type delivered struct {
	env events.Envelope
	err error
}

func (u unmarshaler) Unmarshal(m jetstream.Msg) (*message.Message, error) {
	md, err := m.Metadata()
	if err != nil {
		return nil, fmt.Errorf("delivery metadata: %w", err)
	}
	delivery := m.Reply() // unique per delivery
	wm := message.NewMessage(delivery, m.Data())
	wm.Metadata.Set(mdDelivery, delivery)
	wm.Metadata.Set(mdHandler, strings.TrimPrefix(strings.TrimPrefix(md.Consumer, u.rt.cfg.Names.Consumer("h", "")), u.rt.cfg.Names.Consumer("redrive", "")))
	seq := md.Sequence.Stream
	if s := m.Headers().Get(deadletter.HeaderSeq); s != "" {
		seq, _ = strconv.ParseUint(s, 10, 64)
		wm.Metadata.Set(mdRedriven, "true")
	}
	wm.Metadata.Set(mdSeq, strconv.FormatUint(seq, 10))
	wm.Metadata.Set("deliveries", strconv.FormatUint(md.NumDelivered, 10))
	env, err := u.rt.cfg.Store.DecodeEnvelope(m.Data())
	env.Sequence = seq
	if err == nil && env.CorrelationID != "" {
		middleware.SetCorrelationID(env.CorrelationID, wm)
	}
	u.rt.inflight.Store(delivery, delivered{env: env, err: err})
	return wm, nil
}
