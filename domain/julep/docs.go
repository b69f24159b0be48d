package julep

import (
	"encoding/json"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Doc is a doc as it stands: what it holds and whose it is, and its snippets' vectors.
type Doc struct {
	Object
	events.DocCreated
}

// DocState is the doc aggregate rebuilt from its events.
type DocState struct{ Doc }

// Apply folds one event: the only fold of doc events.
func (s *DocState) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.DocCreated:
		s.Doc = Doc{DocCreated: d}
		s.born(e)
	case events.DocDeleted:
		s.Deleted, s.Updated = true, e.Time
	}
}

// Texts are the doc's snippets: its content's strings (one for a string content).
func (d Doc) Texts() []string { return ContentStrings(d.Content) }

// ContentStrings reads a content sent as a JSON string or a JSON list of strings.
func ContentStrings(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	return many
}

// OwnedBy reports whether the doc is the caller's and belongs to owner (a doc is addressed through its owner).
func (s *DocState) OwnedBy(account string, owner events.DocOwner) bool {
	return s.Owned(account) && s.Owner == owner
}

const docKind = "doc"

// CreateDoc adds a doc at id (derived from the request: the same request again appends nothing). The commands
// check that the owner is the caller's first.
func CreateDoc(s *DocState, account string, d events.DocCreated) ([]events.Event, error) {
	return create(&s.Object, account, docKind, d)
}

// DeleteDoc deletes a doc of owner.
func DeleteDoc(s *DocState, account, id string, owner events.DocOwner, retry bool) ([]events.Event, error) {
	if s.Exists && s.Account == account && s.Owner != owner {
		return nil, errs.NotFoundf(docKind, id)
	}
	return remove(&s.Object, account, docKind, id, retry, events.DocDeleted{Owner: owner})
}
