package graph

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/graph/model"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/projections"
)

func agentModel(a agents.Info, ownerName string) model.Agent {
	return model.Agent{
		AgentID: a.ID, Handle: a.Handle, Name: optional(a.Name), Description: optional(a.Description),
		Queries: append([]string{}, a.Queries...), MoreInfoURL: optional(a.MoreInfoURL), Published: a.Published,
		QueryURL: optional(a.QueryURL), FuncURL: optional(a.FuncURL), Kind: a.Kind, BasePrompt: optional(a.BasePrompt),
		FewShots: a.FewShots, Model: optional(a.Model), Created: a.Created,
		Modified: a.Modified, Cursor: a.ID, OwnerAccount: a.Account, OwnerName: ownerName,
	}
}

func viewModel(v projections.AgentView) model.Agent {
	return agentModel(v.Info, v.OwnerName)
}

// AllAgents lists built-ins, then the caller's own agents, then other accounts' published agents.
func (r queryResolver) AllAgents(ctx context.Context, first *int, after *string) ([]model.Agent, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	var out []model.Agent
	for _, b := range r.d.Agents.Builtins() {
		out = append(out, agentModel(b, ""))
	}
	if err := r.d.Views.ListCaughtUp(ctx, projections.Agents{}); err != nil {
		return nil, err
	}
	own, err := projections.ListAll[projections.AgentView](ctx, r.d.Views, "agents", projections.OwnAgentsFilter(p.AccountID))
	if err != nil {
		return nil, err
	}
	published, err := projections.ListAll[projections.AgentView](ctx, r.d.Views, "agents", projections.PublishedAgentsFilter)
	if err != nil {
		return nil, err
	}
	byAge := func(a, b projections.AgentView) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	}
	slices.SortFunc(own, byAge)
	slices.SortFunc(published, byAge)
	for _, v := range own {
		out = append(out, viewModel(v))
	}
	for _, v := range published {
		if v.Account != p.AccountID {
			out = append(out, viewModel(v))
		}
	}
	return page(out, func(a model.Agent) string { return a.Cursor }, first, after, "agent")
}

// AgentByID finds an agent the caller may see, by its ID or by its Fixie name ("<username>/<handle>").
func (r queryResolver) AgentByID(ctx context.Context, agentID string) (*model.Agent, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if strings.Contains(agentID, "/") {
		if _, _, err := commands.ParseAgentName("agentId", agentID); err != nil {
			return nil, err
		}
		a, err := r.d.AgentCommands.Find(ctx, p, agentID)
		if err != nil {
			return nil, err
		}
		return r.agentWithOwner(ctx, a)
	}
	if err := checkAgentRef("agentId", agentID); err != nil {
		return nil, err
	}
	if b, ok := r.d.Agents.Builtin(agentID); ok && b.ID == agentID {
		m := agentModel(b, "")
		return &m, nil
	}
	if !ids.Valid(ids.Agent, agentID) {
		return nil, errs.NotFoundf("agent", agentID) // a handle: agentById names agents by ID or Fixie name only
	}
	// The agent as the agents read model shows it once the model shows the agent's last event, or else, past the
	// wait, folded from the log: an agent deleted a moment ago is not found, one made or changed a moment ago (on
	// this node or another) is found as it is now.
	shown, err := r.d.Views.ShowsAggregate(ctx, projections.Agents{}, agentID)
	if err != nil {
		return nil, err
	}
	keys := []string{projections.OwnAgentKey(p.AccountID, agentID), projections.PublishedAgentKey(agentID)}
	if !shown {
		return r.agentFromLog(ctx, agentID, keys)
	}
	for _, key := range keys {
		v, ok, err := projections.GetLatest[projections.AgentView](ctx, r.d.Views, "agents", key)
		if err != nil {
			return nil, err
		}
		if ok {
			m := viewModel(v)
			return &m, nil
		}
	}
	return nil, errs.NotFoundf("agent", agentID)
}

