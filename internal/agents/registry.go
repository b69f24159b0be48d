package agents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Factory makes the Agent that answers for a registered agent of one kind. It is called for every query (agents are
// cheap to make; what must last, like HTTP clients, the factory's closure holds).
type Factory func(ctx context.Context, info Info) (Agent, error)

// Builtin is an agent every account has without registering it.
type Builtin struct {
	Info  Info
	Agent Agent
}

// Registry resolves agent IDs to agents that can answer. Built-ins are fixed when it is made; dispatchers for the
// kinds of registered agents are plugged in with Handle.
type Registry struct {
	store    *events.Store
	builtins []Builtin

	mu    sync.RWMutex
	kinds map[string]Factory
}

// NewRegistry returns a registry that loads registered agents from the log.
func NewRegistry(store *events.Store, builtins ...Builtin) *Registry {
	bs := slices.Clone(builtins)
	for i := range bs {
		bs[i].Info.Kind = KindBuiltin
		bs[i].Info.Account = ""
		if bs[i].Info.Queries == nil {
			bs[i].Info.Queries = []string{}
		}
		// A built-in was never registered; it shows the epoch as its creation rather than no time at all.
		if bs[i].Info.Created.IsZero() {
			bs[i].Info.Created = time.Unix(0, 0).UTC()
		}
		if bs[i].Info.Modified.IsZero() {
			bs[i].Info.Modified = bs[i].Info.Created
		}
	}
	return &Registry{store: store, builtins: bs, kinds: map[string]Factory{}}
}

// Handle plugs in the dispatcher of a kind of registered agent (KindCodeShot, KindStandalone).
func (r *Registry) Handle(kind string, f Factory) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.kinds[kind] = f
}

// Builtins lists the built-in agents.
func (r *Registry) Builtins() []Info {
	out := make([]Info, len(r.builtins))
	for i, b := range r.builtins {
		out[i] = b.Info
	}
	return out
}

// Builtin finds a built-in agent by ID or handle.
func (r *Registry) Builtin(ref string) (Info, bool) {
	for _, b := range r.builtins {
		if b.Info.ID == ref || b.Info.Handle == ref {
			return b.Info, true
		}
	}
	return Info{}, false
}

// Load rebuilds a registered agent from the log (consistent: no read model in between).
func (r *Registry) Load(ctx context.Context, id string) (Record, error) {
	var rec Record
	history, _, err := r.store.Load(ctx, events.Ref{Type: "agent", ID: id})
	if errors.Is(err, events.ErrInvalidRef) {
		return rec, nil // an ID that cannot be one names no agent
	}
	if err != nil {
		return Record{}, err
	}
	for _, e := range history {
		if e.Event != nil {
			rec.Apply(e)
		}
	}
	return rec, nil
}

// Resolve finds the agent with this ID that `account` may query, and what answers for it. An agent the account may
// not see is not found, as one that does not exist.
func (r *Registry) Resolve(ctx context.Context, account, id string) (Info, Agent, error) {
	for _, b := range r.builtins {
		if b.Info.ID == id {
			return b.Info, b.Agent, nil
		}
	}
	if !validAgentID(id) {
		return Info{}, nil, errs.NotFoundf("agent", id)
	}
	rec, err := r.Load(ctx, id)
	if err != nil {
		return Info{}, nil, fmt.Errorf("resolve agent %s: %w", id, err)
	}
	if !rec.Exists || rec.Deleted || !rec.VisibleTo(account) {
		return Info{}, nil, errs.NotFoundf("agent", id)
	}
	r.mu.RLock()
	f := r.kinds[rec.Kind]
	r.mu.RUnlock()
	if f == nil {
		return rec.Info, nil, errs.E(errs.Unavailable, "agent %s is a %s agent, and this platform cannot query %s agents yet",
			rec.Handle, kindName(rec.Kind), kindName(rec.Kind))
	}
	a, err := f(ctx, rec.Info)
	if err != nil {
		return rec.Info, nil, fmt.Errorf("prepare agent %s: %w", rec.Handle, err)
	}
	return rec.Info, a, nil
}

func kindName(kind string) string {
	if kind == "" {
		return "unspecified"
	}
	return kind
}

// validAgentID reports whether id can name an agent aggregate (a subject token), so that a malformed ID is simply
// not found.
func validAgentID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
