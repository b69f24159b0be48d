// Package vectorstore is the vector store aggregate of the Assistants API: a store, its files (each processed into
// chunks by a handler on the log) and its file batches. It holds the state, the one fold of the store's events, the
// decisions the commands make, and the statuses and counts faces show (a file's, a batch's, the store's).
//
// It imports events and errs only.
package vectorstore

import (
	"maps"
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// Aggregate is the aggregate type of vector stores in the log.
const Aggregate = "vstore"

// File statuses, OpenAI's.
const (
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
	StatusCancelled  = "cancelled"
	StatusExpired    = "expired"
)

// MaxFiles bounds the files of one store (OpenAI allows 10,000 per store).
const MaxFiles = 10_000

// File is a file of a store.
type File struct {
	FileID     string                       `json:"file_id"`
	Filename   string                       `json:"filename"`
	Bytes      int64                        `json:"bytes"`
	Object     string                       `json:"object"`
	Attributes map[string]any               `json:"attributes,omitempty"`
	Chunking   events.Chunking              `json:"chunking"`
	BatchID    string                       `json:"batch_id,omitempty"`
	Status     string                       `json:"status"`
	LastError  *events.VectorStoreFileError `json:"last_error,omitempty"`
	UsageBytes int64                        `json:"usage_bytes"`
	Chunks     int                          `json:"chunks"`
	Index      string                       `json:"index,omitempty"`
	Embedder   string                       `json:"embedder,omitempty"`
	Added      time.Time                    `json:"added"`
	// Seq is the stream sequence of the event that added the file (what a search waits for the index to reach
	// once the file is processed is the processing's own).
	Seq uint64 `json:"seq"`
}

// Batch is a file batch.
type Batch struct {
	ID        string    `json:"id"`
	FileIDs   []string  `json:"file_ids"`
	Created   time.Time `json:"created"`
	Cancelled bool      `json:"cancelled,omitempty"`
}

// Counts are OpenAI's file_counts.
type Counts struct {
	InProgress int `json:"in_progress"`
	Completed  int `json:"completed"`
	Failed     int `json:"failed"`
	Cancelled  int `json:"cancelled"`
	Total      int `json:"total"`
}

func (c *Counts) add(status string) {
	c.Total++
	switch status {
	case StatusInProgress:
		c.InProgress++
	case StatusCompleted:
		c.Completed++
	case StatusFailed:
		c.Failed++
	case StatusCancelled:
		c.Cancelled++
	}
}

// Store is a vector store as faces and read models show it.
type Store struct {
	ID           string                    `json:"id"`
	Account      string                    `json:"account"`
	Name         string                    `json:"name,omitempty"`
	Metadata     map[string]string         `json:"metadata,omitempty"`
	ExpiresAfter *events.VectorStoreExpiry `json:"expires_after,omitempty"`
	Chunking     events.Chunking           `json:"chunking"`
	ThreadID     string                    `json:"thread_id,omitempty"`
	Created      time.Time                 `json:"created"`
	LastActive   time.Time                 `json:"last_active"`
	Counts       Counts                    `json:"file_counts"`
	UsageBytes   int64                     `json:"usage_bytes"`
}

// ExpiresAt is when the store expires (nil: never).
func (s Store) ExpiresAt() *time.Time {
	if s.ExpiresAfter == nil {
		return nil
	}
	t := s.LastActive.Add(time.Duration(s.ExpiresAfter.Days) * 24 * time.Hour)
	return &t
}

// Status is the store's: expired past its expiry, in_progress while a file is processed, else completed.
func (s Store) Status(now time.Time) string {
	if at := s.ExpiresAt(); at != nil && !now.Before(*at) {
		return StatusExpired
	}
	if s.Counts.InProgress > 0 {
		return StatusInProgress
	}
	return StatusCompleted
}

// State is a vector store rebuilt from its events.
type State struct {
	Store
	Exists  bool
	Deleted bool
	Files   map[string]*File
	// Order lists the files by when they were added.
	Order   []string
	Batches map[string]*Batch
}

// Apply folds one event: the only fold of vector store events.
func (s *State) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.VectorStoreCreated:
		*s = State{Exists: true, Files: map[string]*File{}, Batches: map[string]*Batch{},
			Store: Store{ID: e.AggregateID, Account: e.Account, Name: d.Name, Metadata: d.Metadata, ExpiresAfter: d.ExpiresAfter,
				Chunking: d.Chunking, ThreadID: d.ThreadID, Created: e.Time, LastActive: e.Time}}
		return
	case events.VectorStoreModified:
		s.Name, s.Metadata, s.ExpiresAfter = d.Name, d.Metadata, d.ExpiresAfter
	case events.VectorStoreDeleted:
		s.Deleted = true
	case events.VectorStoreFileAdded:
		if old, ok := s.Files[d.FileID]; ok {
			s.Order = slices.DeleteFunc(s.Order, func(id string) bool { return id == old.FileID })
		}
		s.Files[d.FileID] = &File{FileID: d.FileID, Filename: d.Filename, Bytes: d.Bytes, Object: d.Object,
			Attributes: d.Attributes, Chunking: d.Chunking, BatchID: d.BatchID, Status: StatusInProgress, Added: e.Time, Seq: e.Sequence}
		s.Order = append(s.Order, d.FileID)
	case events.VectorStoreFileProcessed:
		if f := s.Files[d.FileID]; f != nil && f.Status == StatusInProgress {
			f.Status, f.LastError, f.UsageBytes, f.Chunks, f.Index, f.Embedder = d.Status, d.LastError, d.UsageBytes, d.Chunks, d.Index, d.Embedder
		}
	case events.VectorStoreFileUpdated:
		if f := s.Files[d.FileID]; f != nil {
			f.Attributes = d.Attributes
		}
	case events.VectorStoreFileRemoved:
		delete(s.Files, d.FileID)
		s.Order = slices.DeleteFunc(s.Order, func(id string) bool { return id == d.FileID })
	case events.VectorStoreBatchCreated:
		s.Batches[d.BatchID] = &Batch{ID: d.BatchID, FileIDs: d.FileIDs, Created: e.Time}
	case events.VectorStoreBatchCancelled:
		if b := s.Batches[d.BatchID]; b != nil {
			b.Cancelled = true
			for _, id := range b.FileIDs {
				if f := s.Files[id]; f != nil && f.BatchID == b.ID && f.Status == StatusInProgress {
					f.Status = StatusCancelled
				}
			}
		}
	}
	s.LastActive = e.Time
	s.count()
}

