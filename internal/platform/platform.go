package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/queries"
	"github.com/contrailhq/contrail/handlers/responder"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/runworker"
	"github.com/contrailhq/contrail/handlers/sweeper"
	"github.com/contrailhq/contrail/handlers/tasks"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/console"
	"github.com/contrailhq/contrail/internal/dirlock"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/lease"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/llm"
	mcpclient "github.com/contrailhq/contrail/internal/mcp/client"
	"github.com/contrailhq/contrail/internal/metrics"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/router"
	"github.com/contrailhq/contrail/internal/userstorage"
	"github.com/contrailhq/contrail/projections"
)

// Platform is one running node.
type Platform struct {
	Config  config.Config
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	NS      *server.Server // nil when NATS is external
	NC      *nats.Conn
	JS      jetstream.JetStream
	Layout  natsx.Layout
	Store   *eventstore.Store
	Views   *projections.Runner
	// Commands are the commands of the Fixie and Assistants aggregates, one type per aggregate.
	Commands commands.Set
	Keys     *auth.Keys
	// Signer issues the tokens agents receive and verifies them when agents call back.
	Signer *auth.Signer
	// Auth authenticates every request: API keys and agent tokens.
	Auth *auth.Authenticator
	// Limits counts requests per key and queries per account; faces call CountQuery once per user query.
	Limits      *limits.Limits
	UserStorage *userstorage.Store
	Handlers    *runtime.Runtime
	Router      chi.Router
	// Models resolves model strings to providers (openai when configured, offline always).
	Models *llm.Router
	// Agents is the agent directory: built-ins and registered agents.
	Agents *agents.Registry
	// EmbedURLs signs the URLs of embeds.
	EmbedURLs *fixieapi.Signer
	// Blobs holds uploaded files.
	Blobs *blobs.Store
	// RunWorker drives Assistants runs; Sweeper expires them (each at its scheduled expiry) and re-drives those
	// nobody drives.
	RunWorker *runworker.Worker
	// Responder is the Responses API's model loop.
	Responder *responder.Loop
	Sweeper   *sweeper.Sweeper
	// Embedder turns text into vectors (routing, the offline model); Index is the routing index; AgentClient
	// calls agents over HTTP with the platform's tokens.
	Embedder    embedding.Embedder
	Index       *router.Index
	AgentClient *agentproto.Client
	// Sessions is the node's session repository, shared by the session commands and the query handlers.
	Sessions *eventstore.Repo[session.State, *session.State]
	// queries are the handlers that answer sessions' queries: the session commands ask them for a session's front
	// agent, and the runtime runs their consumer. One set, made once.
	queries *queries.Handlers
	// SessionCommands open sessions and post queries.
	SessionCommands *commands.Sessions
	// Julep is Julep's API on this node (julepwiring.go).
	Julep *JulepParts
	// Vectors are the Assistants API's vector stores.
	Vectors *VectorParts
	// MCP calls remote MCP servers, those of --mcp-hosts only (mcpwiring.go).
	MCP *mcpclient.Client
	// mcpSeal seals the mcp tool's headers for the log and opens them for a call.
	mcpSeal *mcpclient.Sealer
	// compactSeal seals the summaries of /v1/responses/compact for the client to carry and opens them.
	compactSeal *compaction.Sealer
	// code is the sandbox code_interpreter runs in, made when first needed.
	code *codeSandbox
	// Now is the platform's clock (tests inject one).
	Now func() time.Time
	// dataLock keeps a second node off the data dir while the embedded server uses it.
	dataLock *dirlock.Lock
	stopFeed context.CancelFunc
	feedDone chan struct{}
	// agentModels is the model the agents' dispatch uses: the router, wrapped when Options.WrapModels says so.
	agentModels llm.Provider

	// stopping is set when Stop or Kill begins: a connection closed after it is closed on purpose.
	stopping atomic.Bool
	// closed is closed when the node's NATS connection closes for good while the node runs.
	closed chan struct{}

	handlersReady atomic.Bool
	handlersDone  chan error
	stopHandlers  context.CancelFunc
	stopOnce      sync.Once
	stopSweeper   context.CancelFunc
	sweeperDone   chan struct{}
	// leases is the bucket of the one-node-at-a-time jobs: the run sweeper and the task timers' sweep.
	leases jetstream.KeyValue
}

