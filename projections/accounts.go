package projections

import (
	"context"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
)

// Accounts is the read model of accounts and their keys:
//
//	acct.<account id>  -> AccountView
//	key.<key hash>     -> KeyView (what authentication looks up on every request)
type Accounts struct{}

// AccountView is an account as reads see it.
type AccountView struct {
	ID                string    `json:"id"`
	Name              string    `json:"name"`
	Admin             bool      `json:"admin,omitempty"`
	DailyQueryLimit   int       `json:"daily_query_limit,omitempty"`
	RequestsPerMinute int       `json:"requests_per_minute,omitempty"`
	CreatedAt         time.Time `json:"created_at"`
	Keys              []KeyView `json:"keys"`
}

// KeyView is a key as reads see it. It holds no secret: the hash is only in the document's key.
type KeyView struct {
	ID        string     `json:"id"`
	AccountID string     `json:"account_id"`
	Name      string     `json:"name,omitempty"`
	Hint      string     `json:"hint"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Name implements Projection.
func (Accounts) Name() string { return "accounts" }

// EventTypes implements Projection.
func (Accounts) EventTypes() []string { return []string{"account.*"} }

// AccountKey is the document key of an account.
func AccountKey(id string) string { return "acct." + id }

// KeyHashKey is the document key of an API key, by its hash.
func KeyHashKey(hash string) string { return "key." + hash }

// Apply implements Projection.
func (Accounts) Apply(tx *Tx, e events.Envelope) error {
	key := AccountKey(e.AggregateID)
	switch d := e.Event.(type) {
	case events.AccountCreated:
		return tx.Put(key, AccountView{ID: e.AggregateID, Name: d.Name, Admin: d.Admin,
			DailyQueryLimit: d.DailyQueryLimit, CreatedAt: e.Time, Keys: []KeyView{}})
	case events.AccountKeyIssued:
		k := KeyView{ID: d.KeyID, AccountID: e.AggregateID, Name: d.Name, Hint: d.Hint, CreatedAt: e.Time}
		if err := tx.Put(KeyHashKey(d.Hash), k); err != nil {
			return err
		}
		return Modify(tx, key, func(a *AccountView, _ bool) error {
			a.Keys = append(a.Keys, k)
			return nil
		})
	case events.AccountKeyRevoked:
		// The lookup by hash goes away: a revoked key must fail on the next request.
		if err := tx.Delete(KeyHashKey(d.Hash)); err != nil {
			return err
		}
		return Modify(tx, key, func(a *AccountView, _ bool) error {
			for i := range a.Keys {
				if a.Keys[i].ID == d.KeyID {
					at := e.Time
					a.Keys[i].RevokedAt = &at
				}
			}
			return nil
		})
	case events.AccountLimitsChanged:
		return Modify(tx, key, func(a *AccountView, _ bool) error {
			if d.DailyQueryLimit != 0 {
				a.DailyQueryLimit = d.DailyQueryLimit
			}
			if d.RequestsPerMinute != 0 {
				a.RequestsPerMinute = d.RequestsPerMinute
			}
			return nil
		})
	}
	return nil
}

// Directory is the accounts read model as authentication reads it (auth.Directory).
type Directory struct{ Views *Runner }

// KeyByHash implements auth.Directory.
func (d Directory) KeyByHash(ctx context.Context, hash string) (auth.Key, bool, error) {
	k, ok, err := Get[KeyView](ctx, d.Views, "accounts", KeyHashKey(hash))
	return auth.Key{ID: k.ID, AccountID: k.AccountID, Revoked: k.RevokedAt != nil}, ok, err
}

// Account implements auth.Directory.
func (d Directory) Account(ctx context.Context, id string) (auth.Account, bool, error) {
	a, ok, err := Get[AccountView](ctx, d.Views, "accounts", AccountKey(id))
	return auth.Account{ID: a.ID, Name: a.Name, Admin: a.Admin, RequestsPerMinute: a.RequestsPerMinute,
		DailyQueryLimit: a.DailyQueryLimit}, ok, err
}
