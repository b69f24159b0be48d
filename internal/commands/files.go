package commands

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// File is the file aggregate rebuilt from its events (domain/file).
type File = file.State

// validPurpose reports whether OpenAI's file upload accepts a purpose.
func validPurpose(p string) bool {
	switch p {
	case "assistants", "batch", "fine-tune", "vision", "user_data", "evals":
		return true
	}
	return false
}

// Files are the commands on Assistants API files: uploads, outputs of code, deletion.
type Files struct {
	store *eventstore.Store
	blobs *blobs.Store
}

// Upload is the bytes of a file stored in the object store, not yet recorded as a file.
type Upload struct {
	FileID      string
	Object      string
	Size        int64
	Digest      string
	ContentType string
}

// StoreUpload streams an upload's bytes to the object store. The file is recorded by CreateFile (a multipart
// upload may send its purpose after the bytes).
func (c *Files) StoreUpload(ctx context.Context, actor auth.Principal, contentType string, body io.Reader) (Upload, error) {
	if len(contentType) > maxContentTypeBytes {
		return Upload{}, errs.InvalidField("file", "the file's content type is %d bytes long; at most %d are allowed", len(contentType), maxContentTypeBytes)
	}
	id := events.NewPrefixedID("file-")
	object := "files/" + actor.AccountID + "/" + id
	info, err := c.blobs.Put(ctx, object, contentType, body)
	if err != nil {
		return Upload{}, err
	}
	return Upload{FileID: id, Object: object, Size: info.Size, Digest: info.Digest, ContentType: contentType}, nil
}

// DiscardUpload removes stored bytes that will not be recorded.
func (c *Files) DiscardUpload(ctx context.Context, u Upload) error {
	return c.blobs.Delete(context.WithoutCancel(ctx), u.Object)
}

// NewFile is a file to record: its name, purpose and stored bytes.
type NewFile struct {
	Filename string
	Purpose  string
	Upload   Upload
}

// Create records a stored upload as a file and returns its ID. Invalid input discards the upload.
func (c *Files) Create(ctx context.Context, actor auth.Principal, in NewFile) (id string, res eventstore.Appended, err error) {
	defer func() {
		if err != nil && in.Upload.Object != "" {
			_ = c.DiscardUpload(ctx, in.Upload)
		}
	}()
	if in.Purpose == "" {
		return "", eventstore.Appended{}, errs.Missing("purpose")
	}
	if !validPurpose(in.Purpose) {
		return "", eventstore.Appended{}, errs.InvalidField("purpose", "'%s' is not one of ['assistants', 'batch', 'fine-tune', 'vision', 'user_data', 'evals'] - 'purpose'", in.Purpose)
	}
	name := strings.TrimSpace(in.Filename)
	if name == "" || in.Upload.Object == "" {
		return "", eventstore.Appended{}, errs.Missing("file")
	}
	if utf8.RuneCountInString(name) > maxFilenameChars {
		return "", eventstore.Appended{}, errs.InvalidField("file", "file name is longer than %d characters", maxFilenameChars)
	}
	u := in.Upload
	res, err = eventstore.Update(ctx, c.store, events.Ref{Type: "file", ID: u.FileID}, actor.Meta(), func(f *File) ([]events.Event, error) {
		if f.Exists {
			return nil, errs.E(errs.Conflict, "file %s exists", u.FileID)
		}
		return []events.Event{events.FileCreated{Filename: name, Purpose: in.Purpose, Bytes: u.Size,
			Object: u.Object, Digest: u.Digest, ContentType: u.ContentType}}, nil
	})
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	return u.FileID, res, nil
}

// Delete deletes a file and its bytes.
func (c *Files) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	if !validID(id) {
		return eventstore.Appended{}, errs.NotFoundf("file", id)
	}
	var object string
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "file", ID: id}, actor.Meta(), func(f *File) ([]events.Event, error) {
		if !f.Exists || f.Deleted || f.Account != actor.AccountID {
			return nil, errs.NotFoundf("file", id)
		}
		object = f.Object
		return []events.Event{events.FileDeleted{}}, nil
	})
	if err != nil {
		return eventstore.Appended{}, err
	}
	// The event is what counts; a blob left behind by a failure here holds nothing anyone can reach.
	return res, c.blobs.Delete(ctx, object)
}

// SaveOutput stores a file a tool wrote (code_interpreter) as one of account's files, purpose
// "assistants_output", under the ID given: the run worker derives it from the turn, so that a turn done again after
// a crash finds the file it saved and records it once. It returns what it appended: nothing when the file exists.
func (c *Files) SaveOutput(ctx context.Context, account, id, name, contentType string, data []byte) (eventstore.Appended, error) {
	actor := auth.Principal{AccountID: account}
	f, _, err := c.loadFile(ctx, id)
	if err != nil || f.Exists {
		return eventstore.Appended{}, err
	}
	object := "files/" + account + "/" + id
	info, err := c.blobs.Put(ctx, object, contentType, bytes.NewReader(data))
	if err != nil {
		return eventstore.Appended{}, fmt.Errorf("store output file %s: %w", name, err)
	}
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "file", ID: id}, actor.Meta(), func(f *File) ([]events.Event, error) {
		if f.Exists {
			return nil, nil
		}
		return []events.Event{events.FileCreated{Filename: name, Purpose: "assistants_output", Bytes: info.Size,
			Object: object, Digest: info.Digest, ContentType: contentType}}, nil
	})
	if err != nil {
		return eventstore.Appended{}, fmt.Errorf("record output file %s: %w", name, err)
	}
	return res, nil
}

