package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform"
)

func newServeCmd() *cobra.Command {
	cfg := config.Defaults()
	logLevel := "info"
	var samples bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Contrail node (embedded NATS unless --nats-url is given)",
		Long: "Run a Contrail node: the HTTP faces on --addr, NATS embedded (files in --data-dir) unless --nats-url is given.\n" +
			"Every flag has an environment twin, named beside it; a flag given on the command line wins over it.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnvTwins(cmd.Flags()); err != nil {
				return err
			}
			cfg.NATSListenSet = cmd.Flags().Changed("nats-listen")
			cfg.LogLevel = logLevel
			tuneGC(cmd.Context())
			return serve(cmd.Context(), cfg, samples, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	// A word in backquotes is the placeholder pflag shows after the flag's name.
	f.StringVar(&cfg.Addr, "addr", cfg.Addr, "`HOST:PORT` the HTTP faces listen on (port 0: any free port)")
	f.StringVar(&cfg.PublicURL, "public-url", "", "`URL` clients and agents reach this platform at: the agent tokens' default audience (default http://<addr>)")
	f.StringVar(&cfg.DataDir, "data-dir", cfg.DataDir, "`DIR` of the embedded NATS files, the admin key and the model cache; one node at a time")
	f.StringVar(&cfg.NATSURL, "nats-url", "", "`URL` of an external NATS server or cluster, instead of the embedded one")
	f.StringVar(&cfg.NATSConfig, "nats-config", "", "`FILE`: a nats.conf for the embedded server (see nats.conf)")
	f.StringVar(&cfg.NATSListen, "nats-listen", cfg.NATSListen, "`HOST:PORT` where the embedded server also accepts other nodes and tools; off to keep it in-process")
	f.BoolVar(&cfg.SyncAlways, "nats-sync-always", false, "fsync every write of the embedded server (slower; survives a power cut)")
	f.StringVar(&cfg.Prefix, "prefix", cfg.Prefix, "`PREFIX` of every subject, stream and bucket (deployments sharing one NATS)")
	f.IntVar(&cfg.Replicas, "replicas", 0, "`N` replicas of streams and buckets (default: from the cluster size, at most 3)")
	f.StringVar(&cfg.NodeName, "node-name", "", "`NAME` of this node in leases and logs (default: host name and a random suffix)")
	f.StringVar(&cfg.LogFormat, "log-format", "", "`FORMAT`: text or json (default: text on a terminal, json otherwise)")
	f.StringVar(&logLevel, "log-level", logLevel, "`LEVEL`: debug, info, warn or error")
	f.StringVar(&cfg.Embeddings, "embeddings", "", "`PROVIDER` of embeddings: local, use-lite, openai/<model>, ollama/<model> (default: use-lite when its weights are in --models-dir, else local)")
	f.StringVar(&cfg.Model, "model", "", "`MODEL` of agents that name none: provider/name or a bare name (default offline, or gpt-4o-mini with OPENAI_BASE_URL)")
	f.StringVar(&cfg.ModelsPath, "models-dir", "", "`DIR` holding model weights, where make models puts them (default <data-dir>/models)")
	f.DurationVar(&cfg.RunTimeout, "run-timeout", cfg.RunTimeout, "`DURATION` an Assistants run may take before it expires")
	f.DurationVar(&cfg.CodeTimeout, "code-timeout", cfg.CodeTimeout, "`DURATION` one code_interpreter call may take before its sandbox is killed")
	f.DurationVar(&cfg.ContainerSweep, "container-sweep", cfg.ContainerSweep, "`DURATION` between a node's checks of its warm code sandboxes, closing those whose container expired")
	f.DurationVar(&cfg.ResponsesSocketIdle, "responses-socket-idle", cfg.ResponsesSocketIdle, "`DURATION` a Responses WebSocket may stay idle (nothing sent, nothing in progress) before it is closed")
	f.DurationVar(&cfg.ResponsesSocketLifetime, "responses-socket-lifetime", cfg.ResponsesSocketLifetime, "`DURATION` a Responses WebSocket may live; then it is closed once its responses in progress end")
	f.BoolVar(&samples, "sample-agents", false, "also run the sample agents (genrand, calc, chart) and register them as published agents")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "`DURATION` a clean stop may take")
	f.IntVar(&cfg.DailyQueries, "daily-queries", cfg.DailyQueries, "`N` queries a day for each account that sets no limit of its own")
	f.IntVar(&cfg.RequestsPerMinute, "requests-per-minute", cfg.RequestsPerMinute, "`N` requests a minute for each key of an account that sets no limit of its own")
	f.StringSliceVar(&cfg.APICallHosts, "api-call-hosts", nil, "`HOSTS` Julep's api_call tools may call: host or host:port, comma-separated (default none)")
	f.StringSliceVar(&cfg.MCPHosts, "mcp-hosts", nil, "`HOSTS` the Responses API's mcp tools may call: host or host:port, comma-separated (default none)")
	for _, name := range serveFlags(cmd) {
		bindEnvTwin(f, name)
	}
	cfg.AdminKey = os.Getenv("CONTRAIL_ADMIN_KEY")
	cfg.SigningSecret = os.Getenv("CONTRAIL_SIGNING_SECRET") // no flag: a secret does not belong in `ps`
	cfg.OpenAIBaseURL = os.Getenv("OPENAI_BASE_URL")
	cfg.OpenAIAPIKey = os.Getenv("OPENAI_API_KEY")
	cfg.OllamaBaseURL = env("OLLAMA_HOST", "")
	return cmd
}

