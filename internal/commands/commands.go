package commands

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
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
	blobs    jetstream.ObjectStore
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
	// Blobs is the object store that holds embeds.
	Blobs jetstream.ObjectStore
}

// New returns the command side.
func New(cfg Config) *Commands {
	if cfg.ReadWait == 0 {
		cfg.ReadWait = 5 * time.Second
	}
	if cfg.Queries == nil {
		cfg.Queries = Unlimited{Views: cfg.Views}
	}
	if cfg.Agents == nil {
		cfg.Agents = agents.NewRegistry(cfg.Store)
	}
	return &Commands{store: cfg.Store, views: cfg.Views, readWait: cfg.ReadWait, agents: cfg.Agents,
		queries: cfg.Queries, blobs: cfg.Blobs}
}

// Store is the log the commands append to.
func (c *Commands) Store() *events.Store { return c.store }