// Options are what tests may change beyond the config.
type Options struct {
	Logger *slog.Logger
	Now    func() time.Time
	// RetryInterval shortens handler retries in tests.
	RetryInterval time.Duration
	// ExtraHandlers run beside the platform's own (tests of the handler runtime through a whole node).
	ExtraHandlers []runtime.Handler
	// WrapModels wraps the model router (benchmarks time the model calls).
	WrapModels func(llm.Provider) llm.Provider
	// WrapEmbedder wraps the embedder (tests count what is embedded).
	WrapEmbedder func(embedding.Embedder) embedding.Embedder
}

// Start brings a node up: it returns once the node can serve requests.
func Start(ctx context.Context, cfg config.Config, opts Options) (_ *Platform, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if cfg.NodeName == "" {
		host, _ := os.Hostname()
		cfg.NodeName = fmt.Sprintf("%s-%s", host, events.RandomToken(3))
	}
	p := &Platform{Config: cfg, Logger: logger, Metrics: metrics.New(), Now: opts.Now, handlersDone: make(chan error, 1),
		closed: make(chan struct{})}
	defer func() {
		if err != nil {
			p.Stop(context.Background())
		}
	}()
	steps := newStartSteps()
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	steps.done("connect")
	if err := p.openLog(ctx, opts, steps); err != nil {
		return nil, err
	}
	steps.done("projections")
	if p.Embedder, err = newEmbedder(cfg, logger); err != nil {
		return nil, err
	}
	if opts.WrapEmbedder != nil {
		p.Embedder = opts.WrapEmbedder(p.Embedder)
	}
	if p.Models, err = newModels(cfg, p.Embedder, logger); err != nil {
		return nil, err
	}
	steps.done("models")
	p.agentModels = p.Models
	if opts.WrapModels != nil {
		p.agentModels = opts.WrapModels(p.Models)
	}
	if p.Blobs, err = blobs.Open(ctx, p.JS, p.Layout.Names); err != nil {
		return nil, err
	}
	p.Keys = auth.NewKeys(projections.NewDirectory(p.Views))
	// Commands count queries against the limits, and agents are called with the signer's tokens: security opens
	// first.
	if err := p.openSecurity(ctx); err != nil {
		return nil, err
	}
	steps.done("security")
	if err := p.assembleAgents(ctx); err != nil {
		return nil, err
	}
	steps.done("agents")
	p.code = &codeSandbox{p: p}
	p.Commands = commands.New(commands.Config{Store: p.Store, Views: p.Views, Blobs: p.Blobs, RunTimeout: cfg.RunTimeout,
		Agents: p.Agents, Queries: p.Limits, Metadata: p.AgentClient, Models: p.Models, Sandbox: p.code.available})
	p.queries = p.QueryHandlers(false)
	p.SessionCommands = commands.NewSessions(p.Sessions, p.Agents, p.Limits, p.Commands.Embeds, p.queries)
	if err := p.assembleJulep(ctx); err != nil {
		return nil, err
	}
	steps.done("julep")
	if err := p.assembleVectorStores(); err != nil {
		return nil, err
	}
	steps.done("vector_stores")
	if err := p.assembleMCP(ctx); err != nil {
		return nil, err
	}
	steps.done("mcp")
	if err := p.bootstrapAdmin(ctx); err != nil {
		return nil, err
	}
	steps.done("admin")
	if err := p.startRuns(ctx); err != nil {
		return nil, err
	}
	steps.done("runs")
	if err := p.startHandlers(opts); err != nil {
		return nil, err
	}
	steps.done("handlers")
	p.startSweeper()
	if err := p.serveHTTP(); err != nil {
		return nil, err
	}
	steps.done("http")
	steps.log(logger)
	return p, nil
}

