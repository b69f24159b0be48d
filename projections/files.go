package projections

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// FileView is an uploaded file as the log made it, and where its bytes are; the Assistants face maps it to its wire
// object.
type FileView struct {
	ID          string    `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Bytes       int64     `json:"bytes"`
	Filename    string    `json:"filename"`
	Purpose     string    `json:"purpose"`
	Blob        string    `json:"blob"`
	Digest      string    `json:"digest"`
	ContentType string    `json:"content_type,omitempty"`
}

// Files is the read model of uploaded files: "<account>.<file_id>" -> Listed[FileView].
type Files struct{}

// Name implements Projection.
func (Files) Name() string { return "files" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (Files) Version() int { return 2 }

// EventTypes implements Projection.
func (Files) EventTypes() []string { return []string{"file.*"} }

// Apply implements Projection.
func (Files) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.FileCreated:
		return tx.Put(key, Listed[FileView]{Seq: e.Sequence, Obj: FileView{ID: e.AggregateID, CreatedAt: e.Time,
			Bytes: d.Bytes, Filename: d.Filename, Purpose: d.Purpose, Blob: d.Object, Digest: d.Digest,
			ContentType: d.ContentType}})
	case events.FileDeleted:
		return tx.Delete(key)
	}
	return nil
}
