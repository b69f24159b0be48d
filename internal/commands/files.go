package commands

import (
	"context"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// File is the file aggregate rebuilt from its events.
type File struct {
	ID      string
	Account string
	Exists  bool
	Deleted bool
	Object  string
}

// Apply folds one event.
func (f *File) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.FileCreated:
		f.ID, f.Account, f.Exists, f.Object = e.AggregateID, e.Account, true, d.Object
	case events.FileDeleted:
		f.Deleted = true
	}
}

// validPurpose reports whether OpenAI's file upload accepts a purpose.
func validPurpose(p string) bool {
	switch p {
	case "assistants", "batch", "fine-tune", "vision", "user_data", "evals":
		return true
	}
	return false
}

// NewFile is an upload: its bytes come from Body.
type NewFile struct {
	Filename    string
	Purpose     string
	ContentType string
	Body        io.Reader
}

// maxFilenameChars bounds a file's name.
const maxFilenameChars = 512

// CreateFile stores an upload's bytes in the object store, then records the file. It returns the file's ID once
// the files read model shows it.
func (c *Commands) CreateFile(ctx context.Context, actor auth.Principal, in NewFile) (string, error) {
	if in.Purpose == "" {
		return "", errs.Missing("purpose")
	}
	if !validPurpose(in.Purpose) {
		return "", errs.InvalidField("purpose", "'%s' is not one of ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] - 'purpose'", in.Purpose)
	}
	name := strings.TrimSpace(in.Filename)
	if name == "" || in.Body == nil {
		return "", errs.Missing("file")
	}
	if utf8.RuneCountInString(name) > maxFilenameChars {
		return "", errs.InvalidField("file", "file name is longer than %d characters", maxFilenameChars)
	}
	id := events.NewPrefixedID("file-")
	object := "files/" + actor.AccountID + "/" + id
	info, err := c.blobs.Put(ctx, object, in.ContentType, in.Body)
	if err != nil {
		return "", err
	}
	res, err := events.Update(ctx, c.store, events.Ref{Type: "file", ID: id}, actor.Meta(), func(f *File) ([]events.Event, error) {
		if f.Exists {
			return nil, errs.E(errs.Conflict, "file %s exists", id)
		}
		return []events.Event{events.FileCreated{Filename: name, Purpose: in.Purpose, Bytes: info.Size,
			Object: object, Digest: info.Digest, ContentType: in.ContentType}}, nil
	})
	if err != nil {
		_ = c.blobs.Delete(context.WithoutCancel(ctx), object)
		return "", err
	}
	return id, c.waitFor(ctx, res, projections.Files{})
}

// DeleteFile deletes a file and its bytes.
func (c *Commands) DeleteFile(ctx context.Context, actor auth.Principal, id string) error {
	if !validID(id) {
		return errs.NotFoundf("file", id)
	}
	var object string
	res, err := events.Update(ctx, c.store, events.Ref{Type: "file", ID: id}, actor.Meta(), func(f *File) ([]events.Event, error) {
		if !f.Exists || f.Deleted || f.Account != actor.AccountID {
			return nil, errs.NotFoundf("file", id)
		}
		object = f.Object
		return []events.Event{events.FileDeleted{}}, nil
	})
	if err != nil {
		return err
	}
	// The event is what counts; a blob left behind by a failure here holds nothing anyone can reach.
	if err := c.blobs.Delete(ctx, object); err != nil {
		return err
	}
	return c.waitFor(ctx, res, projections.Files{})
}