// count brings the store's counts and usage in line with its files.
func (s *State) count() {
	s.Counts, s.UsageBytes = Counts{}, 0
	for _, f := range s.Files {
		s.Counts.add(f.Status)
		if f.Status == StatusCompleted {
			s.UsageBytes += f.UsageBytes
		}
	}
}

// Clone returns a copy the fold's later changes do not reach.
func (s *State) Clone() State {
	c := *s
	c.Files = make(map[string]*File, len(s.Files))
	for k, f := range s.Files {
		fc := *f
		c.Files[k] = &fc
	}
	c.Order = slices.Clone(s.Order)
	c.Batches = make(map[string]*Batch, len(s.Batches))
	for k, b := range s.Batches {
		bc := *b
		c.Batches[k] = &bc
	}
	c.Metadata = maps.Clone(s.Metadata)
	return c
}

// Owned reports whether the store exists, is not deleted and is account's.
func (s *State) Owned(account string) bool { return s.Exists && !s.Deleted && s.Account == account }

// BatchView is a batch as faces show it: its status and its files' counts.
type BatchView struct {
	Batch
	StoreID string
	Status  string
	Counts  Counts
}

// BatchView returns a batch with its status: cancelled once cancelled, in_progress while a file is processed,
// failed when every file failed, else completed.
func (s *State) BatchView(id string) (BatchView, bool) {
	b := s.Batches[id]
	if b == nil {
		return BatchView{}, false
	}
	v := BatchView{Batch: *b, StoreID: s.ID}
	for _, fid := range b.FileIDs {
		if f := s.Files[fid]; f != nil && f.BatchID == b.ID {
			v.Counts.add(f.Status)
		}
	}
	switch {
	case b.Cancelled:
		v.Status = StatusCancelled
	case v.Counts.InProgress > 0:
		v.Status = StatusInProgress
	case v.Counts.Total > 0 && v.Counts.Failed == v.Counts.Total:
		v.Status = StatusFailed
	default:
		v.Status = StatusCompleted
	}
	return v, true
}

