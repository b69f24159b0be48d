package agents

import (
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents/agentinfo"
)

// Info is what the registry knows of an agent.
type Info = agentinfo.Info

// Record is the agent aggregate rebuilt from its events (the state the commands decide on, and what dispatch
// loads).
type Record struct {
	Info
	Exists  bool
	Deleted bool
}

// Apply folds one event.
func (r *Record) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.AgentRegistered:
		r.Exists = true
		r.Info = agentinfo.Registered(e, d)
	case events.AgentUpdated:
		r.Info = agentinfo.Updated(r.Info, e, d)
	case events.AgentDeleted:
		r.Deleted = true
		r.Modified = e.Time
	}
}
