// Package agent is the agent aggregate: what is known of an agent (registered by an account, or built into the
// platform), how its events fold into that, and which accounts may use it. The registry, the agents read model and
// the router all fold agent events through State.Apply.
//
// It imports events only.
package agent

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// Agent kinds: how a query reaches the agent.
const (
	KindBuiltin    = "builtin"    // answered inside the platform
	KindCodeShot   = "codeshot"   // few-shots run by the platform, funcs called over HTTP
	KindStandalone = "standalone" // an HTTP agent that answers queries itself
)

// Info is what is known of an agent.
type Info struct {
	ID string `json:"id"`
	// Account owns the agent; "" for a built-in agent, which every account has.
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

// Builtin reports whether the agent is built into the platform.
func (i Info) Builtin() bool { return i.Kind == KindBuiltin }

// VisibleTo reports whether an account may read and use the agent: its own, a published one, or a built-in.
func (i Info) VisibleTo(account string) bool {
	return i.Builtin() || i.Published || i.Account == account
}

// State is the agent aggregate rebuilt from its events.
type State struct {
	Info
	Exists  bool
	Deleted bool
}

// Live reports whether the agent exists and is not deleted.
func (s *State) Live() bool { return s.Exists && !s.Deleted }

// Apply folds one event: the only fold of agent events.
func (s *State) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.AgentRegistered:
		s.Exists = true
		s.Info = registered(e, d)
	case events.AgentUpdated:
		s.Info = updated(s.Info, e, d)
	case events.AgentDeleted:
		s.Deleted = true
		s.Modified = e.Time
	}
}

func registered(e events.Envelope, d events.AgentRegistered) Info {
	return Info{
		ID: e.AggregateID, Account: e.Account, Handle: d.Handle, Name: d.Name, Description: d.Description,
		Kind: d.Kind, QueryURL: d.QueryURL, FuncURL: d.FuncURL, MoreInfoURL: d.MoreInfoURL, Published: d.Published,
		Queries: d.Queries, BasePrompt: d.BasePrompt, FewShots: d.FewShots, Conversational: d.Conversational,
		Model: d.Model, Audience: d.Audience, Created: e.Time, Modified: e.Time,
	}
}

// updated returns info with an update applied: a nil field keeps its value.
func updated(info Info, e events.Envelope, d events.AgentUpdated) Info {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	set(&info.Handle, d.Handle)
	set(&info.Name, d.Name)
	set(&info.Description, d.Description)
	set(&info.Kind, d.Kind)
	set(&info.QueryURL, d.QueryURL)
	set(&info.FuncURL, d.FuncURL)
	set(&info.MoreInfoURL, d.MoreInfoURL)
	set(&info.BasePrompt, d.BasePrompt)
	set(&info.Model, d.Model)
	set(&info.Audience, d.Audience)
	if d.Published != nil {
		info.Published = *d.Published
	}
	if d.Conversational != nil {
		info.Conversational = *d.Conversational
	}
	if d.Queries != nil {
		info.Queries = *d.Queries
	}
	if d.FewShots != nil {
		info.FewShots = *d.FewShots
	}
	info.Modified = e.Time
	return info
}

// Listing is an agent as a list of agents names it: enough to choose one by its handle and owner.
type Listing struct {
	ID        string
	Account   string
	OwnerName string
	Handle    string
}
