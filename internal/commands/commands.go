package commands

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/projections"
)

// ModelNames says which model will answer for a model string (the model router).
type ModelNames interface {
	// Answering is the model string a run should record: "offline" where the offline model answers in place of
	// a bare name, else the string itself.
	Answering(model string) string
}

// Config wires the commands of the aggregates that New makes.
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

// Set is the commands of the aggregates the Fixie and Assistants faces write, one type per aggregate. Each face
// takes the few it uses (the Julep aggregates, sessions and vector stores are made on their own: they hold
// repositories of their own).
type Set struct {
	Accounts   *Accounts
	Agents     *Agents
	Assistants *Assistants
	Embeds     *Embeds
	Files      *Files
	Threads    *Threads
	Runs       *Runs
}

// New makes the commands of every aggregate in Set over one log.
func New(cfg Config) Set {
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
	r := reads{views: cfg.Views, wait: cfg.ReadWait}
	files := &Files{store: cfg.Store, reads: r, blobs: cfg.Blobs}
	assistants := &Assistants{store: cfg.Store, reads: r, sandbox: cfg.Sandbox}
	threads := &Threads{store: cfg.Store, reads: r, files: files}
	return Set{
		Accounts:   &Accounts{store: cfg.Store, reads: r, queries: cfg.Queries},
		Agents:     &Agents{store: cfg.Store, reads: r, agents: cfg.Agents, metadata: cfg.Metadata},
		Assistants: assistants,
		Embeds:     &Embeds{store: cfg.Store, reads: r, blobs: cfg.Blobs},
		Files:      files,
		Threads:    threads,
		Runs: &Runs{store: cfg.Store, reads: r, threads: threads, assistants: assistants, models: cfg.Models,
			runTimeout: cfg.RunTimeout},
	}
}

// reads is the one way a command waits, bounded, for the read models to show what it appended, so that the
// caller's next read (a GET that reads a read model) sees its own write.
type reads struct {
	views *projections.Runner
	wait  time.Duration
}

// show waits until each model has applied the last event of res that it folds; past the bound it returns the
// deadline error, and the write stays made.
func (r reads) show(ctx context.Context, res events.Appended, models ...projections.Projection) error {
	wctx, cancel := context.WithTimeout(ctx, r.wait)
	defer cancel()
	return r.views.Shows(wctx, res, models...)
}
