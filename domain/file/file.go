// Package file is the file aggregate of the Assistants API: an uploaded file whose bytes are in the object store.
//
// It imports events only.
package file

import (
	"strings"
	"time"

	"github.com/contrailhq/contrail/events"
)

// Aggregate is the aggregate type of files in the log.
const Aggregate = "file"

// State is a file rebuilt from its events.
type State struct {
	ID          string
	Account     string
	Exists      bool
	Deleted     bool
	Filename    string
	Purpose     string
	Bytes       int64
	Object      string
	ContentType string
	Created     time.Time
}

// Apply folds one event: the only fold of file events.
func (f *State) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.FileCreated:
		*f = State{ID: e.AggregateID, Account: e.Account, Exists: true, Filename: d.Filename, Purpose: d.Purpose,
			Bytes: d.Bytes, Object: d.Object, ContentType: d.ContentType, Created: e.Time}
	case events.FileDeleted:
		f.Deleted = true
	}
}

// Owned reports whether the file exists, is not deleted and is account's.
func (f *State) Owned(account string) bool { return f.Exists && !f.Deleted && f.Account == account }

// MaxImageBytes bounds an image file a model is shown (input_image by file_id): OpenAI's limit for one image. The
// model is sent it inline (a data URL), so the bound is also what one image may add to a model request.
const MaxImageBytes = 20 << 20

// ImageSniffBytes is how many of a file's first bytes ImageType needs.
const ImageSniffBytes = 12

// ImageType is the media type of an image the models read (PNG, JPEG, GIF, WebP), known by the file's first bytes
// (at least ImageSniffBytes of them) rather than by the content type its upload declared, which clients often leave
// as application/octet-stream; ok is false for anything else.
func ImageType(head []byte) (mediaType string, ok bool) {
	s := string(head)
	switch {
	case strings.HasPrefix(s, "\x89PNG\r\n\x1a\n"):
		return "image/png", true
	case strings.HasPrefix(s, "\xff\xd8\xff"):
		return "image/jpeg", true
	case strings.HasPrefix(s, "GIF87a"), strings.HasPrefix(s, "GIF89a"):
		return "image/gif", true
	case len(s) >= 12 && s[:4] == "RIFF" && s[8:12] == "WEBP":
		return "image/webp", true
	}
	return "", false
}
