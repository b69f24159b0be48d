package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

// AgentInput is what registering or changing an agent takes. A nil field is not given: on create it takes its
// default, on update it keeps its value.
type AgentInput struct {
	// Handle names the agent among its owner's (on update: the agent to change).
	Handle string
	// NewHandle renames the agent (update only).
	NewHandle      *string
	Name           *string
	Description    *string
	Kind           *string
	QueryURL       *string
	FuncURL        *string
	MoreInfoURL    *string
	Published      *bool
	Queries        *[]string
	BasePrompt     *string
	FewShots       *[]string
	Conversational *bool
	Model          *string
	Audience       *string
}

// Agents are the commands on Fixie agents: registration, change, deletion, and their names.
type Agents struct {
	store    *eventstore.Store
	agents   *agents.Registry
	metadata AgentMetadata
}

// handleRef names the claim aggregate of an account's handle.
func handleRef(account, handle string) events.Ref {
	return events.Ref{Type: agent.HandleAggregate, ID: agent.HandleID(account, handle)}
}

// AgentChange is an agent as a command left it, what its author should know (its URL did not answer, say), and
// what the command appended: the agents read model, and so the registry and the router, show the change once
// it has folded that (projections.Runner.Shows).
type AgentChange struct {
	Agent    agents.Info
	Warnings []string
	Appended eventstore.Appended
}

// Register registers an agent of the caller's account. An agent whose URL does not answer yet is registered with
// what was given (it may be starting); the warning says so and how to read its description later.
func (c *Agents) Register(ctx context.Context, actor auth.Principal, in AgentInput) (AgentChange, error) {
	var reg AgentChange
	handle := strings.TrimSpace(in.Handle)
	if err := c.validHandle("handle", handle); err != nil {
		return reg, err
	}
	// An update clears the more-info link with ""; a registration has none to clear, so "" there is a mistake.
	if in.MoreInfoURL != nil && strings.TrimSpace(*in.MoreInfoURL) == "" {
		return reg, errs.InvalidField("moreInfoUrl", "moreInfoUrl is empty: give the agent's http(s) page, or leave the field out")
	}
	if err := validAgentFields(in); err != nil {
		return reg, err
	}
	id := events.NewPrefixedID("agt_")
	// Registering by URL: what the agent says of itself (few-shots, sample queries) completes what was given.
	if in.FewShots == nil && in.Queries == nil {
		var unreached *unreachedError
		if err := c.fetchMetadata(ctx, actor, id, &in); errors.As(err, &unreached) {
			reg.Warnings = append(reg.Warnings, fmt.Sprintf("agent %s is not yet reachable at %s (%v): it is registered "+
				"without its description (few-shots, sample queries) and cannot answer until refreshAgent (contrail agents "+
				"refresh %s) reads it", handle, unreached.url, unreached.err, handle))
		} else if err != nil {
			return reg, err
		}
	}
	ev := events.AgentRegistered{
		Handle: handle, Kind: value(in.Kind, defaultKind(in)), Name: value(in.Name, ""),
		Description: value(in.Description, ""), QueryURL: value(in.QueryURL, ""), FuncURL: value(in.FuncURL, ""),
		MoreInfoURL: value(in.MoreInfoURL, ""), Published: value(in.Published, false), Queries: value(in.Queries, nil),
		BasePrompt: value(in.BasePrompt, ""), FewShots: value(in.FewShots, nil),
		Conversational: value(in.Conversational, false), Model: value(in.Model, ""), Audience: value(in.Audience, ""),
	}
	if err := c.claimHandle(ctx, actor, handle, id); err != nil {
		return reg, err
	}
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "agent", ID: id}, actor.Meta(), func(r *agents.Record) ([]events.Event, error) {
		if r.Exists {
			return nil, errs.E(errs.Conflict, "agent %s exists", id)
		}
		return []events.Event{ev}, nil
	})
	if err != nil {
		return reg, fmt.Errorf("register agent %q: %w", handle, err)
	}
	reg.Appended = res
	reg.Agent, err = c.agentInfo(ctx, res)
	return reg, err
}

