package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/agent"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
)

// Fixie named an agent "<username>/<handle>" ("fixie/calc"), and the Fixie SDK checks the "aid" of every token
// against that name (FIXIE_ALLOWED_AGENT_ID, which `fixie agent serve` sets from the user's username and the
// agent's handle). Contrail's agent IDs are "agt_..."; the Fixie name is what tokens carry in "aid" and what the
// faces accept besides the ID.

// Bounds of a Fixie agent name.
const (
	maxUsername  = 64
	maxFixieName = maxUsername + 1 + maxHandle
)

// validUsername reports whether an account name can stand in an agent name: 1 to 64 letters, digits, '.', '_' or
// '-', starting with a letter or a digit. (An account ID, "acct_...", is one too.)
func validUsername(s string) bool {
	if s == "" || len(s) > maxUsername {
		return false
	}
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || (i > 0 && strings.ContainsRune("._-", r))
		if !ok {
			return false
		}
	}
	return true
}

// ParseAgentName checks a Fixie agent name, "<username>/<handle>", given in field, and splits it.
func ParseAgentName(field, name string) (owner, handle string, err error) {
	if len(name) > maxFixieName {
		return "", "", errs.InvalidField(field, "%s is longer than %d characters", field, maxFixieName)
	}
	owner, handle, ok := strings.Cut(name, "/")
	if !ok || strings.Contains(handle, "/") {
		return "", "", errs.InvalidField(field, "%s must be an agent ID (agt_...) or <username>/<handle>, with one '/'", field)
	}
	if !validUsername(owner) {
		return "", "", errs.InvalidField(field, "%s: the username before '/' must be 1 to %d letters, digits, '.', '_' or '-'", field, maxUsername)
	}
	if !validHandleChars(handle) {
		return "", "", errs.InvalidField(field, "%s: the handle after '/' must be 1 to %d lower-case letters, digits, '-' or '_'", field, maxHandle)
	}
	return owner, handle, nil
}

// fold rebuilds an aggregate from its history, for a read that decides nothing.
func fold[S any, P interface {
	*S
	eventstore.State
}](ctx context.Context, store *eventstore.Store, ref events.Ref) (S, error) {
	return foldWith[S, P](ctx, store.Load, ref)
}

// foldConfirmed is fold for a read that may refuse: when ok says the state is not what the caller needs (it does not
// exist, it is another account's), the aggregate is folded again from the history the stream's leader holds before
// the caller refuses. On a cluster the replica that answered a load may lag behind writes made on other nodes, and
// a 404 for what exists is a wrong answer (eventstore.Update does the same for its refusals).
func foldConfirmed[S any, P interface {
	*S
	eventstore.State
}](ctx context.Context, store *eventstore.Store, ref events.Ref, ok func(*S) bool) (S, error) {
	state, err := foldWith[S, P](ctx, store.Load, ref)
	if err != nil || ok(&state) {
		return state, err
	}
	return foldWith[S, P](ctx, store.LoadLatest, ref)
}

func foldWith[S any, P interface {
	*S
	eventstore.State
}](ctx context.Context, load func(context.Context, events.Ref) ([]events.Envelope, events.Version, error), ref events.Ref) (S, error) {
	var state S
	history, _, err := load(ctx, ref)
	if err != nil {
		return state, err
	}
	for _, e := range history {
		if e.Event != nil {
			P(&state).Apply(e)
		}
	}
	return state, nil
}

// username is the name an account goes by in agent names. Account names need not be unique, so it is the
// account's name when the account holds it — the first account to need a name gets it — and its ID otherwise (a
// name another account holds, or one that cannot stand in an agent name).
func (c *Agents) username(ctx context.Context, accountID string) (string, error) {
	acct, err := fold[Account](ctx, c.store, events.Ref{Type: "account", ID: accountID})
	if err != nil {
		return "", fmt.Errorf("load account %s: %w", accountID, err)
	}
	if !acct.Exists || !validUsername(acct.Name) {
		return accountID, nil
	}
	holder := ""
	_, err = eventstore.Update(ctx, c.store, events.Ref{Type: agent.UsernameAggregate, ID: agent.UsernameID(acct.Name)},
		events.Meta{Account: accountID, Actor: "system"},
		func(u *agent.UsernameClaim) ([]events.Event, error) {
			holder = u.Account
			if holder != "" {
				return nil, nil
			}
			holder = accountID
			return []events.Event{events.UsernameClaimed{Username: acct.Name, Account: accountID}}, nil
		})
	if err != nil {
		return "", fmt.Errorf("claim username %q: %w", acct.Name, err)
	}
	if holder != accountID {
		return accountID, nil
	}
	return acct.Name, nil
}

// FixieName is the name of an account's agent as Fixie wrote it and as tokens carry it in "aid":
// "<username>/<handle>".
func (c *Agents) FixieName(ctx context.Context, accountID, handle string) (string, error) {
	user, err := c.username(ctx, accountID)
	if err != nil {
		return "", err
	}
	return user + "/" + handle, nil
}
