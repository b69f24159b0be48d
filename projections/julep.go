package projections

import (
	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
)

// The read models of Julep's objects serve its lists (limit, offset, sort_by, direction, metadata_filter); a get
// reads the aggregate itself. Each stores the domain's view (julep.Agent, julep.User, julep.Doc without its
// vectors, session.JulepView), folded by the domain's own fold, under the owning account first:
//
//	julep_agents    <account>.<agent id>                        -> julep.Agent
//	julep_users     <account>.<user id>                         -> julep.User
//	julep_docs      <account>.<owner role>.<owner id>.<doc id>  -> julep.Doc (no vectors)
//	julep_sessions  <account>.<session id>                      -> session.JulepView
type (
	JulepAgents   struct{}
	JulepUsers    struct{}
	JulepDocs     struct{}
	JulepSessions struct{}
)

// Names of the Julep read models.
const (
	JulepAgentsModel   = "julep_agents"
	JulepUsersModel    = "julep_users"
	JulepDocsModel     = "julep_docs"
	JulepSessionsModel = "julep_sessions"
)

// Name implements Projection.
func (JulepAgents) Name() string { return JulepAgentsModel }

// EventTypes implements Projection.
func (JulepAgents) EventTypes() []string { return []string{julep.AgentAggregate + ".*"} }

// Apply implements Projection.
func (JulepAgents) Apply(tx *Tx, e events.Envelope) error {
	return foldObject(tx, OwnedKey(e.Account, e.AggregateID), e, func(s *julep.AgentState) (any, *julep.Object) {
		return &s.Agent, &s.Object
	})
}

// Name implements Projection.
func (JulepUsers) Name() string { return JulepUsersModel }

// EventTypes implements Projection.
func (JulepUsers) EventTypes() []string { return []string{julep.UserAggregate + ".*"} }

// Apply implements Projection.
func (JulepUsers) Apply(tx *Tx, e events.Envelope) error {
	return foldObject(tx, OwnedKey(e.Account, e.AggregateID), e, func(s *julep.UserState) (any, *julep.Object) {
		return &s.User, &s.Object
	})
}

// Name implements Projection.
func (JulepDocs) Name() string { return JulepDocsModel }

// EventTypes implements Projection.
func (JulepDocs) EventTypes() []string { return []string{julep.DocAggregate + ".*"} }

// JulepDocKey is where a doc of an owner is.
func JulepDocKey(account string, owner events.DocOwner, id string) string {
	return account + "." + owner.Role + "." + owner.ID + "." + id
}

// JulepDocsFilter lists an owner's docs.
func JulepDocsFilter(account string, owner events.DocOwner) string {
	return account + "." + owner.Role + "." + owner.ID + ".*"
}

// Apply implements Projection.
func (JulepDocs) Apply(tx *Tx, e events.Envelope) error {
	var owner events.DocOwner
	switch d := e.Event.(type) {
	case events.DocCreated:
		owner = d.Owner
	case events.DocDeleted:
		owner = d.Owner
	default:
		return nil
	}
	return foldObject(tx, JulepDocKey(e.Account, owner, e.AggregateID), e, func(s *julep.DocState) (any, *julep.Object) {
		for i := range s.Snippets {
			s.Snippets[i].Vector = nil // lists never show vectors; the log keeps them
		}
		return &s.Doc, &s.Object
	})
}

// foldObject folds one event into a Julep object's document with the object's own fold (State.Apply): the view
// is the state less what only the fold needs (Exists and Deleted, which the document's presence says). view gives
// the state's view and its Object.
func foldObject[S any, P interface {
	*S
	eventstore.State
}](tx *Tx, key string, e events.Envelope, view func(*S) (any, *julep.Object)) error {
	s := P(new(S))
	v, o := view((*S)(s))
	ok, err := tx.Get(key, v)
	if err != nil {
		return err
	}
	o.Exists = ok
	s.Apply(e)
	v, o = view((*S)(s))
	if o.Deleted {
		return tx.Delete(key)
	}
	return tx.Put(key, v)
}

// Name implements Projection.
func (JulepSessions) Name() string { return JulepSessionsModel }

// EventTypes implements Projection.
func (JulepSessions) EventTypes() []string {
	return []string{"session.created", "session.julep_updated", "session.summarized", "session.chat_answered", "session.deleted"}
}

// Apply implements Projection.
func (JulepSessions) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	if _, ok := e.Event.(events.SessionDeleted); ok {
		return tx.Delete(key)
	}
	var v session.JulepView
	if _, created := e.Event.(events.SessionCreated); !created {
		if ok, err := tx.Get(key, &v); err != nil || !ok {
			return err
		}
	}
	if !session.FoldJulepView(&v, e) {
		return nil
	}
	return tx.Put(key, v)
}