// Read returns the name and bytes of one of account's files (for a sandbox's inputs).
func (c *Files) Read(ctx context.Context, account, id string) (string, io.ReadCloser, error) {
	if !validID(id) {
		return "", nil, errs.NotFoundf("file", id)
	}
	f, _, err := c.loadFile(ctx, id)
	if err != nil {
		return "", nil, err
	}
	if !f.Owned(account) {
		return "", nil, errs.NotFoundf("file", id)
	}
	body, _, err := c.blobs.Get(ctx, f.Object)
	if err != nil {
		return "", nil, fmt.Errorf("read file %s: %w", id, err)
	}
	return f.Filename, body, nil
}

func (c *Files) loadFile(ctx context.Context, id string) (File, events.Version, error) {
	var f File
	history, v, err := c.store.Load(ctx, events.Ref{Type: "file", ID: id})
	if err != nil {
		return f, v, fmt.Errorf("load file %s: %w", id, err)
	}
	for _, e := range history {
		f.Apply(e)
	}
	return f, v, nil
}

// ReadImage returns one of account's files that a model can be shown as an image (input_image by file_id): its
// media type, known by its first bytes (file.ImageType), and its bytes, or no bytes when the file holds more than
// room (what is left of a request's room for images: such a file is not read). Another account's file, or one that
// is not there, is not found; one larger than file.MaxImageBytes, or not an image, is refused. field names the
// reference in a refusal.
func (c *Files) ReadImage(ctx context.Context, account, field, id string, room int) (mediaType string, data []byte, err error) {
	mediaType, size, body, err := c.openImage(ctx, account, field, id)
	if err != nil {
		return "", nil, err
	}
	defer body.Close()
	if size > int64(room) {
		return mediaType, nil, nil
	}
	data, err = io.ReadAll(io.LimitReader(body, file.MaxImageBytes+1))
	if err != nil {
		return "", nil, fmt.Errorf("read image file %s: %w", id, err)
	}
	if len(data) > file.MaxImageBytes {
		return "", nil, imageTooLarge(field, id)
	}
	return mediaType, data, nil
}

// CheckImage checks that a file a request shows as an image is one ReadImage reads, reading only its first bytes.
func (c *Files) CheckImage(ctx context.Context, account, field, id string) error {
	_, _, body, err := c.openImage(ctx, account, field, id)
	if err != nil {
		return err
	}
	return body.Close()
}

// openImage opens an image file for ReadImage and CheckImage: its media type, its size as recorded at upload, and
// a body that reads the whole file, its first bytes (checked) included.
func (c *Files) openImage(ctx context.Context, account, field, id string) (string, int64, io.ReadCloser, error) {
	if err := ids.Check(field, ids.File, id); err != nil {
		return "", 0, nil, err
	}
	f, err := foldConfirmed[File](ctx, c.store, events.Ref{Type: file.Aggregate, ID: id},
		func(f *File) bool { return f.Owned(account) })
	if err != nil {
		return "", 0, nil, fmt.Errorf("load file %s: %w", id, err)
	}
	if !f.Owned(account) {
		e := errs.E(errs.NotFound, "No file found with id '%s'.", clipID(id))
		e.Field = field
		return "", 0, nil, e
	}
	if f.Bytes > file.MaxImageBytes {
		return "", 0, nil, imageTooLarge(field, id)
	}
	body, _, err := c.blobs.Get(ctx, f.Object)
	if err != nil {
		return "", 0, nil, fmt.Errorf("read file %s: %w", id, err)
	}
	head := make([]byte, file.ImageSniffBytes)
	n, err := io.ReadFull(body, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		_ = body.Close()
		return "", 0, nil, fmt.Errorf("read file %s: %w", id, err)
	}
	mediaType, ok := file.ImageType(head[:n])
	if !ok {
		_ = body.Close()
		return "", 0, nil, errs.InvalidField(field, "Invalid '%s': file %s is not an image the model can read (PNG, JPEG, GIF or WebP).", field, clipID(id))
	}
	return mediaType, f.Bytes, readCloser{io.MultiReader(bytes.NewReader(head[:n]), body), body}, nil
}

func imageTooLarge(field, id string) error {
	return errs.InvalidField(field, "Invalid '%s': image file %s is larger than %d MiB, the most a model is shown.", field, clipID(id), file.MaxImageBytes>>20)
}

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (r readCloser) Close() error { return r.c.Close() }
