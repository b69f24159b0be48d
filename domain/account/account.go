// Package account is the account aggregate: an account, its API keys (only their hashes) and its limits; its
// state and the one fold of its events.
//
// It imports events only.
package account

import "github.com/contrailhq/contrail/events"

// DefaultDailyQueryLimit is seed 000's per-user daily limit: the quota of an account that sets none.
const DefaultDailyQueryLimit = 1000

// DefaultRequestsPerMinute bounds one key's request rate unless its account says otherwise.
const DefaultRequestsPerMinute = 600

// State is an account rebuilt from its events.
type State struct {
	ID                string
	Name              string
	Admin             bool
	Exists            bool
	DailyQueryLimit   int
	RequestsPerMinute int
	Keys              map[string]*Key
}

// Key is a key of an account.
type Key struct {
	ID      string
	Hash    string
	Revoked bool
}

// Apply folds one event: the only fold of account events.
func (a *State) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.AccountCreated:
		a.ID, a.Name, a.Admin, a.Exists = e.AggregateID, d.Name, d.Admin, true
		a.DailyQueryLimit = d.DailyQueryLimit
		a.Keys = map[string]*Key{}
	case events.AccountKeyIssued:
		a.Keys[d.KeyID] = &Key{ID: d.KeyID, Hash: d.Hash}
	case events.AccountKeyRevoked:
		if k := a.Keys[d.KeyID]; k != nil {
			k.Revoked = true
		}
	case events.AccountLimitsChanged:
		if d.DailyQueryLimit != 0 {
			a.DailyQueryLimit = d.DailyQueryLimit
		}
		if d.RequestsPerMinute != 0 {
			a.RequestsPerMinute = d.RequestsPerMinute
		}
	}
}