// Update changes an agent of the caller's account, named by its handle.
func (c *Agents) Update(ctx context.Context, actor auth.Principal, in AgentInput) (AgentChange, error) {
	handle := strings.TrimSpace(in.Handle)
	if handle == "" {
		return AgentChange{}, errs.Missing("handle")
	}
	if err := validAgentFields(in); err != nil {
		return AgentChange{}, err
	}
	id, err := c.ownAgentID(ctx, actor, handle)
	if err != nil {
		return AgentChange{}, err
	}
	upd := events.AgentUpdated{Name: in.Name, Description: in.Description, Kind: in.Kind, QueryURL: in.QueryURL,
		FuncURL: in.FuncURL, MoreInfoURL: in.MoreInfoURL, Published: in.Published, Queries: in.Queries,
		BasePrompt: in.BasePrompt, FewShots: in.FewShots, Conversational: in.Conversational, Model: in.Model,
		Audience: in.Audience}
	renamed := ""
	if in.NewHandle != nil && strings.TrimSpace(*in.NewHandle) != handle {
		renamed = strings.TrimSpace(*in.NewHandle)
		if err := c.validHandle("newHandle", renamed); err != nil {
			return AgentChange{}, err
		}
		if err := c.claimHandle(ctx, actor, renamed, id); err != nil {
			return AgentChange{}, err
		}
		upd.Handle = &renamed
	}
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "agent", ID: id}, actor.Meta(), func(r *agents.Record) ([]events.Event, error) {
		if !r.Exists || r.Deleted || r.Account != actor.AccountID {
			return nil, errs.NotFoundf("agent", handle)
		}
		return []events.Event{upd}, nil
	})
	if err != nil {
		return AgentChange{}, fmt.Errorf("update agent %q: %w", handle, err)
	}
	if renamed != "" {
		if err := c.releaseHandle(ctx, actor, handle, id); err != nil {
			return AgentChange{}, err
		}
	}
	info, err := c.agentInfo(ctx, res)
	return AgentChange{Agent: info, Appended: res}, err
}

// Delete removes an agent of the caller's account and frees its handle.
func (c *Agents) Delete(ctx context.Context, actor auth.Principal, handle string) (AgentChange, error) {
	handle = strings.TrimSpace(handle)
	if handle == "" {
		return AgentChange{}, errs.Missing("handle")
	}
	id, err := c.ownAgentID(ctx, actor, handle)
	if err != nil {
		return AgentChange{}, err
	}
	var deleted agents.Info
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "agent", ID: id}, actor.Meta(), func(r *agents.Record) ([]events.Event, error) {
		if !r.Exists || r.Deleted || r.Account != actor.AccountID {
			return nil, errs.NotFoundf("agent", handle)
		}
		deleted = r.Info
		return []events.Event{events.AgentDeleted{Handle: r.Handle}}, nil
	})
	if err != nil {
		return AgentChange{}, fmt.Errorf("delete agent %q: %w", handle, err)
	}
	if err := c.releaseHandle(ctx, actor, handle, id); err != nil {
		return AgentChange{}, err
	}
	return AgentChange{Agent: deleted, Appended: res}, nil
}

// Find resolves what a client calls an agent — a built-in's ID or handle, an agent ID, one of the caller's
// handles, a published agent's handle, or its Fixie name "<username>/<handle>" — to an agent the caller may use
// (agents.Registry.Find).
func (c *Agents) Find(ctx context.Context, actor auth.Principal, ref string) (agents.Info, error) {
	if len(strings.TrimSpace(ref)) > MaxAgentRef {
		return agents.Info{}, errs.NotFoundf("agent", ref) // longer than any agent's name (the faces say so by name)
	}
	if strings.Contains(ref, "/") {
		if _, _, err := ParseAgentName("agent", strings.TrimSpace(ref)); err != nil {
			return agents.Info{}, err
		}
	}
	info, _, err := c.agents.Find(ctx, actor.AccountID, actor.Username, ref)
	return info, err
}

// ownAgentID finds the agent behind one of the caller's handles.
func (c *Agents) ownAgentID(ctx context.Context, actor auth.Principal, handle string) (string, error) {
	if _, ok := c.agents.Builtin(handle); ok {
		return "", errs.E(errs.Forbidden, "agent %q is built into the platform and cannot be changed", handle)
	}
	id, ok, err := c.handleOwner(ctx, actor.AccountID, handle)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errs.E(errs.NotFound, "you have no agent with handle '%s'", handle)
	}
	return id, nil
}

// handleOwner reads who holds a handle of an account, from the claim's own history (consistent).
func (c *Agents) handleOwner(ctx context.Context, account, handle string) (string, bool, error) {
	return c.agents.HandleOwner(ctx, account, handle)
}

// claimHandle gives a handle of the caller's account to agent id, unless another live agent holds it. A claim whose
// agent was never registered (a crash between the two appends) is taken over.
func (c *Agents) claimHandle(ctx context.Context, actor auth.Principal, handle, id string) error {
	holder, claimed, err := c.handleOwner(ctx, actor.AccountID, handle)
	if err != nil {
		return err
	}
	stale := ""
	if claimed && holder != id {
		rec, err := c.agents.Load(ctx, holder)
		if err != nil {
			return err
		}
		if rec.Exists && !rec.Deleted {
			return errs.E(errs.Conflict, "you already have an agent with handle %q", handle)
		}
		stale = holder
	}
	_, err = eventstore.Update(ctx, c.store, handleRef(actor.AccountID, handle), actor.Meta(), func(h *agent.HandleClaim) ([]events.Event, error) {
		switch {
		case h.Claimed && h.AgentID == id:
			return nil, nil
		case h.Claimed && h.AgentID != stale:
			return nil, errs.E(errs.Conflict, "you already have an agent with handle %q", handle)
		}
		return []events.Event{events.AgentHandleClaimed{Handle: handle, AgentID: id}}, nil
	})
	if err != nil {
		return fmt.Errorf("claim handle %q: %w", handle, err)
	}
	return nil
}

