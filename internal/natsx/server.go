package natsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// EmbeddedConfig says how to run the in-process nats-server.
type EmbeddedConfig struct {
	// StoreDir is where JetStream keeps its files (unless ConfigFile sets store_dir).
	StoreDir string
	// ConfigFile is an optional nats.conf; settings in it win over the defaults below, except that JetStream is
	// always enabled.
	ConfigFile string
	// Listen is host:port where the server also accepts clients (other nodes, the nats CLI); "off" or "" keeps it
	// in-process only. Ignored when ConfigFile sets a port and Listen was not given explicitly.
	Listen string
	// ListenSet says that Listen came from a flag or env and overrides the config file.
	ListenSet bool
	// SyncAlways makes every write fsync (much slower; for those who cannot lose an acknowledged write to a power cut).
	SyncAlways bool
	// ServerName names the server (required in a cluster); defaults to a name derived from the host.
	ServerName string
	Logger     *slog.Logger
}

// StartEmbedded starts nats-server in this process with JetStream and file storage and waits until it accepts
// connections.
func StartEmbedded(cfg EmbeddedConfig) (*server.Server, error) {
	opts := &server.Options{}
	if cfg.ConfigFile != "" {
		fileOpts, err := server.ProcessConfigFile(cfg.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("read nats config %s: %w", cfg.ConfigFile, err)
		}
		opts = fileOpts
	}
	opts.JetStream = true
	if opts.StoreDir == "" {
		if cfg.StoreDir == "" {
			return nil, errors.New("embedded nats: no store dir")
		}
		opts.StoreDir = cfg.StoreDir
	}
	if err := os.MkdirAll(opts.StoreDir, 0o750); err != nil {
		return nil, fmt.Errorf("create nats store dir: %w", err)
	}
	listenFrom := "--nats-listen"
	if cfg.ConfigFile == "" || cfg.ListenSet {
		if err := applyListen(opts, cfg.Listen); err != nil {
			return nil, err
		}
	} else {
		listenFrom = cfg.ConfigFile
	}
	if !opts.DontListen {
		port := opts.Port
		if port == 0 {
			port = server.DEFAULT_PORT // a config file that names no port
		}
		if err := checkPort(opts.Host, port, listenFrom); err != nil {
			return nil, err
		}
	}
	if cfg.SyncAlways {
		opts.SyncAlways = true
	}
	if opts.ServerName == "" {
		opts.ServerName = cfg.ServerName
	}
	opts.NoSigs = true
	// The server's own logs are routed into slog below; NoLog only stops it from configuring its own logger.
	opts.NoLog = cfg.Logger == nil
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("create embedded nats: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A fatal error at start (a port taken after the check above, a monitoring port in use, JetStream refusing its
	// store) leaves the server never ready; the logger hands it over, so that the start fails at once with it.
	sl := &serverLog{l: logger.With("component", "nats-server"), fatal: make(chan string, 1)}
	ns.SetLoggerV2(sl, false, false, false)
	go ns.Start()
	deadline := time.Now().Add(30 * time.Second)
	for !ns.ReadyForConnections(100 * time.Millisecond) {
		select {
		case msg := <-sl.fatal:
			ns.Shutdown()
			return nil, fmt.Errorf("embedded nats: %s", msg)
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			return nil, errors.New("embedded nats did not become ready in 30s")
		}
	}
	sl.startDone()
	return ns, nil
}

// checkPort fails when the embedded server could not listen on host:port, saying what to do instead: the server
// itself would only log the failure and never become ready.
func checkPort(host string, port int, from string) error {
	if port <= 0 {
		return nil // a random port
	}
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln.Close()
	}
	if !errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("embedded nats cannot listen on %s (from %s): %w", addr, from, err)
	}
	if from == "--nats-listen" {
		return fmt.Errorf("embedded nats cannot listen on %s: port %d is in use (another contrail serve or nats-server?); "+
			"use --nats-listen off to keep NATS inside this process, or --nats-listen %s for another port "+
			"(CONTRAIL_NATS_LISTEN)", addr, port, net.JoinHostPort(host, "PORT"))
	}
	return fmt.Errorf("embedded nats cannot listen on %s: port %d (set in %s) is in use (another contrail serve or "+
		"nats-server?); change the port there, or use --nats-listen off to keep NATS inside this process", addr, port, from)
}