// openLog provisions the streams and buckets, opens the event store on them and starts the read models.
func (p *Platform) openLog(ctx context.Context, opts Options, steps *startSteps) error {
	names, err := natsx.NewNames(p.Config.Prefix)
	if err != nil {
		return err
	}
	replicas := p.Config.Replicas
	if replicas == 0 {
		replicas = natsx.AutoReplicas(p.NC)
	}
	p.Layout = natsx.Layout{Names: names, Replicas: replicas, DuplicateWindow: 10 * time.Minute, Buckets: buckets()}
	if err := natsx.Provision(ctx, p.JS, p.Layout, p.Logger); err != nil {
		return fmt.Errorf("provision streams and buckets: %w", err)
	}
	steps.done("provision")
	storeOpts := []eventstore.Option{eventstore.WithHistoryCache(4096), eventstore.WithClock(opts.Now),
		eventstore.WithMetrics(p.Metrics), eventstore.WithLogger(p.Logger)}
	if p.Layout.Replicas > 1 {
		storeOpts = append(storeOpts, eventstore.WithAtomicBatches())
	}
	p.Store = eventstore.NewStore(p.JS, names, events.NewRegistry(), storeOpts...)
	p.Views = projections.NewRunner(projections.Config{
		JS: p.JS, Store: p.Store, Layout: p.Layout, Holder: p.Config.NodeName, LeaseTTL: p.Config.LeaseTTL,
		ReadWait: p.Config.ReadWait, Metrics: p.Metrics, Logger: p.Logger.With("component", "projections"),
	}, allProjections()...)
	if err := p.Views.Start(ctx); err != nil {
		return fmt.Errorf("start projections: %w", err)
	}
	return nil
}

// serveHTTP makes the router of every face, the console's pages and the health and readiness routes.
func (p *Platform) serveHTTP() error {
	pages, err := console.New(console.Config{PublicURL: p.Config.Public()})
	if err != nil {
		return err
	}
	p.Router = httpapi.New(httpapi.Config{
		Auth:    p.Auth,
		Limiter: p.Limits,
		KeySet:  p.Signer,
		Metrics: p.Metrics,
		Logger:  p.Logger.With("component", "http"),
		Ready:   p.Ready,
		ReadyDetail: func() map[string]any {
			return map[string]any{"code_interpreter": p.code.status()}
		},
		Live:  p.Live,
		Faces: p.faces(),
		Open:  []httpapi.OpenFace{pages},
	})
	return nil
}

// openSecurity opens what authenticates and limits requests: the agent-token signer (its key set is created on
// the first start of the deployment), the authenticator, the usage limits and user storage.
func (p *Platform) openSecurity(ctx context.Context) error {
	kv, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(auth.SigningBucket))
	if err != nil {
		return fmt.Errorf("open signing key bucket: %w", err)
	}
	public := p.Config.Public()
	p.Signer, err = auth.OpenSigner(ctx, auth.SignerConfig{KV: kv, Secret: p.Config.SigningSecret, Audience: public,
		Audiences: []string{auth.FixieAudience}, Now: p.Now, Logger: p.Logger.With("component", "signer")})
	if err != nil {
		return err
	}
	// Agents call back with the token they were given: the platform's audience, or the one Fixie SDK agents
	// insist on. Both are audiences only this platform's keys sign for.
	p.Auth = auth.NewAuthenticator(p.Keys, p.Signer, public, auth.FixieAudience)
	p.Limits, err = limits.Open(ctx, limits.Config{JS: p.JS, Names: p.Layout.Names, Accounts: projections.AccountLimits{Views: p.Views}, Now: p.Now, Logger: p.Logger.With("component", "limits"),
		DailyQueries: p.Config.DailyQueries, RequestsPerMinute: p.Config.RequestsPerMinute})
	if err != nil {
		return err
	}
	p.UserStorage, err = userstorage.Open(ctx, p.JS, p.Layout.Names)
	return err
}

