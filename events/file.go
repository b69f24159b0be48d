package events

// File events (the OpenAI Files API). A file's bytes are in the object store under Object; the event holds where
// they are and their digest, never the bytes.

// FileCreated records an uploaded file.
type FileCreated struct {
	Filename string `json:"filename"`
	Purpose  string `json:"purpose"`
	Bytes    int64  `json:"bytes"`
	// Object is the name of the blob in the object store; Digest its digest as the object store reports it.
	Object      string `json:"object"`
	Digest      string `json:"digest"`
	ContentType string `json:"content_type,omitempty"`
}

func (FileCreated) EventType() string { return "file.created" }

// FileDeleted deletes a file; its blob is removed from the object store.
type FileDeleted struct{}

func (FileDeleted) EventType() string { return "file.deleted" }

func fileEvents() []Event {
	return []Event{FileCreated{}, FileDeleted{}}
}
