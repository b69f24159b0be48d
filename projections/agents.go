package projections

import (
	"context"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/events"
)

// Agents is the read model of registered agents. Each agent is kept under several keys, one per way it is read:
//
//	<account>.<agent id>                   -> AgentView (an account's own agents: List "<account>.>")
//	handle.<account>.<handle>              -> AgentView (agentByHandle among the caller's own)
//	pub.<agent id>                         -> AgentView (published agents, readable by every account)
//	pubhandle.<handle>.<agent id>          -> AgentView (published agents by handle; handles are unique per owner only)
//	owner.<account>                        -> OwnerView (the account's name, shown as the agent's owner)
//
// Built-in agents are not here: they exist for every account without an event (see agents.Registry).
type Agents struct{}

// AgentView is an agent as reads see it: what the registry knows, and its owner's name.
type AgentView struct {
	agent.Info
	OwnerName string `json:"owner_name,omitempty"`
}

// OwnerView is an account's name, kept so that agents can show their owner.
type OwnerView struct {
	Name string `json:"name"`
}

// Name implements Projection.
func (Agents) Name() string { return "agents" }

// EventTypes implements Projection.
func (Agents) EventTypes() []string { return []string{"agent.*", "account.created"} }

// OwnAgentKey is where an account's agent is.
func OwnAgentKey(account, id string) string { return account + "." + id }

// OwnAgentsFilter lists an account's agents.
func OwnAgentsFilter(account string) string { return account + ".>" }

// AgentHandleKey is where an account's agent is found by handle.
func AgentHandleKey(account, handle string) string {
	return "handle." + account + "." + KeyPart(handle)
}

// PublishedAgentKey is where a published agent is found by ID.
func PublishedAgentKey(id string) string { return "pub." + id }

// PublishedAgentsFilter lists every published agent.
const PublishedAgentsFilter = "pub.>"

// PublishedHandleFilter lists the published agents with a handle.
func PublishedHandleFilter(handle string) string { return "pubhandle." + KeyPart(handle) + ".*" }

func publishedHandleKey(handle, id string) string { return "pubhandle." + KeyPart(handle) + "." + id }

func ownerKey(account string) string { return "owner." + account }

// keys lists every key an agent's view lives under.
func (v AgentView) keys() []string {
	ks := []string{OwnAgentKey(v.Account, v.ID), AgentHandleKey(v.Account, v.Handle)}
	if v.Published {
		ks = append(ks, PublishedAgentKey(v.ID), publishedHandleKey(v.Handle, v.ID))
	}
	return ks
}

// Apply implements Projection.
func (Agents) Apply(tx *Tx, e events.Envelope) error {
	switch d := e.Event.(type) {
	case events.AccountCreated:
		return tx.Put(ownerKey(e.AggregateID), OwnerView{Name: d.Name})
	case events.AgentRegistered:
		var st agent.State
		st.Apply(e)
		v := AgentView{Info: st.Info}
		var owner OwnerView
		if _, err := tx.Get(ownerKey(e.Account), &owner); err != nil {
			return err
		}
		v.OwnerName = owner.Name
		return putAgent(tx, nil, v)
	case events.AgentUpdated:
		old, ok, err := getAgent(tx, e)
		if err != nil || !ok {
			return err
		}
		v := old
		st := agent.State{Info: old.Info, Exists: true}
		st.Apply(e)
		v.Info = st.Info
		return putAgent(tx, &old, v)
	case events.AgentDeleted:
		old, ok, err := getAgent(tx, e)
		if err != nil || !ok {
			return err
		}
		for _, k := range old.keys() {
			if err := tx.Delete(k); err != nil {
				return err
			}
		}
	}
	return nil
}

func getAgent(tx *Tx, e events.Envelope) (AgentView, bool, error) {
	var v AgentView
	ok, err := tx.Get(OwnAgentKey(e.Account, e.AggregateID), &v)
	return v, ok, err
}

// putAgent writes an agent under its keys and removes it from keys it no longer has (a new handle, unpublished).
func putAgent(tx *Tx, old *AgentView, v AgentView) error {
	if v.Queries == nil {
		v.Queries = []string{}
	}
	keep := map[string]bool{}
	for _, k := range v.keys() {
		keep[k] = true
		if err := tx.Put(k, v); err != nil {
			return err
		}
	}
	if old != nil {
		for _, k := range old.keys() {
			if !keep[k] {
				if err := tx.Delete(k); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// PublishedAgents finds the published agents of a handle in the agents read model (it is internal/agents'
// Published).
type PublishedAgents struct{ Views *Runner }

// PublishedAgents lists the published agents called handle, of any owner, once the agents read model shows every
// agent event the log held when it was called (ShowsLatest), so that an agent published a moment ago (on this node
// or another) is not left out. Owners are any accounts, so the list spans aggregates and cannot be folded from the
// log: past the wait (the model standing still) it is what the model holds, and current is false.
func (p PublishedAgents) PublishedAgents(ctx context.Context, handle string) (found []agent.Listing, current bool,
	err error) {
	if current, err = p.Views.ShowsLatest(ctx, Agents{}); err != nil {
		return nil, false, err
	}
	views, err := ListAll[AgentView](ctx, p.Views, "agents", PublishedHandleFilter(handle))
	if err != nil {
		return nil, false, err
	}
	found = make([]agent.Listing, len(views))
	for i, a := range views {
		found[i] = agent.Listing{ID: a.ID, Account: a.Account, OwnerName: a.OwnerName, Handle: a.Handle}
	}
	return found, current, nil
}
