package commands

import (
	"time"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/eventstore"
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
	Store *eventstore.Store
	Views *projections.Runner
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
	// Turns are the run worker's and the sweeper's commands on runs.
	Turns *Turns
	// Responses and Conversations are the Responses API's.
	Responses     *Responses
	Conversations *Conversations
	Containers    *Containers
}

// New makes the commands of every aggregate in Set over one log.
func New(cfg Config) Set {
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = 10 * time.Minute
	}
	if cfg.Queries == nil {
		cfg.Queries = Unlimited{Views: cfg.Views}
	}
	if cfg.Agents == nil {
		var published agents.Published
		if cfg.Views != nil {
			published = projections.PublishedAgents{Views: cfg.Views}
		}
		cfg.Agents = agents.NewRegistry(cfg.Store, published, agents.Builtins()...)
	}
	files := &Files{store: cfg.Store, blobs: cfg.Blobs}
	assistants := &Assistants{store: cfg.Store, sandbox: cfg.Sandbox}
	threads := &Threads{store: cfg.Store, files: files, repo: eventstore.NewRepo[thread.State](cfg.Store, "thread", 1024)}
	convs := NewConversations(cfg.Store)
	return Set{
		Conversations: convs,
		Containers:    NewContainers(cfg.Store, files),
		Responses:     NewResponses(cfg.Store, convs, files),
		Accounts:      &Accounts{store: cfg.Store, queries: cfg.Queries},
		Agents:        &Agents{store: cfg.Store, agents: cfg.Agents, metadata: cfg.Metadata},
		Assistants:    assistants,
		Embeds:        &Embeds{store: cfg.Store, blobs: cfg.Blobs},
		Files:         files,
		Threads:       threads,
		Runs: &Runs{store: cfg.Store, threads: threads, assistants: assistants, models: cfg.Models,
			runTimeout: cfg.RunTimeout},
		Turns: &Turns{threads: threads},
	}
}
