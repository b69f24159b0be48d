package commands

import (
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/projections"
)

// Commands carries what every command needs.
type Commands struct {
	store *events.Store
	views *projections.Runner
	// readWait bounds how long a command waits for its read model before answering.
	readWait time.Duration
	agents   *agents.Registry
	queries  QueryCounter
	blobs    *blobs.Store
	// runTimeout is how long an Assistants run may take before the sweeper expires it.
	runTimeout time.Duration
	metadata   AgentMetadata
	models     ModelNames
	sandbox    func() error
}

// ModelNames says which model will answer for a model string (the model router).
type ModelNames interface {
	// Answering is the model string a run should record: "offline" where the offline model answers in place of
	// a bare name, else the string itself.
	Answering(model string) string
}

// Config wires Commands.
type Config struct {
	Store *events.Store
	Views *projections.Runner
	// ReadWait bounds how long a command waits for its read model to show its write (default 5s).
	ReadWait time.Duration
	// Agents knows the built-in agents and loads registered ones (agent and session commands).
	Agents *agents.Registry
	// Queries counts posted messages against the account's daily quota (default: Unlimited).
	Queries QueryCounter
	// Blobs holds the bytes of uploaded files and embeds.
	Blobs *blobs.Store
	// RunTimeout sets an Assistants run's expires_at after its creation (default 10m).
	RunTimeout time.Duration
	// Metadata reads an agent's description from its URL when it is registered or refreshed (nil: registrations
	// keep what the caller gives).
	Metadata AgentMetadata
	// Models names the model that will answer a run (nil: runs record the model string as given).
	Models ModelNames
	// Sandbox says why this node cannot run code (nil: it can), code_interpreter is then refused with it; a nil
	// Sandbox refuses code_interpreter on a node that was given no sandbox.
	Sandbox func() error
}

// New returns the command side.
func New(cfg Config) *Commands {
	if cfg.ReadWait == 0 {
		cfg.ReadWait = 5 * time.Second
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = 10 * time.Minute
	}
	if cfg.Queries == nil {
		cfg.Queries = Unlimited{Views: cfg.Views}
	}
	if cfg.Agents == nil {
		cfg.Agents = agents.NewRegistry(cfg.Store, cfg.Views, agents.Builtins()...)
	}
	return &Commands{store: cfg.Store, views: cfg.Views, readWait: cfg.ReadWait, agents: cfg.Agents,
		queries: cfg.Queries, blobs: cfg.Blobs, runTimeout: cfg.RunTimeout, metadata: cfg.Metadata,
		models: cfg.Models, sandbox: cfg.Sandbox}
}

// Store is the log the commands append to.
func (c *Commands) Store() *events.Store { return c.store }