func (p *Platform) connect(ctx context.Context) error {
	cfg := p.Config
	var err error
	if cfg.NATSURL != "" {
		p.NC, err = natsx.ConnectURL(ctx, cfg.NATSURL, "contrail "+cfg.NodeName, p.Logger)
	} else {
		// Two embedded servers on one store corrupt it: the data dir is this node's until it stops.
		if p.dataLock, err = dirlock.Acquire(cfg.DataDir); err != nil {
			return err
		}
		p.NS, err = natsx.StartEmbedded(natsx.EmbeddedConfig{
			StoreDir:   natsx.DefaultStoreDir(cfg.DataDir),
			ConfigFile: cfg.NATSConfig,
			Listen:     cfg.NATSListen,
			ListenSet:  cfg.NATSListenSet,
			SyncAlways: cfg.SyncAlways,
			ServerName: cfg.NodeName,
			Logger:     p.Logger,
		})
		if err != nil {
			return err
		}
		p.NC, err = natsx.ConnectEmbedded(p.NS, "contrail "+cfg.NodeName)
	}
	if err != nil {
		return err
	}
	// nats.go reconnects after a lost connection, but closes it for good after some errors the server sends (a
	// protocol line over max_control_line was one: a 4 kB ID in a subject). The node cannot serve again without a
	// restart; it must not look alive.
	p.NC.SetClosedHandler(func(nc *nats.Conn) {
		if p.stopping.Load() {
			return
		}
		p.Logger.Error("the NATS connection closed for good; this node cannot serve until it is restarted", "err", nc.LastError())
		close(p.closed)
	})
	// An async publish whose stream leader died is never acknowledged: time it out so that its waiter retries.
	p.JS, err = jetstream.New(p.NC, jetstream.WithPublishAsyncTimeout(asyncAckWait))
	if err != nil {
		return fmt.Errorf("jetstream: %w", err)
	}
	return nil
}

// asyncAckWait bounds the wait for an async publish's acknowledgement; a live leader answers in milliseconds.
const asyncAckWait = 5 * time.Second

// newConn opens another connection to the same NATS, for components that need their own.
func (p *Platform) newConn() (*nats.Conn, error) {
	if p.NS != nil {
		return natsx.ConnectEmbedded(p.NS, "contrail handlers "+p.Config.NodeName)
	}
	return natsx.ConnectURL(context.Background(), p.Config.NATSURL, "contrail handlers "+p.Config.NodeName, p.Logger)
}

func (p *Platform) startHandlers(opts Options) error {
	rt, err := runtime.New(runtime.Config{
		Connect:       p.newConn,
		JS:            p.JS,
		Store:         p.Store,
		Names:         p.Layout.Names,
		Metrics:       p.Metrics,
		Logger:        p.Logger.With("component", "handlers"),
		RetryInterval: opts.RetryInterval,
		CloseTimeout:  p.Config.ShutdownTimeout,
		AckWait:       p.Config.HandlerAckWait,
		Retired:       queries.Retired(),
	})
	if err != nil {
		return err
	}
	for _, h := range append(p.handlers(), opts.ExtraHandlers...) {
		if err := rt.Add(h); err != nil {
			return err
		}
	}
	p.Handlers = rt
	ctx, cancel := context.WithCancel(context.Background())
	p.stopHandlers = cancel
	started := make(chan struct{})
	go func() {
		p.handlersDone <- rt.Run(ctx, func() {
			p.handlersReady.Store(true)
			close(started)
		})
	}()
	select {
	case <-started:
		return nil
	case err := <-p.handlersDone:
		p.handlersDone <- err
		return fmt.Errorf("start handlers: %w", err)
	case <-time.After(30 * time.Second):
		return errors.New("start handlers: not running after 30s")
	}
}

// runLocksBucket holds the lock of each run a worker drives; its TTL is the lease time.
const runLocksBucket = "run_locks"

