package commands

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/vsindex"
)

// VectorStoreRepo and FileRepo are the node's repositories of vector stores and files.
type (
	VectorStoreRepo = eventstore.Repo[vectorstore.State, *vectorstore.State]
	FileRepo        = eventstore.Repo[file.State, *file.State]
)

// The limits of vector stores (docs/limits.md): OpenAI's where it has them.
const (
	maxStoreNameChars   = 256
	maxAttributePairs   = 16
	maxAttributeKey     = 64
	maxAttributeString  = 512
	maxFilesPerRequest  = 500
	maxExpiryDays       = 365
	maxSearchQueries    = 10
	maxSearchQueryChars = 4096
	maxSearchResults    = 50
)

// VectorStores are the commands on vector stores.
type VectorStores struct {
	repo  *VectorStoreRepo
	files *FileRepo
	index *vsindex.Index
}

// NewVectorStores returns the vector store commands.
func NewVectorStores(repo *VectorStoreRepo, files *FileRepo, index *vsindex.Index) *VectorStores {
	return &VectorStores{repo: repo, files: files, index: index}
}

// Repo is the repository the commands decide on (the processing handler shares it).
func (c *VectorStores) Repo() *VectorStoreRepo { return c.repo }

// Index is the node's index of the stores.
func (c *VectorStores) Index() *vsindex.Index { return c.index }

// NewVectorStore is a create request.
type NewVectorStore struct {
	Name         string
	Metadata     map[string]string
	FileIDs      []string
	ExpiresAfter *events.VectorStoreExpiry
	// Chunking is the request's chunking_strategy (nil: auto).
	Chunking *events.Chunking
	// ThreadID makes the store a thread's own (its message attachments).
	ThreadID string
}

// CheckChunking reads a chunking strategy: nil or "auto" is OpenAI's 800/400, "static" its bounds.
func CheckChunking(c *events.Chunking) (events.Chunking, error) {
	if c == nil || c.Type == "" || c.Type == "auto" {
		a := chunk.Auto()
		return events.Chunking{Type: "auto", MaxTokens: a.MaxTokens, OverlapTokens: a.OverlapTokens}, nil
	}
	if c.Type != "static" {
		return events.Chunking{}, errs.InvalidField("chunking_strategy.type", "Invalid value: '%s'. Supported values are: 'auto' and 'static'.", c.Type)
	}
	if err := (chunk.Strategy{MaxTokens: c.MaxTokens, OverlapTokens: c.OverlapTokens}).Validate(); err != nil {
		return events.Chunking{}, err
	}
	return *c, nil
}

// CheckExpiry checks expires_after.
func CheckExpiry(e *events.VectorStoreExpiry) error {
	if e == nil {
		return nil
	}
	if e.Anchor != "last_active_at" {
		return errs.InvalidField("expires_after.anchor", "Invalid value: '%s'. Supported values are: 'last_active_at'.", e.Anchor)
	}
	if e.Days < 1 || e.Days > maxExpiryDays {
		return errs.InvalidField("expires_after.days", "days must be between 1 and %d, got %d", maxExpiryDays, e.Days)
	}
	return nil
}

// CheckAttributes checks a file's attributes: 16 pairs, keys of 64 characters, strings of 512, numbers or booleans.
func CheckAttributes(field string, attrs map[string]any) error {
	if len(attrs) > maxAttributePairs {
		return errs.InvalidField(field, "object has too many properties. Expected an object with at most %d properties, but got %d instead", maxAttributePairs, len(attrs))
	}
	for k, v := range attrs {
		if n := utf8.RuneCountInString(k); n == 0 || n > maxAttributeKey {
			return errs.InvalidField(field, "a key is %d characters long: keys have 1 to %d characters", n, maxAttributeKey)
		}
		switch x := v.(type) {
		case string:
			if err := checkChars(field+"."+k, x, maxAttributeString); err != nil {
				return err
			}
		case float64, bool, int, int64:
		default:
			return errs.InvalidField(field+"."+k, "an attribute is a string, a number or a boolean, not %T", v)
		}
	}
	return nil
}