func (c *Agents) releaseHandle(ctx context.Context, actor auth.Principal, handle, id string) error {
	_, err := eventstore.Update(ctx, c.store, handleRef(actor.AccountID, handle), actor.Meta(), func(h *agent.HandleClaim) ([]events.Event, error) {
		if !h.Claimed || h.AgentID != id {
			return nil, nil
		}
		return []events.Event{events.AgentHandleReleased{Handle: handle, AgentID: id}}, nil
	})
	if err != nil {
		return fmt.Errorf("release handle %q: %w", handle, err)
	}
	return nil
}

// agentInfo folds what an append wrote into the agent as it now is.
func (c *Agents) agentInfo(ctx context.Context, res eventstore.Appended) (agents.Info, error) {
	if len(res.Events) == 0 {
		return agents.Info{}, fmt.Errorf("agent append returned no events")
	}
	ref := events.Ref{Type: "agent", ID: res.Events[0].AggregateID}
	history, _, err := c.store.Load(ctx, ref)
	if err != nil {
		return agents.Info{}, err
	}
	var r agents.Record
	for _, e := range history {
		if e.Event != nil {
			r.Apply(e)
		}
	}
	return r.Info, nil
}

// validHandle: lower-case letters, digits, '-' and '_', starting with a letter or digit; not a built-in's.
func (c *Agents) validHandle(field, h string) error {
	if h == "" {
		return errs.Missing(field)
	}
	if len(h) > maxHandle {
		return errs.InvalidField(field, "%s is longer than %d characters", field, maxHandle)
	}
	if !validHandleChars(h) {
		return errs.InvalidField(field, "%s %q: use lower-case letters, digits, '-' and '_', starting with a letter or digit", field, h)
	}
	if _, ok := c.agents.Builtin(h); ok {
		return errs.InvalidField(field, "%s %q is the handle of a built-in agent", field, h)
	}
	return nil
}

// validHandleChars reports whether h can be a handle: 1 to 64 lower-case letters, digits, '-' or '_', starting with a
// letter or a digit.
func validHandleChars(h string) bool {
	if h == "" || len(h) > maxHandle {
		return false
	}
	for i, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || (i > 0 && (r == '-' || r == '_'))) {
			return false
		}
	}
	return true
}

func validAgentFields(in AgentInput) error {
	if in.Name != nil && len(*in.Name) > maxAgentName {
		return errs.InvalidField("name", "name is longer than %d characters", maxAgentName)
	}
	if in.Description != nil && len(*in.Description) > maxDescription {
		return errs.InvalidField("description", "description is longer than %d characters", maxDescription)
	}
	// An agent is reached at its URLs: each given must be one a server can be reached at ("" too is refused: the
	// agent would answer nothing). A more-info link may be cleared with "".
	for _, f := range []struct {
		name string
		u    *string
	}{{"queryUrl", in.QueryURL}, {"funcUrl", in.FuncURL}, {"moreInfoUrl", in.MoreInfoURL}} {
		if f.u == nil || (*f.u == "" && f.name == "moreInfoUrl") {
			continue
		}
		if *f.u == "" {
			return errs.InvalidField(f.name, "%s must not be empty: give the agent's http(s) URL, or leave the field out", f.name)
		}
		if err := CheckURL(f.name, *f.u); err != nil {
			return err
		}
	}
	if in.Kind != nil {
		switch *in.Kind {
		case agents.KindCodeShot, agents.KindStandalone:
		default:
			return errs.InvalidField("kind", "invalid kind: use %q or %q", agents.KindCodeShot, agents.KindStandalone)
		}
	}
	if in.Model != nil {
		if err := checkChars("model", *in.Model, maxModelChars); err != nil {
			return err
		}
	}
	if in.Audience != nil {
		if err := checkBytes("audience", *in.Audience, maxAudience); err != nil {
			return err
		}
	}
	if in.Queries != nil {
		if len(*in.Queries) > maxQueries {
			return errs.InvalidField("queries", "at most %d sample queries", maxQueries)
		}
		for i, q := range *in.Queries {
			if len(q) > maxQueryText {
				return errs.InvalidField(fmt.Sprintf("queries[%d]", i), "sample query is longer than %d characters", maxQueryText)
			}
		}
	}
	return nil
}

// value is *p, or def when p is nil (a field not given).
func value[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// defaultKind: an agent with funcs is a Code Shot agent; otherwise it answers queries itself.
func defaultKind(in AgentInput) string {
	if in.FuncURL != nil && *in.FuncURL != "" {
		return agents.KindCodeShot
	}
	return agents.KindStandalone
}
