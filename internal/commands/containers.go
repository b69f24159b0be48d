package commands

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/contrailhq/contrail/domain/container"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// Containers are the commands on containers (where a response's code_interpreter runs).
type Containers struct {
	store *eventstore.Store
	repo  *eventstore.Repo[container.State, *container.State]
	files *Files
}

// NewContainers returns the container commands.
func NewContainers(store *eventstore.Store, files *Files) *Containers {
	return &Containers{store: store, repo: eventstore.NewRepo[container.State](store, "container", 1024), files: files}
}

// maxContainerFiles bounds the files a container is made with.
const maxContainerFiles = 40

// userFiles checks that files are the account's and says what the container records of each.
func (c *Containers) userFiles(ctx context.Context, account, param string, fileIDs []string) ([]events.ContainerFileAdded, error) {
	if len(fileIDs) > maxContainerFiles {
		return nil, errs.InvalidField(param, "at most %d files, got %d", maxContainerFiles, len(fileIDs))
	}
	var out []events.ContainerFileAdded
	for i, id := range fileIDs {
		at := fmt.Sprintf("%s[%d]", param, i)
		if err := ids.Check(at, ids.File, id); err != nil {
			return nil, err
		}
		f, _, err := c.files.loadFile(ctx, id)
		if err != nil {
			return nil, err
		}
		if !f.Exists || f.Deleted || f.Account != account {
			e := errs.NotFoundf("file", id)
			e.Field = at
			return nil, e
		}
		name := path.Base(strings.ReplaceAll(f.Filename, "\\", "/"))
		out = append(out, events.ContainerFileAdded{FileID: id, Path: "/mnt/data/" + name, Source: "user", Bytes: f.Bytes})
	}
	return out, nil
}

// Now is the clock a container's expiry is read with (the store's, which stamps its activity).
func (c *Containers) Now() time.Time { return c.store.Now() }

// Create makes a container with the caller's files that lives expiresAfter minutes after its last activity (0:
// the default).
func (c *Containers) Create(ctx context.Context, actor auth.Principal, name string, fileIDs []string, expiresAfter int) (string, eventstore.Appended, error) {
	if len(name) > 256 {
		return "", eventstore.Appended{}, errs.InvalidField("name", "'name' is longer than 256 bytes")
	}
	if expiresAfter == 0 {
		expiresAfter = container.DefaultExpiresAfter
	}
	if err := container.CheckExpiresAfter("expires_after.minutes", expiresAfter); err != nil {
		return "", eventstore.Appended{}, err
	}
	files, err := c.userFiles(ctx, actor.AccountID, "file_ids", fileIDs)
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	id := events.NewPrefixedID(ids.Container.Prefix)
	evs := []events.Event{events.ContainerCreated{Name: name, FileIDs: fileIDs, ExpiresAfterMinutes: expiresAfter}}
	for _, f := range files {
		evs = append(evs, f)
	}
	app, err := c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(*container.State) ([]events.Event, error) { return evs, nil })
	return id, app, err
}

// maxRenewals bounds the containers one response's {"type": "auto"} makes, one after another expired.
const maxRenewals = 64

// Ensure makes the container a response's code_interpreter asked for with {"type": "auto"}, once: its ID derives
// from the response (id), so a turn done again finds it. One that expired is followed by a fresh one whose ID
// derives from it, so a turn done again finds the same chain.
func (c *Containers) Ensure(ctx context.Context, account, id, responseID string, fileIDs []string) (container.State, error) {
	files, err := c.userFiles(ctx, account, "container.file_ids", fileIDs)
	if err != nil {
		return container.State{}, err
	}
	for range maxRenewals {
		s, err := c.ensure(ctx, account, id, responseID, fileIDs, files)
		if err != nil || !s.Expired(c.store.Now()) {
			return s, err
		}
		id = ids.Container.Prefix + events.DeriveID(id, "renewed")
	}
	return container.State{}, errs.E(errs.Conflict, "the code_interpreter's containers of response %s all expired", responseID)
}

func (c *Containers) ensure(ctx context.Context, account, id, responseID string, fileIDs []string, files []events.ContainerFileAdded) (container.State, error) {
	app, err := c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: account, Actor: "responder", CausationID: responseID},
		func(s *container.State) ([]events.Event, error) {
			if s.Exists {
				return nil, nil
			}
			evs := []events.Event{events.WithID(events.DeriveID(id, "created"), events.ContainerCreated{Name: "auto", FileIDs: fileIDs, ResponseID: responseID})}
			for _, f := range files {
				evs = append(evs, events.WithID(events.DeriveID(id, "file-"+f.FileID), f))
			}
			return evs, nil
		})
	if err != nil {
		return container.State{}, fmt.Errorf("make container %s: %w", id, err)
	}
	s, _, err := c.repo.Get(ctx, id, app.LastSeq())
	return s, err
}

