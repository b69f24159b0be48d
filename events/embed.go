package events

// Embed events. An embed is an immutable blob an account uploaded for messages to carry: its bytes are in the
// object store under their content hash (so identical uploads are stored once), and the embed record says which
// account may reference it.

// EmbedUploaded records an upload.
type EmbedUploaded struct {
	ContentType string `json:"content_type"`
	// ContentHash is "sha256:<hex>" of the bytes.
	ContentHash string `json:"content_hash"`
	Size        int64  `json:"size"`
	// Object names the blob in the object store.
	Object string `json:"object"`
	// Filename is the name the upload gave, if any.
	Filename string `json:"filename,omitempty"`
}

func (EmbedUploaded) EventType() string { return "embed.uploaded" }

func embedEvents() []Event { return []Event{EmbedUploaded{}} }