// NewFile is a file to add, as the commands read it from its aggregate.
type NewFile struct {
	FileID     string
	Filename   string
	Bytes      int64
	Object     string
	Attributes map[string]any
	Chunking   events.Chunking
}

// Create decides making a store with its first files.
func Create(s *State, c events.VectorStoreCreated, files []NewFile) ([]events.Event, error) {
	if s.Exists {
		return nil, errs.E(errs.Conflict, "vector store %s exists", s.ID)
	}
	if len(files) > MaxFiles {
		return nil, errs.InvalidField("file_ids", "a vector store holds at most %d files", MaxFiles)
	}
	evs := []events.Event{c}
	for _, f := range files {
		evs = append(evs, added(f, ""))
	}
	return evs, nil
}

func added(f NewFile, batch string) events.VectorStoreFileAdded {
	return events.VectorStoreFileAdded{FileID: f.FileID, Filename: f.Filename, Bytes: f.Bytes, Object: f.Object,
		Attributes: f.Attributes, Chunking: f.Chunking, BatchID: batch}
}

// AddFiles decides adding files (a file already in the store is added again, and processed again, as OpenAI
// does), in a batch when batch is set.
func AddFiles(s *State, account, id string, files []NewFile, batch string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	fresh := 0
	for _, f := range files {
		if _, in := s.Files[f.FileID]; !in {
			fresh++
		}
	}
	if len(s.Files)+fresh > MaxFiles {
		return nil, errs.E(errs.Invalid, "vector store %s would hold more than %d files", id, MaxFiles)
	}
	var evs []events.Event
	if batch != "" {
		ids := make([]string, len(files))
		for i, f := range files {
			ids[i] = f.FileID
		}
		evs = append(evs, events.VectorStoreBatchCreated{BatchID: batch, FileIDs: ids})
	}
	for _, f := range files {
		evs = append(evs, added(f, batch))
	}
	return evs, nil
}

// Processed decides recording a file's processing; nothing when the file is no longer waiting for it (removed,
// cancelled, added again since: the processing of its new addition records it).
func Processed(s *State, p events.VectorStoreFileProcessed, addedAt uint64) []events.Event {
	f := s.Files[p.FileID]
	if !s.Exists || s.Deleted || f == nil || f.Status != StatusInProgress || f.Seq != addedAt {
		return nil
	}
	return []events.Event{p}
}

// Modify decides a modify: the fields given replace the store's.
func Modify(s *State, account, id string, name *string, metadata map[string]string, expiry **events.VectorStoreExpiry) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	m := events.VectorStoreModified{Name: s.Name, Metadata: s.Metadata, ExpiresAfter: s.ExpiresAfter}
	if name != nil {
		m.Name = *name
	}
	if metadata != nil {
		m.Metadata = metadata
	}
	if expiry != nil {
		m.ExpiresAfter = *expiry
	}
	return []events.Event{m}, nil
}

// Delete decides deleting a store.
func Delete(s *State, account, id string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	return []events.Event{events.VectorStoreDeleted{}}, nil
}

// RemoveFile decides taking a file out of a store.
func RemoveFile(s *State, account, id, fileID string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	if _, ok := s.Files[fileID]; !ok {
		return nil, errs.NotFoundf("vector store file", fileID)
	}
	return []events.Event{events.VectorStoreFileRemoved{FileID: fileID}}, nil
}

// UpdateFile decides replacing a file's attributes.
func UpdateFile(s *State, account, id, fileID string, attrs map[string]any) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	if _, ok := s.Files[fileID]; !ok {
		return nil, errs.NotFoundf("vector store file", fileID)
	}
	return []events.Event{events.VectorStoreFileUpdated{FileID: fileID, Attributes: attrs}}, nil
}

// CancelBatch decides cancelling a batch; cancelling one that has ended is a conflict, one cancelled again nothing.
func CancelBatch(s *State, account, id, batch string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("vector store", id)
	}
	v, ok := s.BatchView(batch)
	if !ok {
		return nil, errs.NotFoundf("vector store file batch", batch)
	}
	switch v.Status {
	case StatusCancelled:
		return nil, nil
	case StatusInProgress:
		return []events.Event{events.VectorStoreBatchCancelled{BatchID: batch}}, nil
	}
	return nil, errs.E(errs.Conflict, "file batch %s has already %s; only a batch in progress can be cancelled", batch, v.Status)
}
