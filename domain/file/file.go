// Package file is the file aggregate of the Assistants API: an uploaded file whose bytes are in the object store.
//
// It imports events only.
package file

import (
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