// agentFromLog is an agent as the agents read model will show it under the first of keys it is found under (the
// caller's own, then the published), folded from the log with the model's own Apply (projections.FoldAggregate):
// the agent's events after its owner's account.created, which gives the owner's name. A log that cannot be read is
// an error saying the model is behind, not what the model holds.
func (r *Resolver) agentFromLog(ctx context.Context, agentID string, keys []string) (*model.Agent, error) {
	history, err := r.d.Views.History(ctx, events.Ref{Type: "agent", ID: agentID})
	if err != nil {
		return nil, projections.Behind(err, "the agent")
	}
	if len(history) == 0 {
		return nil, errs.NotFoundf("agent", agentID)
	}
	// The owner is the agent's account, as the log's own envelope names it (not the request); its ID names
	// subjects, so it is checked all the same.
	var all []events.Envelope
	if account := history[0].Account; ids.Valid(ids.Account, account) {
		if all, err = r.d.Views.History(ctx, events.Ref{Type: "account", ID: account}); err != nil {
			return nil, projections.Behind(err, "the agent")
		}
	}
	all = append(all, history...)
	slices.SortFunc(all, func(a, b events.Envelope) int { return cmp.Compare(a.Sequence, b.Sequence) })
	docs, err := projections.FoldAggregate(ctx, projections.Agents{}, all)
	if err != nil {
		return nil, err
	}
	for _, key := range keys {
		found, err := projections.DecodeMatching[projections.AgentView](projections.Agents{}, docs, key)
		if err != nil {
			return nil, fmt.Errorf("agent %s folded from the log: %w", agentID, err)
		}
		if len(found) > 0 {
			m := viewModel(found[0])
			return &m, nil
		}
	}
	return nil, errs.NotFoundf("agent", agentID)
}

// AgentByHandle finds the caller's own agent by handle, else a built-in or published one.
func (r queryResolver) AgentByHandle(ctx context.Context, handle string) (*model.Agent, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkAgentRef("handle", handle); err != nil {
		return nil, err
	}
	a, err := r.d.AgentCommands.Find(ctx, p, handle)
	if err != nil {
		return nil, err
	}
	return r.agentWithOwner(ctx, a)
}

// agentWithOwner is an agent found in the log (AgentCommands.Find reads it there) with its owner's name, which the
// agents read model keeps (from the owner's account.created): once the model shows the agent's last event, as the
// model holds it, or else, past the wait, folded from the log (agentOwned). An agent made or published a moment
// ago, on this node or another, is not shown ownerless because the model stood still a moment.
func (r *Resolver) agentWithOwner(ctx context.Context, a agents.Info) (*model.Agent, error) {
	if a.Builtin() {
		m := agentModel(a, "")
		return &m, nil
	}
	shown, err := r.d.Views.ShowsAggregate(ctx, projections.Agents{}, a.ID)
	if err != nil {
		return nil, err
	}
	return r.agentOwned(ctx, a, shown)
}

// agentOwned is agentWithOwner once it is known whether the agents read model shows the agent's last event: the
// owner's name from the model when it does, and from the agent's events folded with the model's own Apply
// (agentFromLog) when it does not. An agent the fold no longer finds (deleted since it was read) is shown without
// its owner's name, as the model would show it.
func (r *Resolver) agentOwned(ctx context.Context, a agents.Info, shown bool) (*model.Agent, error) {
	if a.Builtin() {
		m := agentModel(a, "")
		return &m, nil
	}
	key := projections.OwnAgentKey(a.Account, a.ID)
	name := ""
	if shown {
		v, ok, err := projections.GetLatest[projections.AgentView](ctx, r.d.Views, "agents", key)
		if err != nil {
			return nil, err
		}
		if ok {
			name = v.OwnerName
		}
	} else {
		folded, err := r.agentFromLog(ctx, a.ID, []string{key})
		switch {
		case err == nil:
			name = folded.OwnerName
		case errs.CodeOf(err) != errs.NotFound:
			return nil, err
		}
	}
	m := agentModel(a, name)
	return &m, nil
}

// agentWritten finishes an agent mutation: the command's error, or else whether the agents read model shows what
// it appended (projections' ShowsCommitted). Agent mutations answer once the model shows them (the registry and
// the router read it there, so the client's next query finds the agent as it left it); past the read wait the
// write went in all the same, and is answered as done (shown false: the answer's owner is folded from the log), not
// as a timeout the client would retry into a second write.
func (r *Resolver) agentWritten(ctx context.Context, res eventstore.Appended, err error) (bool, error) {
	return r.d.Views.ShowsCommitted(ctx, res, err, projections.Agents{})
}

// Owner is the owning account (null for a built-in).
func (r agentResolver) Owner(ctx context.Context, obj *model.Agent) (*model.User, error) {
	if obj.OwnerAccount == "" {
		return nil, nil
	}
	return &model.User{Username: obj.OwnerName, AccountID: obj.OwnerAccount}, nil
}

func agentInput(in generated.AgentInput) commands.AgentInput {
	out := commands.AgentInput{Handle: in.Handle, NewHandle: in.NewHandle, Name: in.Name, Description: in.Description,
		QueryURL: in.QueryURL, FuncURL: in.FuncURL, MoreInfoURL: in.MoreInfoURL, Published: in.Published, Kind: in.Kind,
		Model: in.Model, Audience: in.Audience}
	if in.Queries != nil {
		q := in.Queries
		out.Queries = &q
	}
	return out
}