// startRuns prepares the Assistants run worker and the timeout sweeper (the sweeper starts after the handlers).
func (p *Platform) startRuns(ctx context.Context) error {
	ttl := p.Config.LeaseTTL
	for _, b := range []natsx.BucketSpec{
		{Name: lease.Bucket, Description: "Leases of jobs one node runs at a time", TTL: ttl},
		{Name: runLocksBucket, Description: "Which node drives each Assistants run", TTL: ttl},
	} {
		if err := natsx.EnsureBucket(ctx, p.JS, p.Layout, b); err != nil {
			return err
		}
	}
	locks, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(runLocksBucket))
	if err != nil {
		return fmt.Errorf("open run locks: %w", err)
	}
	leases, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(lease.Bucket))
	if err != nil {
		return fmt.Errorf("open leases: %w", err)
	}
	p.leases = leases
	p.RunWorker, err = runworker.New(runworker.Config{
		Runs: p.Commands.Turns, Models: p.Models, Locks: locks, LockTTL: ttl, NC: p.NC, Names: p.Layout.Names,
		Holder: p.Config.NodeName, Files: runFiles{p}, Code: p.code, Images: p.Commands.Files, Now: p.Now,
		Logger: p.Logger.With("component", "run_worker"),
	})
	if err != nil {
		return err
	}
	p.Responder = responder.New(responder.Config{Responses: p.Commands.Responses, Models: p.Models, NC: p.NC, Names: p.Layout.Names,
		Executors: p.responseExecutors(), Images: p.Commands.Files, Texts: responseTexts{p}, Logger: p.Logger.With("component", "responder")})
	p.Sweeper = sweeper.New(sweeper.Config{
		Runs: p.Commands.Turns, Active: projections.ActiveRuns{Views: p.Views}, JS: p.JS, Names: p.Layout.Names, Leases: leases, LeaseTTL: ttl, Holder: p.Config.NodeName,
		Kick: p.RunWorker.Kick, Now: p.Now, Logger: p.Logger.With("component", "sweeper"),
	})
	return nil
}

func (p *Platform) startSweeper() {
	ctx, cancel := context.WithCancel(context.Background())
	p.stopSweeper, p.sweeperDone = cancel, make(chan struct{})
	go func() {
		defer close(p.sweeperDone)
		var wg sync.WaitGroup
		wg.Go(func() { p.Sweeper.Run(ctx) })
		wg.Go(func() {
			p.runAgain(ctx, "run expiries", func(ctx context.Context) error { return p.Sweeper.RunExpiries(ctx, nil) })
		})
		if p.Julep != nil {
			wg.Go(func() { p.runTaskTimers(ctx) })
		}
		wg.Wait()
	}()
}

// runTaskTimers runs the task engine's timers until ctx ends.
func (p *Platform) runTaskTimers(ctx context.Context) {
	owner := tasks.Owner{Leases: p.leases, TTL: p.Config.LeaseTTL, Holder: p.Config.NodeName}
	p.runAgain(ctx, "task timers", func(ctx context.Context) error {
		return p.Julep.Engine.RunTimers(ctx, julepLookup{p.Julep, p.Views}, owner, nil)
	})
}

