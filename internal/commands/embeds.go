package commands

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/contrailhq/contrail/domain/embed"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/internal/errs"
)

// MaxEmbedSize bounds one embed, in bytes (10 MiB).
const MaxEmbedSize = 10 << 20

// Get is the embed aggregate (domain/embed).
type Embed = embed.State

// embedID is an account's ID for some bytes of some type: the same upload twice is the same embed.
func embedID(account, contentHash, contentType string) string {
	sum := sha256.Sum256([]byte(account + "\x00" + contentHash + "\x00" + contentType))
	return "emb_" + hex.EncodeToString(sum[:13])
}

// Embeds are the commands on Fixie embeds: uploaded bytes that messages carry.
type Embeds struct {
	store *eventstore.Store
	blobs *blobs.Store
}

// Upload stores bytes as an embed of the caller's account. The bytes go to the object store under their
// content hash, so identical uploads (by anyone) are stored once; the embed record says who may reference them.
func (c *Embeds) Upload(ctx context.Context, actor auth.Principal, contentType, filename string, body io.Reader) (Embed, eventstore.Appended, error) {
	if c.blobs == nil {
		return Embed{}, eventstore.Appended{}, errors.New("upload embed: no object store configured")
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if err := checkBytes("content_type", contentType, maxContentTypeBytes); err != nil {
		return Embed{}, eventstore.Appended{}, err
	}
	if err := checkChars("filename", filename, maxFilenameChars); err != nil {
		return Embed{}, eventstore.Appended{}, err
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return Embed{}, eventstore.Appended{}, errs.InvalidField("content_type", "content type %q is not a media type: %v", contentType, err)
	}
	contentType = mime.FormatMediaType(mt, params)
	data, err := io.ReadAll(io.LimitReader(body, MaxEmbedSize+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return Embed{}, eventstore.Appended{}, errs.E(errs.TooLarge, "an embed holds at most %d bytes (10 MiB)", MaxEmbedSize)
		}
		return Embed{}, eventstore.Appended{}, errs.E(errs.Invalid, "read upload: %v", err)
	}
	if len(data) > MaxEmbedSize {
		return Embed{}, eventstore.Appended{}, errs.E(errs.TooLarge, "an embed holds at most %d bytes (10 MiB)", MaxEmbedSize)
	}
	sum := sha256.Sum256(data)
	hash := "sha256:" + hex.EncodeToString(sum[:])
	object := "embeds/sha256-" + hex.EncodeToString(sum[:])
	// The bytes are stored once under their hash: an upload of bytes already there stores nothing.
	if r, _, err := c.blobs.Get(ctx, object); err == nil {
		_ = r.Close()
	} else if errors.Is(err, blobs.ErrNotFound) {
		if _, err := c.blobs.Put(ctx, object, mt, bytes.NewReader(data)); err != nil {
			return Embed{}, eventstore.Appended{}, fmt.Errorf("store embed: %w", err)
		}
	} else {
		return Embed{}, eventstore.Appended{}, fmt.Errorf("look up embed bytes: %w", err)
	}
	id := embedID(actor.AccountID, hash, contentType)
	meta := actor.Meta()
	var st Embed
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "embed", ID: id}, meta, func(e *Embed) ([]events.Event, error) {
		st = *e
		if e.Exists {
			return nil, nil // the same bytes, type and account: the embed exists already
		}
		return []events.Event{events.EmbedUploaded{ContentType: contentType, ContentHash: hash, Size: int64(len(data)),
			Object: object, Filename: filename}}, nil
	})
	if err != nil {
		return Embed{}, eventstore.Appended{}, fmt.Errorf("record embed: %w", err)
	}
	for _, env := range res.Events {
		st.Apply(env)
	}
	return st, res, nil
}

// Get loads an embed of the caller's account from the log; another account's is not found.
func (c *Embeds) Get(ctx context.Context, actor auth.Principal, id string) (Embed, error) {
	e, err := c.Load(ctx, id)
	if err != nil {
		return Embed{}, err
	}
	if !e.Exists || e.Account != actor.AccountID {
		return Embed{}, errs.NotFoundf("embed", id)
	}
	return e, nil
}

// Load loads any embed from the log (for serving a signed URL, whose signature is the permission).
func (c *Embeds) Load(ctx context.Context, id string) (Embed, error) {
	var e Embed
	if !validID(id) || !strings.HasPrefix(id, "emb_") {
		return e, nil
	}
	history, _, err := c.store.Load(ctx, events.Ref{Type: "embed", ID: id})
	if err != nil {
		return e, fmt.Errorf("load embed %s: %w", id, err)
	}
	for _, env := range history {
		if env.Event != nil {
			e.Apply(env)
		}
	}
	return e, nil
}

// Open returns a reader of an embed's bytes.
func (c *Embeds) Open(ctx context.Context, e Embed) (io.ReadCloser, error) {
	if c.blobs == nil {
		return nil, errors.New("open embed: no object store configured")
	}
	r, _, err := c.blobs.Get(ctx, e.Object)
	if err != nil {
		return nil, fmt.Errorf("open embed %s: %w", e.ID, err)
	}
	return r, nil
}
