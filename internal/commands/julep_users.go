package commands

import (
	"context"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/ids"
)

// JulepUsers are the commands on Julep's users.
type JulepUsers struct {
	repo *JulepUserRepo
}

// NewJulepUsers returns the user commands.
func NewJulepUsers(repo *JulepUserRepo) *JulepUsers { return &JulepUsers{repo: repo} }

// CheckUserSpec checks a user's fields.
func CheckUserSpec(s events.JulepUserSpec) error {
	if err := checkJulepName("name", s.Name, false); err != nil {
		return err
	}
	if err := checkText("about", s.About, maxJulepAbout); err != nil {
		return err
	}
	if err := checkJSONObject("metadata", s.Metadata); err != nil {
		return err
	}
	return checkCanonicalName("project", s.Project)
}

// Create makes a user of the caller's account; its ID derives from request.
func (c *JulepUsers) Create(ctx context.Context, actor auth.Principal, request string, spec events.JulepUserSpec) (Written[julep.User], error) {
	if err := CheckUserSpec(spec); err != nil {
		return Written[julep.User]{}, err
	}
	id := events.DeriveUUID(request, "user")
	return c.update(ctx, actor, id, "create user", func(s *julep.UserState) ([]events.Event, error) {
		return julep.CreateUser(s, actor.AccountID, spec)
	})
}

// CreateOrUpdate is POST /users/{id}.
func (c *JulepUsers) CreateOrUpdate(ctx context.Context, actor auth.Principal, id string, spec events.JulepUserSpec) (Written[julep.User], error) {
	if err := ids.CheckUUID("user_id", id); err != nil {
		return Written[julep.User]{}, err
	}
	if err := CheckUserSpec(spec); err != nil {
		return Written[julep.User]{}, err
	}
	return c.update(ctx, actor, id, "create or update user", func(s *julep.UserState) ([]events.Event, error) {
		return julep.CreateOrUpdateUser(s, actor.AccountID, spec)
	})
}

// Replace is PUT /users/{id}.
func (c *JulepUsers) Replace(ctx context.Context, actor auth.Principal, id string, spec events.JulepUserSpec) (Written[julep.User], error) {
	if err := CheckUserSpec(spec); err != nil {
		return Written[julep.User]{}, err
	}
	return c.update(ctx, actor, id, "replace user", func(s *julep.UserState) ([]events.Event, error) {
		return julep.ReplaceUser(s, actor.AccountID, id, spec)
	})
}

// Patch is PATCH /users/{id}.
func (c *JulepUsers) Patch(ctx context.Context, actor auth.Principal, id string, p julep.UserPatch) (Written[julep.User], error) {
	return c.update(ctx, actor, id, "patch user", func(s *julep.UserState) ([]events.Event, error) {
		evs, err := julep.PatchUser(s, actor.AccountID, id, p)
		if err != nil {
			return nil, err
		}
		return evs, CheckUserSpec(evs[0].(events.JulepUserUpdated).Spec)
	})
}

// Delete deletes the caller's user.
func (c *JulepUsers) Delete(ctx context.Context, actor auth.Principal, id string, retry bool) (Written[julep.User], error) {
	return c.update(ctx, actor, id, "delete user", func(s *julep.UserState) ([]events.Event, error) {
		return julep.DeleteUser(s, actor.AccountID, id, retry)
	})
}

// Get returns the caller's user as the log holds it now.
func (c *JulepUsers) Get(ctx context.Context, actor auth.Principal, id string) (julep.User, error) {
	return readJulep(ctx, c.repo, actor, id, "user", func(s *julep.UserState) (julep.User, bool) {
		return s.User, s.Owned(actor.AccountID)
	})
}

func (c *JulepUsers) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*julep.UserState) ([]events.Event, error)) (Written[julep.User], error) {
	return writeJulep(ctx, c.repo, actor, id, "user", what, decide, func(s *julep.UserState) julep.User { return s.User })
}
