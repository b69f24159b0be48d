package projections

import (
	"context"
	"slices"
	"sync"
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

// Directory is the accounts read model as authentication reads it (auth.Directory). Every request looks its key up,
// and account events are rare: the keys found are remembered for as long as the read model stands where it stood
// when they were read. Any event it applies (a key revoked, limits changed) or a new generation forgets them all on
// this node before a command that appended the event can answer, since such a command waits for the model to show
// its write (Runner.Shows); other nodes forget them when they see the model move, as soon as they would have read
// the changed document. Keys not found are not remembered: a stranger's guesses cost what they cost before.
type Directory struct {
	views *Runner
	keys  *keyCache
}

// NewDirectory returns the directory of the accounts read model of views.
func NewDirectory(views *Runner) *Directory {
	return &Directory{views: views, keys: &keyCache{keys: map[string]KeyAuth{}}}
}

// keyCache is the keys a Directory found, by hash, as of one mark of the accounts read model.
type keyCache struct {
	mu   sync.Mutex
	at   mark
	keys map[string]KeyAuth
}

// maxCachedKeys bounds the keys a node remembers; past it, it starts afresh.
const maxCachedKeys = 10_000

// get finds a key remembered at mark at, forgetting every key when the model has moved since they were read.
func (c *keyCache) get(at mark, hash string) (KeyAuth, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != at {
		clear(c.keys)
		c.at = at
	}
	k, ok := c.keys[hash]
	return k, ok
}

// put remembers a key read at mark at, unless the model moved meanwhile (the key read may be older than the move).
func (c *keyCache) put(at, now mark, hash string, k KeyAuth) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != at || now != at {
		return
	}
	if len(c.keys) >= maxCachedKeys {
		clear(c.keys)
	}
	c.keys[hash] = k
}

// KeyByHash implements auth.Directory: the key comes with its account.
func (d *Directory) KeyByHash(ctx context.Context, hash string) (auth.Key, bool, error) {
	const model = "accounts"
	at, err := d.views.mark(model)
	if err != nil {
		return auth.Key{}, false, err
	}
	if k, ok := d.keys.get(at, hash); ok {
		return authKey(k), true, nil
	}
	var k KeyAuth
	found, latest, err := d.views.getLatest(ctx, model, KeyHashKey(hash), &k)
	if err != nil || !found {
		return auth.Key{}, false, err
	}
	if latest && k.RevokedAt == nil {
		if now, err := d.views.mark(model); err == nil {
			d.keys.put(at, now, hash, k)
		}
	}
	return authKey(k), true, nil
}

func authKey(k KeyAuth) auth.Key {
	return auth.Key{ID: k.ID, AccountID: k.AccountID, Revoked: k.RevokedAt != nil,
		Account: &auth.Account{ID: k.AccountID, Name: k.AccountName, Admin: k.Admin,
			DailyQueryLimit: k.DailyQueryLimit, RequestsPerMinute: k.RequestsPerMinute}}
}

// Account implements auth.Directory.
func (d *Directory) Account(ctx context.Context, id string) (auth.Account, bool, error) {
	a, ok, err := Get[AccountView](ctx, d.views, "accounts", AccountKey(id))
	return auth.Account{ID: a.ID, Name: a.Name, Admin: a.Admin, RequestsPerMinute: a.RequestsPerMinute,
		DailyQueryLimit: a.DailyQueryLimit}, ok, err
}

// AccountLimits reads an account's own limits from the accounts read model (it is internal/limits' Accounts).
type AccountLimits struct{ Views *Runner }

// Limits returns what the account sets itself (0: the platform's default) and whether the account exists.
func (a AccountLimits) Limits(ctx context.Context, accountID string) (dailyQueries, requestsPerMinute int, found bool, err error) {
	acct, ok, err := Get[AccountView](ctx, a.Views, "accounts", AccountKey(accountID))
	if err != nil {
		return 0, 0, false, err
	}
	return acct.DailyQueryLimit, acct.RequestsPerMinute, ok, nil
}
