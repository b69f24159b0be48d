package events

// Vector store events (the OpenAI Assistants API's vector stores, aggregate "vstore"). A store holds files cut into
// chunks, embedded and indexed for file_search. A file added is processed by a handler on the log, which stores its
// chunks with their vectors in the object store (Index names the blob) and records the outcome; every node indexes
// the stored chunks from there, without embedding them again.

// Chunking is how a store's files are cut: "static" windows of MaxTokens tokens overlapping by OverlapTokens
// ("auto" is static 800/400, and is recorded as such).
type Chunking struct {
	Type          string `json:"type"`
	MaxTokens     int    `json:"max_chunk_size_tokens"`
	OverlapTokens int    `json:"chunk_overlap_tokens"`
}

// VectorStoreExpiry is a store's expires_after: Days after its last activity (OpenAI's only anchor,
// "last_active_at").
type VectorStoreExpiry struct {
	Anchor string `json:"anchor"`
	Days   int    `json:"days"`
}

// VectorStoreCreated makes a vector store.
type VectorStoreCreated struct {
	Name         string             `json:"name,omitempty"`
	Metadata     map[string]string  `json:"metadata,omitempty"`
	ExpiresAfter *VectorStoreExpiry `json:"expires_after,omitempty"`
	Chunking     Chunking           `json:"chunking"`
	// ThreadID is set on a store made for a thread's message attachments.
	ThreadID string `json:"thread_id,omitempty"`
}

func (VectorStoreCreated) EventType() string { return "vstore.created" }

// VectorStoreModified replaces a store's name, metadata and expiry with the ones it holds (the whole after a
// modify).
type VectorStoreModified struct {
	Name         string             `json:"name,omitempty"`
	Metadata     map[string]string  `json:"metadata,omitempty"`
	ExpiresAfter *VectorStoreExpiry `json:"expires_after,omitempty"`
}

func (VectorStoreModified) EventType() string { return "vstore.modified" }

// VectorStoreDeleted deletes a store; its index goes with it (its files stay files).
type VectorStoreDeleted struct{}

func (VectorStoreDeleted) EventType() string { return "vstore.deleted" }

// VectorStoreFileAdded adds a file to a store, to be processed. It copies what processing needs of the file.
type VectorStoreFileAdded struct {
	FileID   string `json:"file_id"`
	Filename string `json:"filename"`
	Bytes    int64  `json:"bytes"`
	// Object is the file's blob in the object store.
	Object     string         `json:"object"`
	Attributes map[string]any `json:"attributes,omitempty"`
	Chunking   Chunking       `json:"chunking"`
	// BatchID is the file batch that added it, if any.
	BatchID string `json:"batch_id,omitempty"`
}

func (VectorStoreFileAdded) EventType() string { return "vstore.file_added" }

// VectorStoreFileError is why a file could not be processed: Code is OpenAI's ("unsupported_file", "invalid_file",
// "server_error").
type VectorStoreFileError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// VectorStoreFileProcessed records the end of a file's processing: "completed" (its chunks are in the Index blob)
// or "failed" with LastError.
type VectorStoreFileProcessed struct {
	FileID     string                `json:"file_id"`
	Status     string                `json:"status"`
	LastError  *VectorStoreFileError `json:"last_error,omitempty"`
	UsageBytes int64                 `json:"usage_bytes"`
	Chunks     int                   `json:"chunks"`
	Index      string                `json:"index,omitempty"`
	// Embedder names what made the vectors (another embedder's are made again when indexed).
	Embedder string `json:"embedder,omitempty"`
}

func (VectorStoreFileProcessed) EventType() string { return "vstore.file_processed" }

// VectorStoreFileUpdated replaces a file's attributes.
type VectorStoreFileUpdated struct {
	FileID     string         `json:"file_id"`
	Attributes map[string]any `json:"attributes"`
}

func (VectorStoreFileUpdated) EventType() string { return "vstore.file_updated" }

// VectorStoreFileRemoved takes a file out of a store.
type VectorStoreFileRemoved struct {
	FileID string `json:"file_id"`
}

func (VectorStoreFileRemoved) EventType() string { return "vstore.file_removed" }

// VectorStoreBatchCreated records a file batch: its files are added by the VectorStoreFileAdded events that follow.
type VectorStoreBatchCreated struct {
	BatchID string   `json:"batch_id"`
	FileIDs []string `json:"file_ids"`
}

func (VectorStoreBatchCreated) EventType() string { return "vstore.batch_created" }

// VectorStoreBatchCancelled cancels a batch: its files not yet processed are cancelled.
type VectorStoreBatchCancelled struct {
	BatchID string `json:"batch_id"`
}

func (VectorStoreBatchCancelled) EventType() string { return "vstore.batch_cancelled" }

func vectorStoreEvents() []Event {
	return []Event{
		VectorStoreCreated{}, VectorStoreModified{}, VectorStoreDeleted{},
		VectorStoreFileAdded{}, VectorStoreFileProcessed{}, VectorStoreFileUpdated{}, VectorStoreFileRemoved{},
		VectorStoreBatchCreated{}, VectorStoreBatchCancelled{},
	}
}
