package julep

import (
	"encoding/json"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// User is a Julep user as it stands.
type User struct {
	Object
	Spec events.JulepUserSpec `json:"spec"`
}

// UserState is the user aggregate rebuilt from its events.
type UserState struct{ User }

// Apply folds one event: the only fold of user events.
func (s *UserState) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.JulepUserCreated:
		s.User = User{Spec: d.Spec}
		s.born(e)
	case events.JulepUserUpdated:
		s.Spec, s.Updated = d.Spec, e.Time
	case events.JulepUserDeleted:
		s.Deleted, s.Updated = true, e.Time
	}
}

const userKind = "user"

// CreateUser makes a user at id (derived from the request: the same request again appends nothing).
func CreateUser(s *UserState, account string, spec events.JulepUserSpec) ([]events.Event, error) {
	return create(&s.Object, account, userKind, events.JulepUserCreated{Spec: spec})
}

// CreateOrUpdateUser is POST /users/{id}.
func CreateOrUpdateUser(s *UserState, account string, spec events.JulepUserSpec) ([]events.Event, error) {
	return createOrUpdate(&s.Object, account, userKind, events.JulepUserCreated{Spec: spec}, events.JulepUserUpdated{Spec: spec})
}

// ReplaceUser is PUT.
func ReplaceUser(s *UserState, account, id string, spec events.JulepUserSpec) ([]events.Event, error) {
	return change(&s.Object, account, userKind, id, events.JulepUserUpdated{Spec: spec})
}

// UserPatch names the fields a PATCH changes (nil: unchanged). Metadata is merged into the old.
type UserPatch struct {
	Name, About, Project *string
	Metadata             json.RawMessage
}

// PatchUser changes only the fields the patch names.
func PatchUser(s *UserState, account, id string, p UserPatch) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf(userKind, id)
	}
	spec := s.Spec
	spec.Name = orString(spec.Name, p.Name)
	spec.About = orString(spec.About, p.About)
	spec.Project = orString(spec.Project, p.Project)
	spec.Metadata = events.MergeObjects(spec.Metadata, p.Metadata)
	return []events.Event{events.JulepUserUpdated{Spec: spec}}, nil
}

// DeleteUser deletes the caller's user.
func DeleteUser(s *UserState, account, id string, retry bool) ([]events.Event, error) {
	return remove(&s.Object, account, userKind, id, retry, events.JulepUserDeleted{})
}
