package julepapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
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
	createWith(f, w, r, userOut, func(ctx context.Context, p auth.Principal, id string, b userBody) (commands.Written[julep.User], error) {
		return f.d.Users.Create(ctx, p, id, b.spec())
	})
}

func (f *Face) createOrUpdateUser(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "user_id", userOut, func(ctx context.Context, p auth.Principal, id string, b userBody) (commands.Written[julep.User], error) {
		return f.d.Users.CreateOrUpdate(ctx, p, id, b.spec())
	})
}

func (f *Face) replaceUser(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "user_id", userOut, func(ctx context.Context, p auth.Principal, id string, b userBody) (commands.Written[julep.User], error) {
		return f.d.Users.Replace(ctx, p, id, b.spec())
	})
}

func (f *Face) patchUser(w http.ResponseWriter, r *http.Request) {
	writeWith(f, w, r, "user_id", userOut, func(ctx context.Context, p auth.Principal, id string, b userBody) (commands.Written[julep.User], error) {
		return f.d.Users.Patch(ctx, p, id, b.patch())
	})
}

func (f *Face) getUser(w http.ResponseWriter, r *http.Request) {
	getWith(f, w, r, "user_id", userOut, f.d.Users.Get)
}

func (f *Face) deleteUser(w http.ResponseWriter, r *http.Request) {
	deleteWith(f, w, r, "user_id", func(u julep.User) time.Time { return u.Updated }, f.d.Users.Delete)
}

func (f *Face) listUsers(w http.ResponseWriter, r *http.Request) {
	listFrom(f, w, r, projections.JulepUsersModel, principal(r).AccountID+".*", withMetadata, func(u julep.User) (listItem, any) {
		return listItem{created: u.Created, updated: u.Updated, metadata: u.Spec.Metadata}, userOut(u)
	})
}
