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
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform"
)

func newServeCmd() *cobra.Command {
	cfg := config.Defaults()
	var logLevel string
	var samples bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a Contrail node (embedded NATS unless --nats-url is given)",
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.NATSListenSet = cmd.Flags().Changed("nats-listen") || os.Getenv("CONTRAIL_NATS_LISTEN") != ""
			cfg.LogLevel = logLevel
			return serve(cmd.Context(), cfg, samples, cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", env("CONTRAIL_ADDR", cfg.Addr), "HTTP listen address (CONTRAIL_ADDR)")
	f.StringVar(&cfg.PublicURL, "public-url", env("CONTRAIL_PUBLIC_URL", ""), "URL clients and agents reach this platform at (CONTRAIL_PUBLIC_URL; default http://<addr>)")
	f.StringVar(&cfg.DataDir, "data-dir", env("CONTRAIL_DATA_DIR", cfg.DataDir), "data directory (CONTRAIL_DATA_DIR)")
	f.StringVar(&cfg.NATSURL, "nats-url", env("CONTRAIL_NATS_URL", ""), "external NATS server or cluster instead of the embedded one (CONTRAIL_NATS_URL)")
	f.StringVar(&cfg.NATSConfig, "nats-config", env("CONTRAIL_NATS_CONFIG", ""), "nats.conf for the embedded server (CONTRAIL_NATS_CONFIG)")
	f.StringVar(&cfg.NATSListen, "nats-listen", env("CONTRAIL_NATS_LISTEN", cfg.NATSListen), "where the embedded server accepts other clients; 'off' to disable (CONTRAIL_NATS_LISTEN)")
	f.BoolVar(&cfg.SyncAlways, "nats-sync-always", env("CONTRAIL_NATS_SYNC_ALWAYS", "") == "true", "fsync every write of the embedded server (slower; survives power loss)")
	f.StringVar(&cfg.Prefix, "prefix", env("CONTRAIL_PREFIX", cfg.Prefix), "prefix of every subject, stream and bucket (CONTRAIL_PREFIX)")
	f.IntVar(&cfg.Replicas, "replicas", 0, "replicas of streams and buckets (default: from the cluster size, at most 3)")
	f.StringVar(&cfg.NodeName, "node-name", env("CONTRAIL_NODE_NAME", ""), "this node's name in leases and logs (CONTRAIL_NODE_NAME)")
	f.StringVar(&cfg.LogFormat, "log-format", env("CONTRAIL_LOG_FORMAT", ""), "text or json (default: text on a terminal, json otherwise)")
	f.StringVar(&logLevel, "log-level", env("CONTRAIL_LOG_LEVEL", "info"), "debug, info, warn or error")
	f.StringVar(&cfg.Embeddings, "embeddings", env("CONTRAIL_EMBEDDINGS", ""), "embedding provider: local, use-lite, openai/<model>, ollama/<model> (CONTRAIL_EMBEDDINGS)")
	f.StringVar(&cfg.Model, "model", env("CONTRAIL_MODEL", ""), "model of agents that name none: provider/name or a bare name (CONTRAIL_MODEL; default offline, or gpt-4o-mini with OPENAI_BASE_URL)")
	f.StringVar(&cfg.ModelsPath, "models-dir", env("CONTRAIL_MODELS_DIR", ""), "where `make models` put model weights (CONTRAIL_MODELS_DIR; default <data-dir>/models)")
	f.DurationVar(&cfg.RunTimeout, "run-timeout", cfg.RunTimeout, "how long an Assistants run may take before it expires")
	f.BoolVar(&samples, "sample-agents", false, "also run the sample agents (genrand, calc, chart) and register them as published agents")
	f.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long a clean stop may take")
	cfg.AdminKey = os.Getenv("CONTRAIL_ADMIN_KEY")
	cfg.SigningSecret = os.Getenv("CONTRAIL_SIGNING_SECRET") // no flag: a secret does not belong in `ps`
	cfg.OpenAIBaseURL = os.Getenv("OPENAI_BASE_URL")
	cfg.OpenAIAPIKey = os.Getenv("OPENAI_API_KEY")
	cfg.OllamaBaseURL = env("OLLAMA_HOST", "")
	return cmd
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
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	cfg.Addr = ln.Addr().String() // a port of 0 picks one; tell everyone the real one
	p, err := platform.Start(ctx, cfg, platform.Options{Logger: logger})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
	// Stop taking requests first; requests in flight get a few seconds, and long streams (SSE, websockets) are cut
	// after that: their clients reconnect to another node. Then the work behind them stops.
	httpCtx, cancelHTTP := context.WithTimeout(context.Background(), 5*time.Second)
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
	logger.Info("stopped")
	return nil
}
