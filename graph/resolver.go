package graph

import (
	"context"
	"strings"

	"github.com/contrailhq/contrail/graph/generated"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// Resolver is the root of the hand-written resolvers.
type Resolver struct{ d Deps }

// Agent implements generated.ResolverRoot.
func (r *Resolver) Agent() generated.AgentResolver { return agentResolver{r} }

// Embed implements generated.ResolverRoot.
func (r *Resolver) Embed() generated.EmbedResolver { return embedResolver{r} }

// Message implements generated.ResolverRoot.
func (r *Resolver) Message() generated.MessageResolver { return messageResolver{r} }

// Mutation implements generated.ResolverRoot.
func (r *Resolver) Mutation() generated.MutationResolver { return mutationResolver{r} }

// Query implements generated.ResolverRoot.
func (r *Resolver) Query() generated.QueryResolver { return queryResolver{r} }

// Session implements generated.ResolverRoot.
func (r *Resolver) Session() generated.SessionResolver { return sessionResolver{r} }

// Subscription implements generated.ResolverRoot.
func (r *Resolver) Subscription() generated.SubscriptionResolver { return subscriptionResolver{r} }

// User implements generated.ResolverRoot.
func (r *Resolver) User() generated.UserResolver { return userResolver{r} }

type (
	agentResolver        struct{ *Resolver }
	embedResolver        struct{ *Resolver }
	messageResolver      struct{ *Resolver }
	mutationResolver     struct{ *Resolver }
	queryResolver        struct{ *Resolver }
	sessionResolver      struct{ *Resolver }
	subscriptionResolver struct{ *Resolver }
	userResolver         struct{ *Resolver }
)

// principal is who the request acts for; the HTTP layer or the websocket's init put it there.
func principal(ctx context.Context) (auth.Principal, error) {
	p, ok := auth.From(ctx)
	if !ok {
		return auth.Principal{}, errs.E(errs.Unauthorized, "missing API key: send it as 'Authorization: Bearer <key>'")
	}
	return p, nil
}

// maxPage bounds one page of a list.
const maxPage = 1000

// page cuts a list at the item after `after` (by its cursor) and to `first` items.
func page[T any](items []T, cursor func(T) string, first *int, after *string, what string) ([]T, error) {
	if after != nil && *after != "" {
		at := -1
		for i, it := range items {
			if cursor(it) == *after {
				at = i
				break
			}
		}
		if at < 0 {
			return nil, errs.InvalidField("after", "no %s has that cursor: pass a cursor from a previous page", what)
		}
		items = items[at+1:]
	}
	n := maxPage
	if first != nil {
		if *first < 0 || *first > maxPage {
			return nil, errs.InvalidField("first", "first must be between 0 and %d", maxPage)
		}
		n = *first
	}
	if len(items) > n {
		items = items[:n]
	}
	return items, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func trimmed(s *string) string {
	if s == nil {
		return ""
	}
	return strings.TrimSpace(*s)
}

// checkAgentRef checks what names an agent (an agent ID, a built-in's ID, a handle, owner/handle) before it is
// looked up: bounded, printable, and an agent ID (agt_...) a valid one.
func checkAgentRef(param, ref string) error {
	if err := ids.CheckName(param, ref, commands.MaxAgentRef); err != nil {
		return err
	}
	if strings.HasPrefix(ref, ids.Agent.Prefix) {
		return ids.Check(param, ids.Agent, ref)
	}
	return nil
}
