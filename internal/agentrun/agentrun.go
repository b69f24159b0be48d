// Package agentrun makes registered and built-in agents answer through the one dispatch path of internal/agents:
//
//   - Code Shot agents: their few-shots run here (internal/codeshot/loop) on the platform's model, their funcs are
//     called over HTTP with the platform's token, every step is recorded in the session, and "Ask Agent[a]" asks
//     another agent through the same machinery, to a bounded depth;
//   - standalone agents: the query is POSTed to the agent and its reply (JSON or JSON lines) relayed as it streams;
//   - the built-in router: the agents closest to a query by embedding search (internal/router);
//   - the built-in front agent, fixie: with a real model it plans as Fixie's did (Thought / Ask Agent[router] /
//     Ask Agent[x]); with the offline model it hands the whole query to the best-routed agent, and answers itself
//     when no agent fits.
//
// It imports agents, events, router, the model and agent-protocol clients; never a face or a handler.
package agentrun

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/router"
)

// Config wires the dispatchers.
type Config struct {
	Registry *agents.Registry
	Store    *events.Store
	// Models is the model router; DefaultModel is the model string for agents that name none.
	Models       llm.Provider
	DefaultModel string
	// Offline says the default model is the offline one: the front agent then routes instead of planning.
	Offline bool
	// Client calls agents over HTTP with the platform's tokens.
	Client *agentproto.Client
	Index  *router.Index
	// Find resolves what a model calls an agent (a handle, published or the caller's own) to an agent the caller
	// may use.
	Find func(ctx context.Context, p auth.Principal, ref string) (agents.Info, error)
	// AgentName gives a registered agent's Fixie name, "<username>/<handle>", which the tokens of calls to it carry
	// in "aid" (nil: its ID).
	AgentName func(ctx context.Context, info agents.Info) (string, error)
	Logger    *slog.Logger
	// MaxDepth bounds how deep agents may delegate to agents (default 3).
	MaxDepth int
	// MaxCalls bounds the model calls of one Code Shot query (default 10).
	MaxCalls int
}

// Dispatch answers for agents of every kind.
type Dispatch struct{ cfg Config }

// New returns the dispatchers.
func New(cfg Config) *Dispatch {
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = 3
	}
	if cfg.MaxCalls == 0 {
		cfg.MaxCalls = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Dispatch{cfg: cfg}
}

// Attach gives the dispatchers the registry they answer for (it is made with their built-ins, so it comes after
// them) and registers the dispatchers of registered agents' kinds with it.
func (d *Dispatch) Attach(reg *agents.Registry) {
	d.cfg.Registry = reg
	reg.Handle(agents.KindCodeShot, d.codeShot)
	reg.Handle(agents.KindStandalone, d.standalone)
}

// Client is the agent protocol client the dispatchers call agents with (it reads agents' descriptions too).
func (d *Dispatch) Client() *agentproto.Client { return d.cfg.Client }

// path is where a query is in a chain of delegations: the handles from the front agent down ("fixie>genrand").
// It keeps the steps of nested agents apart in the session and bounds the depth.
type pathKey struct{}

func pathOf(ctx context.Context) []string {
	p, _ := ctx.Value(pathKey{}).([]string)
	return p
}

func withPath(ctx context.Context, handle string) context.Context {
	p := append(append([]string(nil), pathOf(ctx)...), handle)
	return context.WithValue(ctx, pathKey{}, p)
}

func pathString(ctx context.Context) string { return strings.Join(pathOf(ctx), ">") }

// journal records a Code Shot agent's steps as session events, each once (the label names the step by the agent's
// path and index).
type journal struct {
	q     agents.Query
	agent string
	path  string
}

func (j journal) Record(ctx context.Context, s loop.Step) error {
	if j.q.Record == nil {
		return nil
	}
	return j.q.Record(ctx, stepLabel(j.path, s.Index), events.SessionAgentStep{
		ReplyID: j.q.ReplyID, Agent: j.agent, Path: j.path, Index: s.Index, Kind: string(s.Kind), Name: s.Name,
		Text: s.Text, Call: s.Call,
	})
}

func stepLabel(path string, index int) string { return path + "#" + strconv.Itoa(index) }

// recorded reads the steps an earlier attempt of this query recorded for the agent at this path: a query resumed
// after a crash continues from them.
func (d *Dispatch) recorded(ctx context.Context, q agents.Query, path string) ([]loop.Step, error) {
	if q.Session == "" || q.ReplyID == "" {
		return nil, nil
	}
	history, _, err := d.cfg.Store.Load(ctx, events.Ref{Type: "session", ID: q.Session})
	if err != nil {
		return nil, fmt.Errorf("read the steps already taken: %w", err)
	}
	var steps []loop.Step
	for _, e := range history {
		s, ok := e.Event.(events.SessionAgentStep)
		if !ok || s.ReplyID != q.ReplyID || s.Path != path || s.Index != len(steps) {
			continue
		}
		steps = append(steps, loop.Step{Index: s.Index, Kind: loop.Kind(s.Kind), Name: s.Name, Text: s.Text, Call: s.Call})
	}
	return steps, nil
}

// claims are the token claims of a call to an agent on behalf of a query.
func (d *Dispatch) claims(ctx context.Context, q agents.Query, info agents.Info) (agentproto.Claims, error) {
	c := agentproto.Claims{User: q.Caller.AccountID, AgentID: info.ID, SessionID: q.Session, Audience: info.Audience}
	if d.cfg.AgentName != nil {
		name, err := d.cfg.AgentName(ctx, info)
		if err != nil {
			return c, fmt.Errorf("name agent %s for its token: %w", info.Handle, err)
		}
		c.AgentName = name
	}
	return c, nil
}

// history renders the session's earlier exchanges for a conversational Code Shot agent: "Q: ...\nA: ...".
func history(q agents.Query) []string {
	var out []string
	var pending string
	for _, m := range q.History {
		switch m.Type {
		case events.MessageQuery:
			pending = oneLine(m.Text)
		case events.MessageResponse:
			if pending != "" {
				out = append(out, "Q: "+pending+"\nA: "+oneLine(m.Text))
				pending = ""
			}
		}
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
