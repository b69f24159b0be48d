// Package config holds the settings of a Contrail node. main fills it from flags and their environment twins and
// passes it down; no other package reads the environment.
package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"time"
)

// Config is everything `contrail serve` can be told.
type Config struct {
	// Addr is where the HTTP faces listen (CONTRAIL_ADDR).
	Addr string
	// PublicURL is how clients and agents reach this platform: the default audience of agent tokens and the base of
	// signed URLs (CONTRAIL_PUBLIC_URL; default http://<Addr>).
	PublicURL string
	// DataDir holds the embedded server's files, the admin key and the model cache (CONTRAIL_DATA_DIR).
	DataDir string
	// NATSURL, when set, uses an external server or cluster instead of embedding one (CONTRAIL_NATS_URL).
	NATSURL string
	// NATSConfig is a nats.conf for the embedded server.
	NATSConfig string
	// NATSListen is where the embedded server also accepts clients ("off" = in-process only).
	NATSListen    string
	NATSListenSet bool
	// SyncAlways fsyncs every write of the embedded server.
	SyncAlways bool
	// Prefix scopes every subject, stream and bucket (CONTRAIL_PREFIX).
	Prefix string
	// Replicas of streams and buckets; 0 = from the cluster size.
	Replicas int
	// NodeName names this node in leases and logs (default: host name and port).
	NodeName string
	// AdminKey, when set, is the admin account's key (CONTRAIL_ADMIN_KEY).
	AdminKey string
	// SigningSecret, when set, seals the private keys that sign agent tokens where they are stored (NATS KV).
	// Every node of a deployment needs the same one (CONTRAIL_SIGNING_SECRET).
	SigningSecret string
	// LogFormat is "text" or "json"; "" = text on a terminal, JSON otherwise.
	LogFormat string
	LogLevel  string
	// OpenAIBaseURL and OpenAIAPIKey configure the openai model provider (OPENAI_BASE_URL, OPENAI_API_KEY).
	OpenAIBaseURL string
	OpenAIAPIKey  string
	// Embeddings picks the embedding provider (CONTRAIL_EMBEDDINGS): "" (default), "local", "use-lite",
	// "openai/<model>", "ollama/<model>".
	Embeddings string
	// OllamaBaseURL is where ollama embeddings are served (OLLAMA_HOST).
	OllamaBaseURL string
	// Model is the model string of agents that name none (CONTRAIL_MODEL; default: "offline", or "gpt-4o-mini"
	// when an OpenAI-compatible server is configured).
	Model string
	// ModelsPath is where downloaded model weights are (CONTRAIL_MODELS_DIR; default <data-dir>/models).
	ModelsPath string
	// RunTimeout expires Assistants runs that do not finish (default 10m).
	RunTimeout time.Duration
	// CodeTimeout bounds one code_interpreter call's wall-clock time (default 60s); past it the sandbox is killed.
	CodeTimeout time.Duration
	// ContainerSweep is how often a node checks its warm code sandboxes against their containers, closing those
	// whose container expired or was deleted (CONTRAIL_CONTAINER_SWEEP; default 30s).
	ContainerSweep time.Duration
	// ResponsesSocketIdle closes a Responses WebSocket on which nothing was sent and nothing was in progress for
	// that long (CONTRAIL_RESPONSES_SOCKET_IDLE; default 5m); ResponsesSocketLifetime ends any such socket after
	// that long, once its responses in progress have ended (CONTRAIL_RESPONSES_SOCKET_LIFETIME; default 60m,
	// OpenAI's connection limit).
	ResponsesSocketIdle     time.Duration
	ResponsesSocketLifetime time.Duration
	// LeaseTTL is how long a dead node keeps its leases (default 3s).
	LeaseTTL time.Duration
	// ReadWait bounds how long a read waits for a read model to show what the log holds before it answers from the
	// log or, for a command's own write, gives up (0: the projections' default, 5s).
	ReadWait time.Duration
	// ShutdownTimeout bounds a clean stop.
	ShutdownTimeout time.Duration
	// DailyQueries is the daily query quota of an account that sets none (CONTRAIL_DAILY_QUERIES; default 1000,
	// seed 000's).
	DailyQueries int
	// RequestsPerMinute is the request rate of each key of an account that sets none (CONTRAIL_REQUESTS_PER_MINUTE;
	// default 600).
	RequestsPerMinute int
	// APICallHosts are the hosts Julep's api_call tools may call: "host" or "host:port" (CONTRAIL_API_CALL_HOSTS;
	// default none, so no api_call tool can be made).
	APICallHosts []string
	// MCPHosts are the MCP servers the Responses API's mcp tool may call: "host" or "host:port"
	// (CONTRAIL_MCP_HOSTS; default none, so egress to MCP servers is closed).
	MCPHosts []string
	// HandlerAckWait, when set, is how long a dead node's deliveries wait before another node gets them (every
	// handler's ack wait; default: each handler's own, a minute or less).
	HandlerAckWait time.Duration
}