// serveFlags are the names of serve's flags: every one has an environment twin.
func serveFlags(cmd *cobra.Command) []string {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	return names
}

// envTwinKey is the annotation that names a flag's environment twin.
const envTwinKey = "env"

// envTwin is the environment variable of a flag: CONTRAIL_ and its name in capitals, '-' as '_'.
func envTwin(flag string) string {
	return "CONTRAIL_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// bindEnvTwin gives a flag its environment twin and names the twin in the flag's help.
func bindEnvTwin(fs *pflag.FlagSet, name string) {
	f := fs.Lookup(name)
	twin := envTwin(name)
	_ = fs.SetAnnotation(name, envTwinKey, []string{twin})
	f.Usage += " [" + twin + "]"
}

// applyEnvTwins sets each flag not given on the command line from its environment twin, when that is set and not
// empty. A value the flag cannot take is an error naming the variable.
func applyEnvTwins(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		twin := f.Annotations[envTwinKey]
		if err != nil || f.Changed || len(twin) == 0 {
			return
		}
		v := os.Getenv(twin[0])
		if v == "" {
			return
		}
		if serr := fs.Set(f.Name, v); serr != nil {
			err = fmt.Errorf("%s=%q (the twin of --%s): %w", twin[0], v, f.Name, serr)
		}
	})
	return err
}

func newLogger(format, level string, out io.Writer) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "" {
		format = "json"
		if f, ok := out.(*os.File); ok {
			if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
				format = "text"
			}
		}
	}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	}
	return slog.New(slog.NewTextHandler(out, opts)), nil
}

func serve(ctx context.Context, cfg config.Config, samples bool, logOut io.Writer) error {
	// A node's logs often go through a pipe (`make run | tee log`). Ctrl-C stops the whole pipeline: tee goes first,
	// and the node's next log line ("stopping") would meet a closed pipe. Go's default for a broken stdout or stderr
	// is to die of SIGPIPE, which would skip the shutdown and leave the store to be recovered at the next start.
	// Ignored, the write fails (the line is lost, nobody reads it) and the shutdown runs.
	signal.Ignore(syscall.SIGPIPE)
	if err := cfg.Validate(); err != nil {
		return err
	}
	logger, err := newLogger(cfg.LogFormat, cfg.LogLevel, logOut)
	if err != nil {
		return err
	}
	start := time.Now()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return listenError(ctx, cfg.Addr, cfg.DataDir, err)
	}
	cfg.Addr = ln.Addr().String() // a port of 0 picks one; tell everyone the real one
	p, err := platform.Start(ctx, cfg, platform.Options{Logger: logger})
	if err != nil {
		ln.Close()
		return err
	}
	// Every request's context derives from this one, so that a stop can end what waits (a reply awaited, a stream, a
	// subscription) at once instead of waiting for it.
	reqCtx, endRequests := context.WithCancel(context.Background())
	defer endRequests()
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return reqCtx }}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if samples {
		stopSamples, err := startSampleAgents(ctx, p, logger)
		if err != nil {
			_ = srv.Close()
			p.Stop(context.Background())
			return err
		}
		defer stopSamples()
	}
	nats := "embedded"
	if cfg.NATSURL != "" {
		nats = cfg.NATSURL
		if at := strings.LastIndex(nats, "@"); at >= 0 {
			nats = "***" + nats[at:]
		}
	}
	logger.Info("contrail ready", "addr", "http://"+cfg.Addr, "nats", nats, "data_dir", cfg.DataDir,
		"node", p.Config.NodeName, "startup_ms", time.Since(start).Milliseconds())
	select {
	case <-ctx.Done():
	case err := <-served:
		p.Stop(context.Background())
		return fmt.Errorf("http server: %w", err)
	}
	logger.Info("stopping")
	stopping := time.Now()
	// Stop taking requests first. Requests in flight end at once where they wait (a reply awaited, a stream, a
	// subscription: their clients reconnect to another node, and what they waited for is in the log); the short ones
	// get a moment to finish. Then the work behind them stops: handlers hand back what they hold, cancelled.
	endRequests()
	httpCtx, cancelHTTP := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancelHTTP()
	if err := srv.Shutdown(httpCtx); err != nil {
		if !errors.Is(err, context.DeadlineExceeded) {
			logger.Warn("http shutdown", "err", err)
		}
		srv.Close()
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	p.Stop(stopCtx)
	logger.Info("stopped", "took_ms", time.Since(stopping).Milliseconds())
	return nil
}
