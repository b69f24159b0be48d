package agents

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Published finds the published agents of a handle (the agents read model: projections.PublishedAgents), so that
// the registry depends on no read model. It answers once the model shows the log as it stood when it was called;
// past its wait for the model, what the model holds, with current false: an agent published a moment ago may be
// missing from it.
type Published interface {
	PublishedAgents(ctx context.Context, handle string) (found []agent.Listing, current bool, err error)
}

// Registry is the agent directory.
type Registry struct {
	agents    *eventstore.Repo[agent.State, *agent.State]
	handles   *eventstore.Repo[agent.HandleClaim, *agent.HandleClaim]
	usernames *eventstore.Repo[agent.UsernameClaim, *agent.UsernameClaim]
	published Published
	builtins  []agent.Info
}

// NewRegistry returns the directory over the log (registered agents and handle claims), the agents read model
// (published agents by handle; nil: only IDs and the caller's own handles resolve) and the built-in agents.
func NewRegistry(store *eventstore.Store, published Published, builtins ...agent.Info) *Registry {
	bs := slices.Clone(builtins)
	for i := range bs {
		bs[i].Kind = KindBuiltin
		bs[i].Account = ""
		if bs[i].Queries == nil {
			bs[i].Queries = []string{}
		}
		// A built-in was never registered; it shows the epoch as its creation rather than no time at all.
		if bs[i].Created.IsZero() {
			bs[i].Created = time.Unix(0, 0).UTC()
		}
		if bs[i].Modified.IsZero() {
			bs[i].Modified = bs[i].Created
		}
	}
	return &Registry{
		agents:    eventstore.NewRepo[agent.State](store, agent.Aggregate, 0),
		handles:   eventstore.NewRepo[agent.HandleClaim](store, agent.HandleAggregate, 0),
		usernames: eventstore.NewRepo[agent.UsernameClaim](store, agent.UsernameAggregate, 0),
		published: published,
		builtins:  bs,
	}
}

// Agents is the repository of registered agents (the commands that change them append through it).
func (r *Registry) Agents() *eventstore.Repo[agent.State, *agent.State] { return r.agents }

// Handles is the repository of handle claims.
func (r *Registry) Handles() *eventstore.Repo[agent.HandleClaim, *agent.HandleClaim] {
	return r.handles
}

// Builtins lists the built-in agents.
func (r *Registry) Builtins() []Info { return slices.Clone(r.builtins) }

// Builtin finds a built-in agent by ID or handle.
func (r *Registry) Builtin(ref string) (Info, bool) {
	for _, b := range r.builtins {
		if b.ID == ref || b.Handle == ref {
			return b, true
		}
	}
	return Info{}, false
}

// Load rebuilds a registered agent as the log holds it now (consistent: no read model in between).
func (r *Registry) Load(ctx context.Context, id string) (Record, error) {
	s, _, err := r.agents.Get(ctx, id, eventstore.Fresh)
	return s, err
}

// Get returns the agent with this ID that account may use, as of at least stream sequence atLeast (eventstore.Fresh:
// as the log holds it now), and the sequence of its last event (0 for a built-in). An agent the account may not
// see is not found, as one that does not exist.
func (r *Registry) Get(ctx context.Context, account, id string, atLeast uint64) (Info, uint64, error) {
	if b, ok := r.Builtin(id); ok && b.ID == id {
		return b, 0, nil
	}
	if !natsx.ValidToken(id) {
		return Info{}, 0, errs.NotFoundf("agent", id)
	}
	s, v, err := r.agents.Get(ctx, id, atLeast)
	if err != nil {
		return Info{}, 0, err
	}
	if !s.Live() || !s.VisibleTo(account) {
		return Info{}, 0, errs.NotFoundf("agent", id)
	}
	return s.Info, v.Seq, nil
}

// HandleOwner says which agent holds a handle of an account, from the claim's own history (consistent).
func (r *Registry) HandleOwner(ctx context.Context, account, handle string) (string, bool, error) {
	h, _, err := r.handles.Get(ctx, agent.HandleID(account, handle), eventstore.Fresh)
	if err != nil {
		return "", false, err
	}
	return h.AgentID, h.Claimed, nil
}

// maxRefLen bounds what names an agent (an ID, a handle, owner/handle): longer names name no agent.
const maxRefLen = 256

// UsernameHolder reads which account holds a username ("" for none), from the claim's own history.
func (r *Registry) UsernameHolder(ctx context.Context, name string) (string, error) {
	u, _, err := r.usernames.Get(ctx, agent.UsernameID(name), eventstore.Fresh)
	return u.Account, err
}

