package julepapi

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/projections"
)

// userBody is a user as clients send it.
type userBody struct {
	Name     present[string] `json:"name"`
	About    present[string] `json:"about"`
	Metadata json.RawMessage `json:"metadata"`
	Project  present[string] `json:"project"`
}

func (b userBody) spec() events.JulepUserSpec {
	return events.JulepUserSpec{Name: b.Name.Value, About: b.About.Value, Metadata: notNull(b.Metadata), Project: b.Project.Value}
}

func (b userBody) patch() julep.UserPatch {
	return julep.UserPatch{Name: b.Name.ptr(), About: b.About.ptr(), Project: b.Project.ptr(), Metadata: notNull(b.Metadata)}
}

// userJSON is Julep's User.
type userJSON struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	About     string          `json:"about"`
	Metadata  json.RawMessage `json:"metadata"`
	Project   *string         `json:"project"`
	CreatedAt string          `json:"created_at"`
	UpdatedAt string          `json:"updated_at"`
}

func userOut(u julep.User) userJSON {
	out := userJSON{ID: u.ID, Name: u.Spec.Name, About: u.Spec.About, Metadata: orObject(u.Spec.Metadata),
		CreatedAt: jsonTime(u.Created), UpdatedAt: jsonTime(u.Updated)}
	if u.Spec.Project != "" {
		out.Project = &u.Spec.Project
	}
	return out
}

// readUser reads a user body, and for a create its request ID.
func (f *Face) readUser(w http.ResponseWriter, r *http.Request, withID bool) (userBody, string, bool) {
	var b userBody
	id, err := f.readJSON(r, withID, &b)
	if err != nil {
		f.WriteError(w, r, err)
		return b, "", false
	}
	return b, id, true
}

// readJSON reads a JSON body into v, and with withID the request's ID (for a POST that creates).
func (f *Face) readJSON(r *http.Request, withID bool, v any) (string, error) {
	raw, err := readBody(r)
	if err != nil {
		return "", err
	}
	id := ""
	if withID {
		if id, _, err = f.requestID(r.Context(), r, raw); err != nil {
			return "", err
		}
	}
	return id, decode(raw, v)
}

func (f *Face) createUser(w http.ResponseWriter, r *http.Request) {
	b, id, good := f.readUser(w, r, true)
	if !good {
		return
	}
	res, err := f.d.Users.Create(r.Context(), principal(r), id, b.spec())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	created(w, userOut(res.Object))
}

func (f *Face) createOrUpdateUser(w http.ResponseWriter, r *http.Request) {
	b, _, good := f.readUser(w, r, false)
	if !good {
		return
	}
	res, err := f.d.Users.CreateOrUpdate(r.Context(), principal(r), chi.URLParam(r, "user_id"), b.spec())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, userOut(res.Object))
}

func (f *Face) replaceUser(w http.ResponseWriter, r *http.Request) {
	b, _, good := f.readUser(w, r, false)
	if !good {
		return
	}
	res, err := f.d.Users.Replace(r.Context(), principal(r), chi.URLParam(r, "user_id"), b.spec())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, userOut(res.Object))
}

func (f *Face) patchUser(w http.ResponseWriter, r *http.Request) {
	b, _, good := f.readUser(w, r, false)
	if !good {
		return
	}
	res, err := f.d.Users.Patch(r.Context(), principal(r), chi.URLParam(r, "user_id"), b.patch())
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, userOut(res.Object))
}

func (f *Face) getUser(w http.ResponseWriter, r *http.Request) {
	u, err := f.d.Users.Get(r.Context(), principal(r), chi.URLParam(r, "user_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, userOut(u))
}

func (f *Face) deleteUser(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "user_id")
	res, err := f.d.Users.Delete(r.Context(), principal(r), id, isRetry(r))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	deleted(w, id, res.Object.Updated)
}

func (f *Face) listUsers(w http.ResponseWriter, r *http.Request) {
	listFrom(f, w, r, projections.JulepUsersModel, principal(r).AccountID+".*", withMetadata, func(u julep.User) (listItem, any) {
		return listItem{created: u.Created, updated: u.Updated, metadata: u.Spec.Metadata}, userOut(u)
	})
}
