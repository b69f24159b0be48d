package projections

import "github.com/contrailhq/contrail/events"

// FileObject is a file as the API shows it.
type FileObject struct {
	ID            string  `json:"id"`
	Object        string  `json:"object"`
	Bytes         int64   `json:"bytes"`
	CreatedAt     int64   `json:"created_at"`
	ExpiresAt     *int64  `json:"expires_at"`
	Filename      string  `json:"filename"`
	Purpose       string  `json:"purpose"`
	Status        string  `json:"status"`
	StatusDetails *string `json:"status_details"`
}

// FileDoc is a file's document: the object and where its bytes are.
type FileDoc struct {
	Seq         uint64     `json:"seq"`
	Obj         FileObject `json:"obj"`
	Blob        string     `json:"blob"`
	Digest      string     `json:"digest"`
	ContentType string     `json:"content_type,omitempty"`
}

// Files is the read model of uploaded files: "<account>.<file_id>" -> FileDoc.
type Files struct{}

// Name implements Projection.
func (Files) Name() string { return "files" }

// EventTypes implements Projection.
func (Files) EventTypes() []string { return []string{"file.*"} }

// Apply implements Projection.
func (Files) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.FileCreated:
		return tx.Put(key, FileDoc{Seq: e.Sequence, Blob: d.Object, Digest: d.Digest, ContentType: d.ContentType,
			Obj: FileObject{ID: e.AggregateID, Object: "file", Bytes: d.Bytes, CreatedAt: e.Time.Unix(),
				Filename: d.Filename, Purpose: d.Purpose, Status: "processed"}})
	case events.FileDeleted:
		return tx.Delete(key)
	}
	return nil
}
