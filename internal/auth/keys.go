package auth

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// Keys authenticates API keys against the accounts read model.
type Keys struct {
	views *projections.Runner
}

// NewKeys returns an authenticator over the accounts read model.
func NewKeys(views *projections.Runner) *Keys { return &Keys{views: views} }

// Authenticate returns the principal of a raw API key. Unknown and revoked keys get the same answer.
func (k *Keys) Authenticate(ctx context.Context, rawKey string) (Principal, error) {
	if rawKey == "" {
		return Principal{}, errs.E(errs.Unauthorized, "missing API key: send it as 'Authorization: Bearer <key>'")
	}
	key, ok, err := projections.Get[projections.KeyView](ctx, k.views, "accounts", projections.KeyHashKey(HashKey(rawKey)))
	if err != nil {
		return Principal{}, fmt.Errorf("look up key: %w", err)
	}
	if !ok || key.RevokedAt != nil {
		return Principal{}, errs.E(errs.Unauthorized, "invalid API key")
	}
	acct, ok, err := k.account(ctx, key.AccountID)
	if err != nil {
		return Principal{}, fmt.Errorf("key %s: %w", key.ID, err)
	}
	if !ok {
		return Principal{}, errs.E(errs.Unauthorized, "invalid API key")
	}
	return Principal{AccountID: acct.ID, KeyID: key.ID, Admin: acct.Admin, Username: acct.Name,
		RequestsPerMinute: acct.RequestsPerMinute}, nil
}