// Defaults returns the settings of a node nobody configured.
func Defaults() Config {
	return Config{
		Addr:            "127.0.0.1:8080",
		DataDir:         "./contrail-data",
		NATSListen:      "127.0.0.1:4222",
		Prefix:          "contrail",
		RunTimeout:      10 * time.Minute,
		CodeTimeout:     60 * time.Second,
		ContainerSweep:  30 * time.Second,
		LeaseTTL:        3 * time.Second,
		ShutdownTimeout: 10 * time.Second,
		// The numbers of commands.DefaultDailyQueryLimit and DefaultRequestsPerMinute (config does not import commands).
		DailyQueries:      1000,
		RequestsPerMinute: 600,
		// openaiapi's own defaults, named here for serve's help.
		ResponsesSocketIdle:     5 * time.Minute,
		ResponsesSocketLifetime: 60 * time.Minute,
	}
}

// AdminKeyFile is where the bootstrap writes the admin key.
func (c Config) AdminKeyFile() string { return filepath.Join(c.DataDir, "admin.key") }

// ModelsDir is where downloaded model weights are cached.
func (c Config) ModelsDir() string {
	if c.ModelsPath != "" {
		return c.ModelsPath
	}
	return filepath.Join(c.DataDir, "models")
}

// DefaultModel is the model string of agents that name none.
func (c Config) DefaultModel() string {
	switch {
	case c.Model != "":
		return c.Model
	case c.OpenAIBaseURL != "":
		return "gpt-4o-mini"
	default:
		return "offline"
	}
}

// Public returns the platform's public base URL.
func (c Config) Public() string {
	if c.PublicURL != "" {
		return c.PublicURL
	}
	return "http://" + c.Addr
}

// Validate reports settings that cannot work, naming them.
func (c Config) Validate() error {
	if c.Addr == "" {
		return fmt.Errorf("--addr must not be empty")
	}
	if c.NATSURL == "" && c.DataDir == "" {
		return fmt.Errorf("--data-dir must not be empty when NATS is embedded")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || u.Scheme == "" || u.Host == "" {
			return fmt.Errorf("--public-url %q is not an absolute URL", c.PublicURL)
		}
	}
	if c.DailyQueries < 0 {
		return fmt.Errorf("--daily-queries %d must not be negative", c.DailyQueries)
	}
	if c.RequestsPerMinute < 0 {
		return fmt.Errorf("--requests-per-minute %d must not be negative", c.RequestsPerMinute)
	}
	if c.ContainerSweep <= 0 {
		// A node sweeps its warm sandboxes at this interval: none would mean never closing those whose container
		// expired, so it is refused rather than quietly replaced.
		return fmt.Errorf("--container-sweep %s must be positive", c.ContainerSweep)
	}
	if c.ResponsesSocketIdle < 0 || c.ResponsesSocketLifetime < 0 {
		return fmt.Errorf("--responses-socket-idle and --responses-socket-lifetime must not be negative")
	}
	switch c.LogFormat {
	case "", "text", "json":
	default:
		return fmt.Errorf("--log-format %q: use text or json", c.LogFormat)
	}
	return nil
}