// filesOf reads the caller's files for a store.
func (c *VectorStores) filesOf(ctx context.Context, actor auth.Principal, field string, fileIDs []string, attrs []map[string]any, chunking events.Chunking) ([]vectorstore.NewFile, error) {
	if len(fileIDs) > maxFilesPerRequest {
		return nil, errs.InvalidField(field, "at most %d files may be given at once, got %d", maxFilesPerRequest, len(fileIDs))
	}
	for i, id := range fileIDs {
		if err := ids.Check(fmt.Sprintf("%s[%d]", field, i), ids.File, id); err != nil {
			return nil, err
		}
	}
	out := make([]vectorstore.NewFile, 0, len(fileIDs))
	seen := map[string]bool{}
	for i, id := range fileIDs {
		if seen[id] {
			continue
		}
		seen[id] = true
		f, _, err := c.files.Get(ctx, id, eventstore.Fresh)
		if err != nil {
			return nil, fmt.Errorf("read file %s: %w", id, err)
		}
		if !f.Owned(actor.AccountID) {
			e := errs.E(errs.NotFound, "No file found with id '%s'.", clipID(id))
			e.Field = fmt.Sprintf("%s[%d]", field, i)
			if field == "file_id" {
				e.Field = field // one file, not a list
			}
			return nil, e
		}
		nf := vectorstore.NewFile{FileID: id, Filename: f.Filename, Bytes: f.Bytes, Object: f.Object, Chunking: chunking}
		if i < len(attrs) {
			nf.Attributes = attrs[i]
		}
		out = append(out, nf)
	}
	return out, nil
}

// clipID bounds an ID a client sent before it goes into a message.
func clipID(id string) string {
	if len(id) > 64 {
		return id[:64] + "…"
	}
	return id
}

// Create makes a vector store with its first files. The list of stores shows it once the vector_stores read model
// has folded what it appended.
func (c *VectorStores) Create(ctx context.Context, actor auth.Principal, in NewVectorStore) (vectorstore.State, eventstore.Appended, error) {
	if err := checkChars("name", in.Name, maxStoreNameChars); err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	if err := ValidateMetadata("metadata", in.Metadata); err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	if err := CheckExpiry(in.ExpiresAfter); err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	chunking, err := CheckChunking(in.Chunking)
	if err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	files, err := c.filesOf(ctx, actor, "file_ids", in.FileIDs, nil, chunking)
	if err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	id := events.NewPrefixedID("vs_")
	created := events.VectorStoreCreated{Name: in.Name, Metadata: in.Metadata, ExpiresAfter: in.ExpiresAfter, Chunking: chunking,
		ThreadID: in.ThreadID}
	s, res, err := c.apply(ctx, actor, id, "create vector store", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.Create(s, created, files)
	})
	return s, res, err
}

// ThreadStoreID is the ID of the vector store a thread's attachments for file_search are kept in.
func ThreadStoreID(threadID string) string { return "vs_" + events.DeriveID(threadID, "attachments") }

// EnsureThreadStore makes the thread's store of attachments, or adds to it the files it lacks, and returns it.
// OpenAI's thread stores expire 7 days after their last use; so do these.
func (c *VectorStores) EnsureThreadStore(ctx context.Context, actor auth.Principal, threadID string, fileIDs []string) (vectorstore.State, eventstore.Appended, error) {
	chunking, _ := CheckChunking(nil)
	files, err := c.filesOf(ctx, actor, "attachments", fileIDs, nil, chunking)
	if err != nil {
		return vectorstore.State{}, eventstore.Appended{}, err
	}
	id := ThreadStoreID(threadID)
	s, res, err := c.apply(ctx, actor, id, "keep a thread's attachments", func(s *vectorstore.State) ([]events.Event, error) {
		if !s.Exists {
			return vectorstore.Create(s, events.VectorStoreCreated{Name: "attachments of " + threadID, ThreadID: threadID,
				Chunking: chunking, ExpiresAfter: &events.VectorStoreExpiry{Anchor: "last_active_at", Days: 7}}, files)
		}
		var missing []vectorstore.NewFile
		for _, f := range files {
			if s.Files[f.FileID] == nil {
				missing = append(missing, f)
			}
		}
		if len(missing) == 0 {
			return nil, nil
		}
		return vectorstore.AddFiles(s, actor.AccountID, id, missing, "")
	})
	return s, res, err
}

// Get returns one of the caller's stores as the log holds it now.
func (c *VectorStores) Get(ctx context.Context, actor auth.Principal, id string) (vectorstore.State, error) {
	if !validID(id) {
		return vectorstore.State{}, storeNotFound(id)
	}
	s, _, err := c.repo.Get(ctx, id, eventstore.Fresh)
	if err != nil {
		return vectorstore.State{}, fmt.Errorf("read vector store %s: %w", id, err)
	}
	if !s.Owned(actor.AccountID) {
		return vectorstore.State{}, storeNotFound(id)
	}
	return s, nil
}

func storeNotFound(id string) error {
	e := errs.E(errs.NotFound, "No vector store found with id '%s'.", clipID(id))
	e.Field = "vector_store_id"
	return e
}

