package commands

import (
	"context"
	"strings"

	"github.com/contrailhq/contrail/domain/account"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

// DefaultDailyQueryLimit is seed 000's per-user daily limit (domain/account's).
const DefaultDailyQueryLimit = account.DefaultDailyQueryLimit

// DefaultRequestsPerMinute bounds one key's request rate unless the account says otherwise (domain/account's).
const DefaultRequestsPerMinute = account.DefaultRequestsPerMinute

// AdminAccountID is the account created on first start. A fixed ID makes the bootstrap safe when several nodes
// start at once: only one creation can win.
const AdminAccountID = "acct_admin"

// Account is the account aggregate (domain/account); AccountKey is one of its keys.
type (
	Account    = account.State
	AccountKey = account.Key
)

// NewAccount is what creating an account takes.
type NewAccount struct {
	Name            string
	Admin           bool
	DailyQueryLimit int
	// Key is an existing key to issue (the admin bootstrap from CONTRAIL_ADMIN_KEY); empty = a fresh one.
	Key string
	// ID fixes the account ID (the admin bootstrap); empty = a fresh one.
	ID string
}

// IssuedKey is a key as its owner sees it once, and what issuing it appended (nothing when it was issued
// before). A key works once the accounts read model shows it (projections.Runner.Shows).
type IssuedKey struct {
	AccountID string              `json:"account_id"`
	KeyID     string              `json:"key_id"`
	Key       string              `json:"key"`
	Appended  eventstore.Appended `json:"-"`
}

// Accounts are the commands on accounts and their keys; they also report an account's daily usage.
type Accounts struct {
	store   *eventstore.Store
	queries QueryCounter
}

// Create opens an account with its first key. Only an admin may, except for the bootstrap (the system
// principal, which has no key).
func (c *Accounts) Create(ctx context.Context, actor auth.Principal, in NewAccount) (IssuedKey, error) {
	if !actor.System() && !actor.Admin {
		return IssuedKey{}, errs.E(errs.Forbidden, "only an admin account may create accounts")
	}
	name := strings.TrimSpace(in.Name)
	if name == "" {
		return IssuedKey{}, errs.Missing("name")
	}
	if len(name) > 100 {
		return IssuedKey{}, errs.InvalidField("name", "name is longer than 100 characters")
	}
	if in.DailyQueryLimit < 0 {
		return IssuedKey{}, errs.InvalidField("daily_query_limit", "daily_query_limit must not be negative")
	}
	id := in.ID
	if id == "" {
		id = events.NewPrefixedID("acct_")
	}
	key := in.Key
	if key == "" {
		key = auth.NewKey()
	}
	hash := auth.HashKey(key)
	keyID := auth.KeyID(hash)
	meta := actor.Meta()
	meta.Account = id
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "account", ID: id}, meta, func(a *Account) ([]events.Event, error) {
		if a.Exists {
			return nil, errs.E(errs.Conflict, "account %s exists", id)
		}
		return []events.Event{
			events.AccountCreated{Name: name, Admin: in.Admin, DailyQueryLimit: in.DailyQueryLimit},
			events.AccountKeyIssued{KeyID: keyID, Name: "first key", Hash: hash, Hint: auth.KeyHint(key)},
		}, nil
	})
	if err != nil {
		return IssuedKey{}, err
	}
	return IssuedKey{AccountID: id, KeyID: keyID, Key: key, Appended: res}, nil
}

// IssueKey adds a key to an account: the account itself or an admin may.
func (c *Accounts) IssueKey(ctx context.Context, actor auth.Principal, accountID, name, key string) (IssuedKey, error) {
	if err := mayManage(actor, accountID); err != nil {
		return IssuedKey{}, err
	}
	if err := checkBytes("name", name, maxKeyName); err != nil {
		return IssuedKey{}, err
	}
	if key == "" {
		key = auth.NewKey()
	} else if !strings.HasPrefix(key, auth.KeyPrefix) || len(key) < 32 {
		return IssuedKey{}, errs.InvalidField("key", "a chosen key must start with %q and be at least 32 characters", auth.KeyPrefix)
	}
	hash := auth.HashKey(key)
	keyID := auth.KeyID(hash)
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "account", ID: accountID}, actor.Meta(), func(a *Account) ([]events.Event, error) {
		if !a.Exists {
			return nil, errs.NotFoundf("account", accountID)
		}
		if k := a.Keys[keyID]; k != nil {
			if k.Revoked {
				return nil, errs.E(errs.Conflict, "key %s was revoked; it cannot be issued again", keyID)
			}
			return nil, nil // already issued: issuing is idempotent
		}
		return []events.Event{events.AccountKeyIssued{KeyID: keyID, Name: name, Hash: hash, Hint: auth.KeyHint(key)}}, nil
	})
	if err != nil {
		return IssuedKey{}, err
	}
	return IssuedKey{AccountID: accountID, KeyID: keyID, Key: key, Appended: res}, nil
}

// RevokeKey stops a key from working.
func (c *Accounts) RevokeKey(ctx context.Context, actor auth.Principal, accountID, keyID string) (eventstore.Appended, error) {
	if err := mayManage(actor, accountID); err != nil {
		return eventstore.Appended{}, err
	}
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "account", ID: accountID}, actor.Meta(), func(a *Account) ([]events.Event, error) {
		if !a.Exists {
			return nil, errs.NotFoundf("account", accountID)
		}
		k := a.Keys[keyID]
		if k == nil {
			return nil, errs.NotFoundf("key", keyID)
		}
		if k.Revoked {
			return nil, nil
		}
		return []events.Event{events.AccountKeyRevoked{KeyID: keyID, Hash: k.Hash}}, nil
	})
	return res, err
}

// SetLimits changes an account's usage limits. Only an admin may.
func (c *Accounts) SetLimits(ctx context.Context, actor auth.Principal, accountID string, dailyQueries, perMinute int) (eventstore.Appended, error) {
	if !actor.System() && !actor.Admin {
		return eventstore.Appended{}, errs.E(errs.Forbidden, "only an admin account may change limits")
	}
	if dailyQueries < 0 {
		return eventstore.Appended{}, errs.InvalidField("daily_query_limit", "daily_query_limit must not be negative")
	}
	if perMinute < 0 {
		return eventstore.Appended{}, errs.InvalidField("requests_per_minute", "requests_per_minute must not be negative")
	}
	if !validID(accountID) {
		return eventstore.Appended{}, errs.NotFoundf("account", accountID)
	}
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "account", ID: accountID}, actor.Meta(), func(a *Account) ([]events.Event, error) {
		if !a.Exists {
			return nil, errs.NotFoundf("account", accountID)
		}
		return []events.Event{events.AccountLimitsChanged{DailyQueryLimit: dailyQueries, RequestsPerMinute: perMinute}}, nil
	})
	return res, err
}

func mayManage(actor auth.Principal, accountID string) error {
	if !validID(accountID) {
		return errs.NotFoundf("account", accountID)
	}
	if actor.AgentID != "" {
		// An agent acts for its user only where the user sent it; keys are not among those things.
		return errs.E(errs.Forbidden, "agents cannot manage API keys")
	}
	if actor.System() || actor.Admin || actor.AccountID == accountID {
		return nil
	}
	// Another account's existence is not revealed.
	return errs.NotFoundf("account", accountID)
}
