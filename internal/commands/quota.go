package commands

import (
	"context"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/projections"
)

// QueryCounter counts queries against an account's daily quota. The limits package implements it; CountQuery
// fails with an errs.RateLimited error once the quota is used up.
type QueryCounter interface {
	CountQuery(ctx context.Context, p auth.Principal) error
	DailyUsage(ctx context.Context, accountID string) (limit, used int, err error)
}

// Unlimited is a QueryCounter that counts nothing: every query is allowed. It reports the account's configured
// limit (or the default) and no usage.
type Unlimited struct {
	Views *projections.Runner
}

// CountQuery implements QueryCounter.
func (Unlimited) CountQuery(context.Context, auth.Principal) error { return nil }

// DailyUsage implements QueryCounter.
func (u Unlimited) DailyUsage(ctx context.Context, accountID string) (int, int, error) {
	a, _, err := projections.Get[projections.AccountView](ctx, u.Views, "accounts", projections.AccountKey(accountID))
	if err != nil {
		return 0, 0, err
	}
	if a.DailyQueryLimit > 0 {
		return a.DailyQueryLimit, 0, nil
	}
	return DefaultDailyQueryLimit, 0, nil
}

// DailyUsage reports an account's daily query limit and how much of it is used.
func (c *Accounts) DailyUsage(ctx context.Context, accountID string) (limit, used int, err error) {
	return c.queries.DailyUsage(ctx, accountID)
}
