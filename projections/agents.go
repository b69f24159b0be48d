package projections

import (
	"time"

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

// AgentView is an agent as reads see it.
type AgentView struct {
	AgentFields
	OwnerName string `json:"owner_name,omitempty"`
}

// AgentFields are an agent's fields. They are those of agents.Info, field for field, so that one converts to the
// other (the compiler checks it where the conversion is written); this package cannot import the registry's.
type AgentFields struct {
	ID             string    `json:"id"`
	Account        string    `json:"account,omitempty"`
	Handle         string    `json:"handle"`
	Name           string    `json:"name,omitempty"`
	Description    string    `json:"description,omitempty"`
	Kind           string    `json:"kind"`
	QueryURL       string    `json:"query_url,omitempty"`
	FuncURL        string    `json:"func_url,omitempty"`
	MoreInfoURL    string    `json:"more_info_url,omitempty"`
	Published      bool      `json:"published"`
	Queries        []string  `json:"queries"`
	BasePrompt     string    `json:"base_prompt,omitempty"`
	FewShots       []string  `json:"few_shots,omitempty"`
	Conversational bool      `json:"conversational,omitempty"`
	Model          string    `json:"model,omitempty"`
	Audience       string    `json:"audience,omitempty"`
	Created        time.Time `json:"created"`
	Modified       time.Time `json:"modified"`
}

func registeredFields(e events.Envelope, d events.AgentRegistered) AgentFields {
	return AgentFields{
		ID: e.AggregateID, Account: e.Account, Handle: d.Handle, Name: d.Name, Description: d.Description,
		Kind: d.Kind, QueryURL: d.QueryURL, FuncURL: d.FuncURL, MoreInfoURL: d.MoreInfoURL, Published: d.Published,
		Queries: d.Queries, BasePrompt: d.BasePrompt, FewShots: d.FewShots, Conversational: d.Conversational,
		Model: d.Model, Audience: d.Audience, Created: e.Time, Modified: e.Time,
	}
}

// updated returns the fields with an update applied: a nil field keeps its value.
func (f AgentFields) updated(d events.AgentUpdated) AgentFields {
	for _, s := range []struct {
		dst *string
		v   *string
	}{{&f.Handle, d.Handle}, {&f.Name, d.Name}, {&f.Description, d.Description}, {&f.Kind, d.Kind},
		{&f.QueryURL, d.QueryURL}, {&f.FuncURL, d.FuncURL}, {&f.MoreInfoURL, d.MoreInfoURL},
		{&f.BasePrompt, d.BasePrompt}, {&f.Model, d.Model}, {&f.Audience, d.Audience}} {
		if s.v != nil {
			*s.dst = *s.v
		}
	}
	if d.Published != nil {
		f.Published = *d.Published
	}
	if d.Conversational != nil {
		f.Conversational = *d.Conversational
	}
	if d.Queries != nil {
		f.Queries = *d.Queries
	}
	if d.FewShots != nil {
		f.FewShots = *d.FewShots
	}
	return f
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
		v := AgentView{AgentFields: registeredFields(e, d)}
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
		v.AgentFields = old.updated(d)
		v.Modified = e.Time
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