// runAgain runs a consumer of the timers stream until ctx ends, starting it again after a failure (a NATS election
// while it starts).
func (p *Platform) runAgain(ctx context.Context, what string, run func(context.Context) error) {
	for ctx.Err() == nil {
		err := run(ctx)
		if err == nil || ctx.Err() != nil {
			return
		}
		p.Logger.Warn(what+" stopped; starting them again", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

// Handler is the node's HTTP handler.
func (p *Platform) Handler() http.Handler { return p.Router }

// Ready says whether the node can serve: NATS connected, the log's stream there, handlers running, and every
// projection caught up with the log.
func (p *Platform) Ready(ctx context.Context) error {
	if p.NC == nil || !p.NC.IsConnected() {
		return errors.New("nats not connected")
	}
	if _, err := p.JS.Stream(ctx, p.Layout.Names.EventsStream()); err != nil {
		return fmt.Errorf("events stream: %w", err)
	}
	if !p.handlersReady.Load() {
		return errors.New("handlers not running")
	}
	ok, name, err := p.Views.CaughtUp(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("projection %s is catching up", name)
	}
	return nil
}

// Live says whether the node can still serve once ready: not when its NATS connection closed for good (see
// Closed). /healthz answers with it.
func (p *Platform) Live(context.Context) error {
	select {
	case <-p.closed:
		reason := "closed"
		if err := p.NC.LastError(); err != nil {
			reason = err.Error()
		}
		return fmt.Errorf("nats connection lost for good (%s): restart the node", reason)
	default:
		return nil
	}
}

// Closed is closed when the node's NATS connection closes for good while the node runs: the node cannot serve
// again, and whoever runs it should stop it and start it again.
func (p *Platform) Closed() <-chan struct{} { return p.closed }

// Stop takes the node down cleanly: handlers stop taking events and finish or hand back those in flight,
// projections stop, the connection drains, and the embedded server shuts down.
func (p *Platform) Stop(ctx context.Context) {
	p.stopping.Store(true)
	p.stopOnce.Do(func() {
		p.stopRouting()
		p.stopJulep()
		if p.stopSweeper != nil {
			p.stopSweeper()
			<-p.sweeperDone
		}
		if p.stopHandlers != nil {
			p.stopHandlers()
			select {
			case err := <-p.handlersDone:
				if err != nil {
					p.Logger.Warn("handlers stopped with an error", "err", err)
				}
			case <-ctx.Done():
			}
		}
		if p.RunWorker != nil {
			// Runs in the middle of a turn get a few seconds to finish it; the rest are taken over elsewhere.
			wctx, cancel := context.WithTimeout(ctx, p.Config.ShutdownTimeout/4)
			p.RunWorker.Close(wctx)
			cancel()
		}
		if p.code != nil {
			p.code.shutdown()
		}
		if p.Views != nil {
			p.Views.Stop()
		}
		if p.NC != nil {
			_ = p.NC.Drain()
			p.NC.Close()
		}
		if p.NS != nil {
			p.NS.Shutdown()
			p.NS.WaitForShutdown()
		}
		p.dataLock.Release()
	})
}

// Kill drops the node as a crash would: the embedded server goes away without the node stopping anything first.
// For tests of crash safety.
func (p *Platform) Kill() {
	p.stopping.Store(true)
	p.stopOnce.Do(func() {
		p.stopRouting()
		p.stopJulep()
		if p.stopSweeper != nil {
			p.stopSweeper()
		}
		if p.RunWorker != nil {
			p.RunWorker.Abort()
		}
		if p.code != nil {
			p.code.shutdown()
		}
		if p.stopHandlers != nil {
			p.stopHandlers()
		}
		if p.NS != nil {
			p.NS.Shutdown()
		}
		// A crashed process loses its lock with it; the next node in this process must find the dir free.
		p.dataLock.Release()
		if p.NC != nil {
			p.NC.Close()
		}
		if p.Views != nil {
			p.Views.Stop()
		}
	})
}

// bootstrapAdmin creates the admin account on first start and makes CONTRAIL_ADMIN_KEY a key of it. A generated key
// is written to <data-dir>/admin.key (mode 0600) and only its location is logged.
func (p *Platform) bootstrapAdmin(ctx context.Context) error {
	history, _, err := p.Store.Load(ctx, events.Ref{Type: "account", ID: commands.AdminAccountID})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	system := auth.Principal{AccountID: commands.AdminAccountID}
	if len(history) > 0 {
		if p.Config.AdminKey != "" {
			k, err := p.Commands.Accounts.IssueKey(ctx, system, commands.AdminAccountID, "CONTRAIL_ADMIN_KEY", p.Config.AdminKey)
			err = p.Views.ShowsWrite(ctx, k.Appended, err, projections.Accounts{})
			if err != nil {
				return fmt.Errorf("bootstrap: issue CONTRAIL_ADMIN_KEY: %w", err)
			}
		}
		return nil
	}
	key := p.Config.AdminKey
	generated := key == ""
	if generated {
		key = auth.NewKey()
	}
	k, err := p.Commands.Accounts.Create(ctx, system, commands.NewAccount{ID: commands.AdminAccountID, Name: "admin", Admin: true, Key: key})
	if errs.CodeOf(err) == errs.Conflict {
		return nil // another node bootstrapped at the same moment
	}
	// The key works once the accounts read model shows it: the platform is ready only then.
	err = p.Views.ShowsWrite(ctx, k.Appended, err, projections.Accounts{})
	if err != nil {
		return fmt.Errorf("bootstrap admin account: %w", err)
	}
	if !generated {
		p.Logger.Info("admin account created with the key from CONTRAIL_ADMIN_KEY")
		return nil
	}
	path := p.Config.AdminKeyFile()
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if err := os.WriteFile(path, []byte(key+"\n"), 0o600); err != nil {
		return fmt.Errorf("bootstrap: write admin key: %w", err)
	}
	p.Logger.Info("admin account created; its API key is in "+path, "file", path)
	return nil
}