// Modify changes a store's name, metadata or expiry (nil: unchanged; expiry pointing at nil clears it).
func (c *VectorStores) Modify(ctx context.Context, actor auth.Principal, id string, name *string, metadata map[string]string, expiry **events.VectorStoreExpiry) (vectorstore.State, error) {
	if name != nil {
		if err := checkChars("name", *name, maxStoreNameChars); err != nil {
			return vectorstore.State{}, err
		}
	}
	if err := ValidateMetadata("metadata", metadata); err != nil {
		return vectorstore.State{}, err
	}
	if expiry != nil {
		if err := CheckExpiry(*expiry); err != nil {
			return vectorstore.State{}, err
		}
	}
	return c.update(ctx, actor, id, "modify vector store", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.Modify(s, actor.AccountID, id, name, metadata, expiry)
	})
}

// Delete deletes a store.
func (c *VectorStores) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	_, res, err := c.apply(ctx, actor, id, "delete vector store", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.Delete(s, actor.AccountID, id)
	})
	return res, err
}

// BatchFile is a file of a batch with its own attributes.
type BatchFile struct {
	FileID     string
	Attributes map[string]any
}

func (c *VectorStores) update(ctx context.Context, actor auth.Principal, id, what string, decide func(*vectorstore.State) ([]events.Event, error)) (vectorstore.State, error) {
	s, _, err := c.apply(ctx, actor, id, what, decide)
	return s, err
}

// apply decides on a store and returns it as it is after, with what was appended.
func (c *VectorStores) apply(ctx context.Context, actor auth.Principal, id, what string, decide func(*vectorstore.State) ([]events.Event, error)) (vectorstore.State, eventstore.Appended, error) {
	if !validID(id) {
		return vectorstore.State{}, eventstore.Appended{}, storeNotFound(id)
	}
	res, err := c.repo.Update(ctx, id, eventstore.Fresh, actor.Meta(), func(s *vectorstore.State) ([]events.Event, error) {
		evs, err := decide(s)
		if errs.CodeOf(err) == errs.NotFound && strings.HasPrefix(errs.MessageOf(err), "no vector store") {
			return nil, storeNotFound(id)
		}
		return evs, err
	})
	if err != nil {
		return vectorstore.State{}, res, fmt.Errorf("%s %s: %w", what, id, err)
	}
	s, _, err := c.repo.Get(ctx, id, res.Version.Seq)
	if err != nil {
		return vectorstore.State{}, res, fmt.Errorf("%s %s: read it back: %w", what, id, err)
	}
	return s, res, nil
}

// SearchRequest is a search of one store.
type SearchRequest struct {
	Queries  []string
	Limit    int
	Filter   *docindex.Filter
	MinScore float64
}

// Search finds the chunks of one of the caller's stores that best match the queries. It sees every file whose
// processing was recorded before the request, whichever node recorded it.
func (c *VectorStores) Search(ctx context.Context, actor auth.Principal, id string, in SearchRequest) ([]vsindex.Hit, error) {
	s, err := c.Get(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	return c.SearchStores(ctx, []vectorstore.State{s}, in)
}

// SearchStores searches stores the caller has read (a run's assistant's and thread's).
func (c *VectorStores) SearchStores(ctx context.Context, stores []vectorstore.State, in SearchRequest) ([]vsindex.Hit, error) {
	if len(in.Queries) == 0 {
		return nil, errs.Missing("query")
	}
	if len(in.Queries) > maxSearchQueries {
		return nil, errs.InvalidField("query", "at most %d queries may be given, got %d", maxSearchQueries, len(in.Queries))
	}
	for i, q := range in.Queries {
		if strings.TrimSpace(q) == "" {
			return nil, errs.InvalidField("query", "query %d is empty", i)
		}
		if err := checkChars("query", q, maxSearchQueryChars); err != nil {
			return nil, err
		}
	}
	if in.Limit == 0 {
		in.Limit = 10
	}
	if in.Limit < 1 || in.Limit > maxSearchResults {
		return nil, errs.InvalidField("max_num_results", "max_num_results must be between 1 and %d, got %d", maxSearchResults, in.Limit)
	}
	var ids []string
	var seq uint64
	for _, s := range stores {
		ids = append(ids, s.ID)
		_, v, err := c.repo.Get(ctx, s.ID, eventstore.Fresh)
		if err != nil {
			return nil, err
		}
		seq = max(seq, v.Seq)
	}
	if err := c.index.CatchUp(ctx, seq); err != nil {
		return nil, fmt.Errorf("search vector stores: wait for the index: %w", err)
	}
	return c.index.Search(ctx, vsindex.Query{Stores: ids, Text: strings.Join(in.Queries, "\n"), Limit: in.Limit,
		Filter: in.Filter, MinScore: in.MinScore})
}