// Get returns a container of the caller's.
func (c *Containers) Get(ctx context.Context, account, id string, atLeast uint64) (container.State, error) {
	if !ids.Valid(ids.Container, id) {
		return container.State{}, errs.NotFoundf("container", id)
	}
	s, _, err := c.repo.Get(ctx, id, atLeast)
	if err != nil {
		return s, fmt.Errorf("load container %s: %w", id, err)
	}
	if !s.Owned(account) {
		return s, errs.E(errs.NotFound, "Container with id '%s' not found.", id)
	}
	return s, nil
}

// Delete deletes a container of the caller's.
func (c *Containers) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	if _, err := c.Get(ctx, actor.AccountID, id, eventstore.Fresh); err != nil {
		return eventstore.Appended{}, err
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(s *container.State) ([]events.Event, error) {
		if s.Deleted {
			return nil, nil
		}
		return []events.Event{events.ContainerDeleted{}}, nil
	})
}

// Use records a code_interpreter call (item itemID) run in a container of account's, and returns the container; an
// expired one is refused (param names it).
func (c *Containers) Use(ctx context.Context, account, id, itemID, param string) (container.State, error) {
	if _, err := c.Get(ctx, account, id, eventstore.Fresh); err != nil {
		return container.State{}, err
	}
	app, err := c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: account, Actor: "responder"},
		func(s *container.State) ([]events.Event, error) {
			evs, err := container.Use(s, c.store.Now(), itemID)
			if e := errs.As(err); e != nil {
				e.Field = param
			}
			return evs, err
		})
	if err != nil {
		return container.State{}, err
	}
	s, _, err := c.repo.Get(ctx, id, app.LastSeq())
	return s, err
}

// AddFile adds a file of the caller's to their container s, as the caller just loaded it with Get (once: a file it
// holds is not added again), and returns the container's file; an expired container is refused. The append is
// decided on the state this node holds, which that Get brought up to the log: the container is read again only
// when another node appended meanwhile or the decision refuses (OpenAI's add is one request, not four reads).
func (c *Containers) AddFile(ctx context.Context, actor auth.Principal, s *container.State, fileID string) (container.File, error) {
	if fileID == "" {
		return container.File{}, errs.Missing("file_id")
	}
	files, err := c.userFiles(ctx, actor.AccountID, "file_id", []string{fileID})
	if err != nil {
		if e := errs.As(err); e != nil && e.Field == "file_id[0]" {
			e.Field = "file_id"
		}
		return container.File{}, err
	}
	// held is the file as the state the append was last decided on holds it: when that decision adds nothing (the
	// file was there, added by this caller before or by another request since s was loaded), it is the answer,
	// without reading the container again.
	var held container.File
	app, err := c.repo.Update(ctx, s.ID, eventstore.Fresh, actor.Meta(), func(s *container.State) ([]events.Event, error) {
		if !s.Owned(actor.AccountID) { // deleted since it was loaded
			return nil, errs.E(errs.NotFound, "Container with id '%s' not found.", s.ID)
		}
		held, _ = s.File(fileID)
		return container.Add(s, c.store.Now(), files)
	})
	if err != nil {
		return container.File{}, err
	}
	for _, env := range app.Events {
		if d, ok := env.Event.(events.ContainerFileAdded); ok && d.FileID == fileID {
			return container.File{ContainerFileAdded: d, CreatedAt: env.Time}, nil
		}
	}
	return held, nil
}

// DeleteFile removes a file from a container of the caller's, in one decision on the container: not found when the
// container is not theirs (or gone) or does not hold the file.
func (c *Containers) DeleteFile(ctx context.Context, actor auth.Principal, id, fileID string) (eventstore.Appended, error) {
	if !ids.Valid(ids.Container, id) {
		return eventstore.Appended{}, errs.NotFoundf("container", id)
	}
	return c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(s *container.State) ([]events.Event, error) {
		if !s.Owned(actor.AccountID) {
			return nil, errs.E(errs.NotFound, "Container with id '%s' not found.", id)
		}
		return container.DeleteFile(s, fileID)
	})
}

// AddOutputs records files the container's code wrote. A container deleted meanwhile (the call began before its
// deletion and ended after) is not found: a deleted container records nothing more.
func (c *Containers) AddOutputs(ctx context.Context, account, id string, files []events.ContainerFileAdded) error {
	_, err := c.repo.Update(ctx, id, eventstore.Fresh, events.Meta{Account: account, Actor: "responder"},
		func(s *container.State) ([]events.Event, error) {
			if !s.Owned(account) {
				return nil, errs.E(errs.NotFound, "Container with id '%s' not found.", id)
			}
			return container.AddFiles(s, files), nil
		})
	return err
}
