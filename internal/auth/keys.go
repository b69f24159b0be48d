package auth

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/internal/errs"
)

// Directory finds keys (by the hash of their secret) and accounts: the accounts read model, which auth reaches only
// through this interface, so that it depends on no read model.
type Directory interface {
	KeyByHash(ctx context.Context, hash string) (Key, bool, error)
	Account(ctx context.Context, id string) (Account, bool, error)
}

// Key is an API key as authentication needs it.
type Key struct {
	ID        string
	AccountID string
	Revoked   bool
	// Account, when the directory has it at hand, is the key's account: authentication then does not look it up.
	Account *Account
}

// Account is an account as authentication needs it.
type Account struct {
	ID                string
	Name              string
	Admin             bool
	RequestsPerMinute int
	DailyQueryLimit   int
}

// Keys authenticates API keys against a directory.
type Keys struct {
	dir Directory
}

// NewKeys returns an authenticator over a directory.
func NewKeys(dir Directory) *Keys { return &Keys{dir: dir} }

// Authenticate returns the principal of a raw API key. Unknown and revoked keys get the same answer.
func (k *Keys) Authenticate(ctx context.Context, rawKey string) (Principal, error) {
	if rawKey == "" {
		return Principal{}, errs.E(errs.Unauthorized, "missing API key: send it as 'Authorization: Bearer <key>'")
	}
	key, ok, err := k.dir.KeyByHash(ctx, HashKey(rawKey))
	if err != nil {
		return Principal{}, fmt.Errorf("look up key: %w", err)
	}
	if !ok || key.Revoked {
		return Principal{}, errs.E(errs.Unauthorized, "invalid API key")
	}
	acct, ok := Account{}, false
	if key.Account != nil {
		acct, ok = *key.Account, true
	} else if acct, ok, err = k.account(ctx, key.AccountID); err != nil {
		return Principal{}, fmt.Errorf("key %s: %w", key.ID, err)
	}
	if !ok {
		return Principal{}, errs.E(errs.Unauthorized, "invalid API key")
	}
	return Principal{AccountID: acct.ID, KeyID: key.ID, Admin: acct.Admin, Username: acct.Name,
		RequestsPerMinute: acct.RequestsPerMinute, DailyQueryLimit: acct.DailyQueryLimit, LimitsFound: true}, nil
}
