// Package julep holds Julep's own aggregates: agents ("jagent": an LLM persona with instructions and tools, not a
// registry agent), users ("juser") and docs ("doc": text snippets of an agent or a user, with their vectors). Each
// has its state, its one fold (Apply) and the decisions the commands make on it; the three share one lifecycle
// (an owner account, created, updated, deleted) and Julep's rules for it: create-or-update at a chosen UUID, PATCH
// changes only the fields named and merges metadata, PUT replaces. A Julep session is a session (domain/session).
//
// It imports events and errs only.
package julep

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// The aggregate types in the log.
const (
	AgentAggregate = "jagent"
	UserAggregate  = "juser"
	DocAggregate   = "doc"
)

// Object is what every Julep object's state has: whose it is and its life.
type Object struct {
	// ID is the object's UUID (its aggregate is events.JulepAggregateID(Account, ID)).
	ID      string    `json:"id"`
	Account string    `json:"account"`
	Exists  bool      `json:"-"`
	Deleted bool      `json:"-"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// Owned reports whether the object exists, is not deleted and belongs to account.
func (o *Object) Owned(account string) bool { return o.Exists && !o.Deleted && o.Account == account }

// born starts the object's life over (a deleted object's ID may be created again).
func (o *Object) born(e events.Envelope) {
	*o = Object{ID: events.JulepPublicID(e.AggregateID), Account: e.Account, Exists: true, Created: e.Time, Updated: e.Time}
}

// create decides making an object at its ID. The ID of a created object derives from the request that made it, so
// an object the account already has is that request again (a client's retry): nothing more is appended. An ID
// that another account holds is a conflict.
func create(o *Object, account, kind string, ev events.Event) ([]events.Event, error) {
	switch {
	case o.Owned(account):
		return nil, nil
	case o.Exists && !o.Deleted:
		return nil, taken(kind, o.ID)
	}
	return []events.Event{ev}, nil
}

// createOrUpdate decides Julep's POST /{kind}s/{id}: a new object, or the caller's replaced.
func createOrUpdate(o *Object, account, kind string, created, updated events.Event) ([]events.Event, error) {
	switch {
	case o.Owned(account):
		return []events.Event{updated}, nil
	case o.Exists && !o.Deleted:
		return nil, taken(kind, o.ID)
	}
	return []events.Event{created}, nil
}

// change decides an update of the caller's object.
func change(o *Object, account, kind, id string, ev events.Event) ([]events.Event, error) {
	if !o.Owned(account) {
		return nil, errs.NotFoundf(kind, id)
	}
	return []events.Event{ev}, nil
}

// remove decides deleting the caller's object. A retried delete of what the same client deleted finds it deleted:
// again is nothing, not a 404 for something that was there.
func remove(o *Object, account, kind, id string, retry bool, ev events.Event) ([]events.Event, error) {
	if retry && o.Exists && o.Deleted && o.Account == account {
		return nil, nil
	}
	return change(o, account, kind, id, ev)
}

func taken(kind, id string) error {
	return errs.E(errs.Conflict, "the id %s is already in use by another %s", id, kind)
}

// orRaw is the patch's value when it was sent, else the old one.
func orRaw(old, patch json.RawMessage) json.RawMessage {
	if patch != nil {
		return patch
	}
	return old
}

func orString(old string, patch *string) string {
	if patch != nil {
		return *patch
	}
	return old
}
