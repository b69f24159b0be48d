// Package agentinfo is what is known of an agent and how its events fold into it. The registry (internal/agents)
// and the agents read model (projections) fold the same events, so they share this fold rather than keep two that
// could drift apart. It imports only events: the read models cannot import the registry (it depends on auth, which
// reads the read models).
package agentinfo

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

// Registered is an agent as its registration made it.
func Registered(e events.Envelope, d events.AgentRegistered) Info {
	return Info{
		ID: e.AggregateID, Account: e.Account, Handle: d.Handle, Name: d.Name, Description: d.Description,
		Kind: d.Kind, QueryURL: d.QueryURL, FuncURL: d.FuncURL, MoreInfoURL: d.MoreInfoURL, Published: d.Published,
		Queries: d.Queries, BasePrompt: d.BasePrompt, FewShots: d.FewShots, Conversational: d.Conversational,
		Model: d.Model, Audience: d.Audience, Created: e.Time, Modified: e.Time,
	}
}

// Updated returns info with an update applied: a nil field keeps its value.
func Updated(info Info, e events.Envelope, d events.AgentUpdated) Info {
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