func applyListen(opts *server.Options, listen string) error {
	if listen == "" || listen == "off" {
		opts.DontListen = true
		return nil
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("nats listen address %q: %w", listen, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return fmt.Errorf("nats listen port %q: %w", port, err)
	}
	if p == 0 {
		p = server.RANDOM_PORT // nats-server reads 0 as its default port, 4222; everywhere else 0 means any port
	}
	opts.Host, opts.Port = host, p
	opts.DontListen = false
	return nil
}

// ConnectEmbedded opens a client connection to the in-process server without a socket.
func ConnectEmbedded(ns *server.Server, name string) (*nats.Conn, error) {
	nc, err := nats.Connect("", nats.InProcessServer(ns), nats.Name(name), nats.MaxReconnects(-1))
	if err != nil {
		return nil, fmt.Errorf("connect to embedded nats: %w", err)
	}
	return nc, nil
}

// ConnectURL connects to an external server or cluster and keeps reconnecting: a NATS failover must not take the
// node down.
func ConnectURL(ctx context.Context, url, name string, logger *slog.Logger) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("nats disconnected", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) { logger.Info("nats reconnected", "server", nc.ConnectedUrlRedacted()) }),
	}
	var lastErr error
	for attempt := 0; attempt < 20; attempt++ {
		nc, err := nats.Connect(url, opts...)
		if err == nil {
			if err := CheckServerVersion(nc.ConnectedServerVersion()); err != nil {
				nc.Close()
				return nil, err
			}
			return nc, nil
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connect to nats %s: %w", redact(url), ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("connect to nats %s: %w", redact(url), lastErr)
}

// redact keeps credentials in a URL out of error messages and logs.
func redact(url string) string {
	scheme := strings.Index(url, "://")
	at := strings.LastIndexByte(url, '@')
	if scheme >= 0 && at > scheme {
		return url[:scheme+3] + "***@" + url[at+1:]
	}
	return url
}

// DefaultStoreDir is where the embedded server keeps JetStream data inside a data dir.
func DefaultStoreDir(dataDir string) string { return filepath.Join(dataDir, "nats") }

// serverLog routes nats-server's logger into slog. Its chatty start-up notices go to Debug; the first fatal error
// is also handed to StartEmbedded. The warnings of a store recovered after an unclean stop (two or three for each
// stream and bucket, dozens in all) are gathered while the server starts and said in one line once it is ready.
type serverLog struct {
	l     *slog.Logger
	fatal chan string

	mu       sync.Mutex
	started  bool           // after the start, warnings are logged as they come
	recovery []string       // the first recovery warning of each store, in order
	stores   map[string]int // recovery warnings by store
}

func (s *serverLog) Noticef(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s *serverLog) Warnf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	s.mu.Lock()
	if !s.started && isRecoveryWarning(msg) {
		store := recoveryStore(msg)
		if s.stores == nil {
			s.stores = map[string]int{}
		}
		if s.stores[store] == 0 {
			s.recovery = append(s.recovery, msg)
		}
		s.stores[store]++
		s.mu.Unlock()
		// The details stay available to whoever looks for them.
		s.l.Debug(msg)
		return
	}
	s.mu.Unlock()
	s.l.Warn(msg)
}

// isRecoveryWarning says whether a warning is about a store's state rebuilt at start: "Filestore [NAME] Stream state
// outdated, ... will rebuild", "... Recovering stream state from index errored ...", and the like.
func isRecoveryWarning(msg string) bool {
	return strings.HasPrefix(msg, "Filestore [") || strings.Contains(strings.ToLower(msg), "recover")
}

// recoveryStore is the store a recovery warning names ("Filestore [KV_contrail_leases] ..."), or "" when it names
// none.
func recoveryStore(msg string) string {
	if i := strings.IndexByte(msg, '['); i >= 0 {
		if j := strings.IndexByte(msg[i:], ']'); j > 0 {
			return msg[i+1 : i+j]
		}
	}
	return ""
}

// startDone ends the start: the recovery warnings gathered are said in one line, and later warnings are logged as
// they come.
func (s *serverLog) startDone() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	if len(s.stores) == 0 {
		return
	}
	names := make([]string, 0, len(s.stores))
	total := 0
	for name, n := range s.stores {
		if name != "" {
			names = append(names, name)
		}
		total += n
	}
	sort.Strings(names)
	s.l.Warn(fmt.Sprintf("the store was not closed cleanly (the last stop was a crash or a kill): nats-server rebuilt "+
		"the state of %d streams and buckets from their files (%d warnings, at debug level; the first: %q)", len(names), total, s.recovery[0]), "stores", strings.Join(names, ","))
}
func (s *serverLog) Fatalf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	s.l.Error(msg)
	select {
	case s.fatal <- msg:
	default:
	}
}
func (s *serverLog) Errorf(format string, v ...any) { s.l.Error(fmt.Sprintf(format, v...)) }
func (s *serverLog) Debugf(format string, v ...any) { s.l.Debug(fmt.Sprintf(format, v...)) }
func (s *serverLog) Tracef(format string, v ...any) {}
