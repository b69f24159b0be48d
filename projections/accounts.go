package projections

import (
	"context"
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
)

// Accounts is the read model of accounts and their keys:
//
//	acct.<account id>     -> AccountView
//	key.<key hash>        -> KeyAuth (what authentication looks up on every request)
//	hashes.<account id>   -> the hashes of the account's live keys, whose KeyAuth a change of limits rewrites
type Accounts struct{}

// Version implements Versioned: 2 added the account's role and limits to each key's document.
func (Accounts) Version() int { return 2 }

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

// KeyAuth is a key as authentication reads it: the key, and what authentication needs of its account (its name,
// role and limits), so that a request costs one read.
type KeyAuth struct {
	KeyView
	AccountName       string `json:"account_name"`
	Admin             bool   `json:"admin,omitempty"`
	DailyQueryLimit   int    `json:"daily_query_limit,omitempty"`
	RequestsPerMinute int    `json:"requests_per_minute,omitempty"`
}

// Name implements Projection.
func (Accounts) Name() string { return "accounts" }

// EventTypes implements Projection.
func (Accounts) EventTypes() []string { return []string{"account.*"} }

// AccountKey is the document key of an account.
func AccountKey(id string) string { return "acct." + id }

// KeyHashKey is the document key of an API key, by its hash.
func KeyHashKey(hash string) string { return "key." + hash }

// keyHashesKey is the document key of the hashes of an account's live keys.
func keyHashesKey(account string) string { return "hashes." + account }

// Apply implements Projection.
func (Accounts) Apply(tx *Tx, e events.Envelope) error {
	key := AccountKey(e.AggregateID)
	switch d := e.Event.(type) {
	case events.AccountCreated:
		return tx.Put(key, AccountView{ID: e.AggregateID, Name: d.Name, Admin: d.Admin,
			DailyQueryLimit: d.DailyQueryLimit, CreatedAt: e.Time, Keys: []KeyView{}})
	case events.AccountKeyIssued:
		k := KeyView{ID: d.KeyID, AccountID: e.AggregateID, Name: d.Name, Hint: d.Hint, CreatedAt: e.Time}
		if err := Modify(tx, key, func(a *AccountView, _ bool) error {
			a.Keys = append(a.Keys, k)
			return nil
		}); err != nil {
			return err
		}
		// Read, not taken from the fold above: an event replayed after a crash is not folded again.
		var acct AccountView
		if _, err := tx.Get(key, &acct); err != nil {
			return err
		}
		if err := Modify(tx, keyHashesKey(e.AggregateID), func(hs *[]string, _ bool) error {
			*hs = append(*hs, d.Hash)
			return nil
		}); err != nil {
			return err
		}
		return tx.Put(KeyHashKey(d.Hash), KeyAuth{KeyView: k, AccountName: acct.Name, Admin: acct.Admin,
			DailyQueryLimit: acct.DailyQueryLimit, RequestsPerMinute: acct.RequestsPerMinute})
	case events.AccountKeyRevoked:
		// The lookup by hash goes away: a revoked key must fail on the next request.
		if err := tx.Delete(KeyHashKey(d.Hash)); err != nil {
			return err
		}
		if err := Modify(tx, keyHashesKey(e.AggregateID), func(hs *[]string, _ bool) error {
			*hs = slices.DeleteFunc(*hs, func(h string) bool { return h == d.Hash })
			return nil
		}); err != nil {
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
		if err := Modify(tx, key, func(a *AccountView, _ bool) error {
			if d.DailyQueryLimit != 0 {
				a.DailyQueryLimit = d.DailyQueryLimit
			}
			if d.RequestsPerMinute != 0 {
				a.RequestsPerMinute = d.RequestsPerMinute
			}
			return nil
		}); err != nil {
			return err
		}
		var acct AccountView
		if _, err := tx.Get(key, &acct); err != nil {
			return err
		}
		// Every live key's document carries the limits: they change in the same batch, before its checkpoint.
		var hashes []string
		if _, err := tx.Get(keyHashesKey(e.AggregateID), &hashes); err != nil {
			return err
		}
		for _, h := range hashes {
			if err := Modify(tx, KeyHashKey(h), func(k *KeyAuth, exists bool) error {
				if !exists {
					return ErrSkip
				}
				k.DailyQueryLimit, k.RequestsPerMinute = acct.DailyQueryLimit, acct.RequestsPerMinute
				return nil
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// Directory is the accounts read model as authentication reads it (auth.Directory).
type Directory struct{ Views *Runner }

// KeyByHash implements auth.Directory: the key comes with its account.
func (d Directory) KeyByHash(ctx context.Context, hash string) (auth.Key, bool, error) {
	k, ok, err := Get[KeyAuth](ctx, d.Views, "accounts", KeyHashKey(hash))
	return auth.Key{ID: k.ID, AccountID: k.AccountID, Revoked: k.RevokedAt != nil,
		Account: &auth.Account{ID: k.AccountID, Name: k.AccountName, Admin: k.Admin,
			DailyQueryLimit: k.DailyQueryLimit, RequestsPerMinute: k.RequestsPerMinute}}, ok, err
}

// Account implements auth.Directory.
func (d Directory) Account(ctx context.Context, id string) (auth.Account, bool, error) {
	a, ok, err := Get[AccountView](ctx, d.Views, "accounts", AccountKey(id))
	return auth.Account{ID: a.ID, Name: a.Name, Admin: a.Admin, RequestsPerMinute: a.RequestsPerMinute,
		DailyQueryLimit: a.DailyQueryLimit}, ok, err
}
