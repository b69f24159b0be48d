package commands

import (
	"context"
	"fmt"
	"slices"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/julepchat"
)

// JulepAgentRepo and JulepUserRepo are the node's repositories of Julep agents and users.
type (
	JulepAgentRepo = eventstore.Repo[julep.AgentState, *julep.AgentState]
	JulepUserRepo  = eventstore.Repo[julep.UserState, *julep.UserState]
)

// JulepAgents are the commands on Julep's agents and their tools.
type JulepAgents struct {
	repo  *JulepAgentRepo
	users *JulepUsers
	hosts apicall.Hosts
}

// NewJulepAgents returns the agent commands; hosts are the hosts api_call tools may call, users the users a system
// tool may name.
func NewJulepAgents(repo *JulepAgentRepo, users *JulepUsers, hosts apicall.Hosts) *JulepAgents {
	return &JulepAgents{repo: repo, users: users, hosts: hosts}
}

func (c *JulepAgents) refs() julepRefs { return julepRefs{agents: c, users: c.users} }

// Written is what a command on a Julep object appended: the object as it stands after it, and the stream sequence
// of its last event (0 when nothing was appended: the same request again).
type Written[T any] struct {
	Object T
	Seq    uint64
}

// CheckAgentSpec checks an agent's fields against Julep's rules and the limits.
func CheckAgentSpec(s events.JulepAgentSpec) error {
	if err := checkJulepName("name", s.Name, true); err != nil {
		return err
	}
	if err := checkText("about", s.About, maxJulepAbout); err != nil {
		return err
	}
	if err := checkChars("model", s.Model, maxModelChars); err != nil {
		return err
	}
	if err := checkInstructions(s.Instructions); err != nil {
		return err
	}
	if err := checkJSONObject("default_settings", s.DefaultSettings); err != nil {
		return err
	}
	if err := checkJSONObject("metadata", s.Metadata); err != nil {
		return err
	}
	if s.DefaultSystemTemplate != nil {
		if err := checkTemplate("default_system_template", *s.DefaultSystemTemplate); err != nil {
			return err
		}
	}
	if err := checkCanonicalName("canonical_name", s.CanonicalName); err != nil {
		return err
	}
	return checkCanonicalName("project", s.Project)
}

// Create makes an agent of the caller's account. Its ID derives from request (the request's ID, which a client's
// retry of it shares): the same request again returns the agent it made.
func (c *JulepAgents) Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepAgentSpec) (Written[julep.Agent], error) {
	if err := CheckAgentSpec(spec); err != nil {
		return Written[julep.Agent]{}, err
	}
	id := events.DeriveUUID(request, "agent")
	return c.update(ctx, actor, id, "create agent", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.CreateAgent(s, actor.AccountID, spec)
	})
}

// CreateOrUpdate is POST /agents/{id}: the agent at id made, or the caller's replaced.
func (c *JulepAgents) CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepAgentSpec) (Written[julep.Agent], error) {
	if err := ids.CheckUUID("agent_id", id); err != nil {
		return Written[julep.Agent]{}, err
	}
	if err := CheckAgentSpec(spec); err != nil {
		return Written[julep.Agent]{}, err
	}
	return c.update(ctx, actor, id, "create or update agent", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.CreateOrUpdateAgent(s, actor.AccountID, spec)
	})
}

// Replace is PUT /agents/{id}.
func (c *JulepAgents) Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepAgentSpec) (Written[julep.Agent], error) {
	if err := CheckAgentSpec(spec); err != nil {
		return Written[julep.Agent]{}, err
	}
	return c.update(ctx, actor, id, "replace agent", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.ReplaceAgent(s, actor.AccountID, id, spec)
	})
}

// Patch is PATCH /agents/{id}: the fields named change, metadata is merged.
func (c *JulepAgents) Patch(ctx context.Context, actor auth.Principal, id string, p julep.AgentPatch) (Written[julep.Agent], error) {
	return c.update(ctx, actor, id, "patch agent", func(s *julep.AgentState) ([]events.Event, error) {
		evs, err := julep.PatchAgent(s, actor.AccountID, id, p)
		if err != nil {
			return nil, err
		}
		return evs, CheckAgentSpec(evs[0].(events.JulepAgentUpdated).Spec)
	})
}

// Delete deletes the caller's agent; retry says the request is a client's retry (a delete it finds done is not a
// 404).
func (c *JulepAgents) Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (Written[julep.Agent], error) {
	return c.update(ctx, actor, id, "delete agent", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.DeleteAgent(s, actor.AccountID, id, retry)
	})
}

// Get returns the caller's agent as the log holds it now.
func (c *JulepAgents) Get(ctx context.Context, actor auth.Principal, id string) (julep.Agent, error) {
	return readJulep(ctx, c.repo, actor, id, "agent", func(s *julep.AgentState) (julep.Agent, bool) {
		return agentView(s), s.Owned(actor.AccountID)
	})
}