// Find resolves what a client or an agent calls an agent — a built-in's ID or handle, an agent ID, one of the
// account's handles, a published agent's handle, or its Fixie name "<username>/<handle>" — to an agent the account
// may use, with the sequence of its last event. username is the caller's account name (it stands for the caller in
// a Fixie name nobody holds yet; "" when not known).
func (r *Registry) Find(ctx context.Context, account, username, ref string) (Info, uint64, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return Info{}, 0, errs.Missing("agent")
	}
	if len(ref) > maxRefLen {
		return Info{}, 0, errs.NotFoundf("agent", ref)
	}
	if b, ok := r.Builtin(ref); ok {
		return b, 0, nil
	}
	if strings.HasPrefix(ref, "agt_") {
		return r.Get(ctx, account, ref, eventstore.Fresh)
	}
	if owner, handle, ok := strings.Cut(ref, "/"); ok {
		return r.findByName(ctx, account, username, owner, handle, ref)
	}
	if info, seq, ok, err := r.ownHandle(ctx, account, ref); err != nil || ok {
		return info, seq, err
	}
	return r.findPublished(ctx, ref, "", ref)
}

// ownHandle finds the agent behind one of an account's handles.
func (r *Registry) ownHandle(ctx context.Context, account, handle string) (Info, uint64, bool, error) {
	id, ok, err := r.HandleOwner(ctx, account, handle)
	if err != nil || !ok {
		return Info{}, 0, false, err
	}
	s, v, err := r.agents.Get(ctx, id, eventstore.Fresh)
	if err != nil || !s.Live() {
		return Info{}, 0, false, err
	}
	return s.Info, v.Seq, true, nil
}

// findByName finds an agent by its Fixie name: the agent with that handle of the account that goes by the username
// (an account ID names itself), if account may use it. A name no account holds is looked for among published
// agents by their owners' names.
func (r *Registry) findByName(ctx context.Context, account, username, owner, handle, ref string) (Info, uint64, error) {
	if owner == "" || handle == "" || strings.Contains(handle, "/") {
		return Info{}, 0, errs.NotFoundf("agent", ref)
	}
	holder := owner
	if !strings.HasPrefix(owner, "acct_") {
		var err error
		if holder, err = r.UsernameHolder(ctx, owner); err != nil {
			return Info{}, 0, err
		}
		if holder == "" && username != "" && strings.EqualFold(owner, username) {
			holder = account
		}
	}
	if holder == "" {
		return r.findPublished(ctx, handle, owner, ref)
	}
	info, seq, ok, err := r.ownHandle(ctx, holder, handle)
	if err != nil {
		return Info{}, 0, err
	}
	if !ok || !info.VisibleTo(account) {
		return Info{}, 0, errs.NotFoundf("agent", ref)
	}
	return info, seq, nil
}

// findPublished looks for a published agent by handle (and owner name, when given) in the read model: handles are
// unique per owner only, so a bare handle may name several. A handle the model finds none of while it stands still
// (past the read wait) is an Unavailable error saying so, not "not found": another account may have published it a
// moment ago.
func (r *Registry) findPublished(ctx context.Context, handle, owner, ref string) (Info, uint64, error) {
	if r.published == nil || len(handle) > maxRefLen || len(owner) > maxRefLen {
		return Info{}, 0, errs.NotFoundf("agent", ref)
	}
	found, current, err := r.published.PublishedAgents(ctx, handle)
	if err != nil {
		return Info{}, 0, err
	}
	var match []agent.Listing
	for _, a := range found {
		if owner == "" || a.OwnerName == owner || a.Account == owner {
			match = append(match, a)
		}
	}
	switch {
	case len(match) == 0 && !current:
		return Info{}, 0, errs.E(errs.Unavailable,
			"agent '%s' cannot be looked up now: the agents read model is behind and does not show it yet; retry", ref)
	case len(match) == 0:
		return Info{}, 0, errs.NotFoundf("agent", ref)
	case len(match) == 1:
		// The read model may lag the log: the agent's own history has the last word.
		return r.Get(ctx, "", match[0].ID, eventstore.Fresh)
	}
	names := make([]string, 0, len(match))
	for _, a := range match {
		names = append(names, a.OwnerName+"/"+a.Handle)
	}
	return Info{}, 0, errs.InvalidField("handle", "several published agents are called %q: name one as owner/handle (%s)",
		handle, strings.Join(names, ", "))
}