// CreateAgent registers an agent.
func (r mutationResolver) CreateAgent(ctx context.Context, in generated.AgentInput) (*generated.AgentPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	reg, err := r.d.AgentCommands.Register(ctx, p, agentInput(in))
	shown, err := r.agentWritten(ctx, reg.Appended, err)
	if err != nil {
		return nil, err
	}
	if len(reg.Warnings) > 0 {
		// The registration stands; what its author should know (the agent's URL did not answer) goes with the
		// answer, in the response's extensions, so that the schema stays Fixie's.
		graphql.RegisterExtension(ctx, "warnings", reg.Warnings)
	}
	m, err := r.agentOwned(ctx, reg.Agent, shown)
	if err != nil {
		return nil, err
	}
	return &generated.AgentPayload{Agent: m}, nil
}

// UpdateAgent changes an agent of the caller's.
func (r mutationResolver) UpdateAgent(ctx context.Context, in generated.AgentInput) (*generated.AgentPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkAgentRef("handle", in.Handle); err != nil {
		return nil, err
	}
	a, err := r.d.AgentCommands.Update(ctx, p, agentInput(in))
	shown, err := r.agentWritten(ctx, a.Appended, err)
	if err != nil {
		return nil, err
	}
	m, err := r.agentOwned(ctx, a.Agent, shown)
	if err != nil {
		return nil, err
	}
	return &generated.AgentPayload{Agent: m}, nil
}

// DeleteAgent removes an agent of the caller's.
func (r mutationResolver) DeleteAgent(ctx context.Context, handle string) (*generated.AgentPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkAgentRef("handle", handle); err != nil {
		return nil, err
	}
	a, err := r.d.AgentCommands.Delete(ctx, p, handle)
	if _, err := r.agentWritten(ctx, a.Appended, err); err != nil {
		return nil, err
	}
	m := agentModel(a.Agent, p.Username)
	return &generated.AgentPayload{Agent: &m}, nil
}

// RefreshAgent reads an agent's description again from its URL.
func (r mutationResolver) RefreshAgent(ctx context.Context, handle string) (*generated.AgentPayload, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkAgentRef("handle", handle); err != nil {
		return nil, err
	}
	a, err := r.d.AgentCommands.Refresh(ctx, p, handle)
	shown, err := r.agentWritten(ctx, a.Appended, err)
	if err != nil {
		return nil, err
	}
	m, err := r.agentOwned(ctx, a.Agent, shown)
	if err != nil {
		return nil, err
	}
	return &generated.AgentPayload{Agent: m}, nil
}

// Route shows what the router would pick for a query.
func (r queryResolver) Route(ctx context.Context, query string, first *int) ([]generated.RouteMatch, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	if r.d.Router == nil {
		return []generated.RouteMatch{}, nil
	}
	n := 3
	if first != nil {
		n = *first
	}
	if n < 1 || n > 50 {
		return nil, errs.InvalidField("first", "first must be between 1 and 50")
	}
	if len(query) > commands.MaxMessageText {
		return nil, errs.InvalidField("query", "query is %d bytes long; at most %d are allowed", len(query), commands.MaxMessageText)
	}
	ms, err := r.d.Router.Rank(ctx, p.AccountID, query, n)
	if err != nil {
		return nil, err
	}
	out := []generated.RouteMatch{}
	for _, m := range ms {
		a, err := r.d.AgentCommands.Find(ctx, p, m.AgentID)
		if err != nil {
			continue // deleted since it was indexed
		}
		am, err := r.agentWithOwner(ctx, a)
		if err != nil {
			return nil, err
		}
		out = append(out, generated.RouteMatch{Agent: am, Score: m.Score, Fits: r.d.Router.Fits(m.Score)})
	}
	return out, nil
}

// DailyQueryLimit is shown for the caller's own account only.
func (r userResolver) DailyQueryLimit(ctx context.Context, obj *model.User) (*int, error) {
	limit, _, err := r.usage(ctx, obj)
	return limit, err
}

// DailyUsedQueries is shown for the caller's own account only.
func (r userResolver) DailyUsedQueries(ctx context.Context, obj *model.User) (*int, error) {
	_, used, err := r.usage(ctx, obj)
	return used, err
}

func (r userResolver) usage(ctx context.Context, obj *model.User) (*int, *int, error) {
	p, err := principal(ctx)
	if err != nil || obj.AccountID != p.AccountID {
		return nil, nil, err
	}
	limit, used, err := r.d.Usage.DailyUsage(ctx, p.AccountID)
	if err != nil {
		return nil, nil, err
	}
	return &limit, &used, nil
}

// User is the caller's account.
func (r queryResolver) User(ctx context.Context) (*model.User, error) {
	p, err := principal(ctx)
	if err != nil {
		return nil, err
	}
	return &model.User{Username: p.Username, AccountID: p.AccountID}, nil
}