// AddTool adds a tool to the caller's agent; its ID derives from request.
func (c *JulepAgents) AddTool(ctx context.Context, actor auth.Principal, agentID, request string, t events.JulepTool) (Written[julep.Tool], error) {
	if err := julepchat.CheckTool("tool", t, c.hosts); err != nil {
		return Written[julep.Tool]{}, err
	}
	if err := c.refs().tool(ctx, actor, "tool", t); err != nil {
		return Written[julep.Tool]{}, err
	}
	toolID := events.DeriveUUID(request, "tool")
	w, err := c.update(ctx, actor, agentID, "add tool", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.AddTool(s, actor.AccountID, agentID, toolID, t)
	})
	return toolOf(w, toolID, err)
}

// ReplaceTool gives a tool of the caller's agent a new definition: t, or for a PATCH what patch makes of the tool
// as it stands.
func (c *JulepAgents) ReplaceTool(ctx context.Context, actor auth.Principal, agentID, toolID string, patch func(events.JulepTool) (events.JulepTool, error)) (Written[julep.Tool], error) {
	w, err := c.update(ctx, actor, agentID, "update tool", func(s *julep.AgentState) ([]events.Event, error) {
		old, ok := s.Tool(toolID)
		if !s.Owned(actor.AccountID) || !ok {
			return julep.ReplaceTool(s, actor.AccountID, agentID, toolID, old.Tool)
		}
		t, err := patch(old.Tool)
		if err != nil {
			return nil, err
		}
		if err := julepchat.CheckTool("tool", t, c.hosts); err != nil {
			return nil, err
		}
		// The reference is read here, inside the decision, because the new definition is made from the tool as
		// it stands (a PATCH); a reference the tool already held is not read again.
		if t.System != nil && (old.Tool.System == nil || t.System.Resource != old.Tool.System.Resource || t.System.ResourceID != old.Tool.System.ResourceID) {
			if err := c.refs().tool(ctx, actor, "tool", t); err != nil {
				return nil, err
			}
		}
		return julep.ReplaceTool(s, actor.AccountID, agentID, toolID, t)
	})
	return toolOf(w, toolID, err)
}

// DeleteTool removes a tool of the caller's agent.
func (c *JulepAgents) DeleteTool(ctx context.Context, actor auth.Principal, agentID, toolID string) (uint64, error) {
	w, err := c.update(ctx, actor, agentID, "delete tool", func(s *julep.AgentState) ([]events.Event, error) {
		return julep.DeleteTool(s, actor.AccountID, agentID, toolID)
	})
	return w.Seq, err
}

// agentView is the agent as it stands, its tools copied (the state's are changed in place).
func agentView(s *julep.AgentState) julep.Agent {
	a := s.Agent
	a.Tools = slices.Clone(a.Tools)
	return a
}

func toolOf(w Written[julep.Agent], toolID string, err error) (Written[julep.Tool], error) {
	if err != nil {
		return Written[julep.Tool]{}, err
	}
	for _, t := range w.Object.Tools {
		if t.ID == toolID {
			return Written[julep.Tool]{Object: t, Seq: w.Seq}, nil
		}
	}
	return Written[julep.Tool]{}, errs.NotFoundf("tool", toolID)
}

// update decides on the agent at id and appends, returning the agent as it then stands.
func (c *JulepAgents) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*julep.AgentState) ([]events.Event, error)) (Written[julep.Agent], error) {
	return writeJulep(ctx, c.repo, actor, id, "agent", what, decide, agentView)
}

// writeJulep decides on a Julep object and appends, returning the object as it stands after the append (as the
// repository holds it, with no read of the log beyond the append's own).
func writeJulep[S any, P interface {
	*S
	eventstore.State
}, T any](ctx context.Context, repo *eventstore.Repo[S, P], actor auth.Principal, id, kind, what string, decide func(*S) ([]events.Event, error), view func(*S) T) (Written[T], error) {
	if !ids.IsUUID(id) {
		return Written[T]{}, errs.NotFoundf(kind, id)
	}
	key := events.JulepAggregateID(actor.AccountID, id)
	res, err := repo.Update(ctx, key, eventstore.Fresh, actor.Meta(), decide)
	if err != nil {
		return Written[T]{}, fmt.Errorf("%s %s: %w", what, id, err)
	}
	var out Written[T]
	err = repo.Read(ctx, key, res.Version.Seq, func(s *S, _ events.Version) error {
		out.Object = view(s)
		return nil
	})
	if err != nil {
		return Written[T]{}, fmt.Errorf("%s %s: read it back: %w", what, id, err)
	}
	if len(res.Events) > 0 {
		out.Seq = res.LastSeq()
	}
	return out, nil
}

// readJulep reads the caller's Julep object as the log holds it now: view says what of it to return and whether it
// is the caller's (else it is not found).
func readJulep[S any, P interface {
	*S
	eventstore.State
}, T any](ctx context.Context, repo *eventstore.Repo[S, P], actor auth.Principal, id, kind string, view func(*S) (T, bool)) (T, error) {
	var out T
	if !ids.IsUUID(id) {
		return out, errs.NotFoundf(kind, id)
	}
	found := false
	err := repo.Read(ctx, events.JulepAggregateID(actor.AccountID, id), eventstore.Fresh, func(s *S, _ events.Version) error {
		out, found = view(s)
		return nil
	})
	if err != nil {
		return out, fmt.Errorf("read %s %s: %w", kind, id, err)
	}
	if !found {
		var zero T
		return zero, errs.NotFoundf(kind, id)
	}
	return out, nil
}
