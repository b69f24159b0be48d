package agents

import "github.com/contrailhq/contrail/domain/agent"

// Info is what the registry knows of an agent (domain/agent holds it and its fold).
type Info = agent.Info

// Record is the agent aggregate rebuilt from its events.
type Record = agent.State
