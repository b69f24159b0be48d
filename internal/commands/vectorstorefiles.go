package commands

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// VectorStoreFiles are the commands on a vector store's files and file batches (the Assistants API's
// /vector_stores/{id}/files and /file_batches). They decide on the stores VectorStores holds.
type VectorStoreFiles struct {
	stores *VectorStores
}

// NewVectorStoreFiles returns the commands on the files of the stores.
func NewVectorStoreFiles(stores *VectorStores) *VectorStoreFiles {
	return &VectorStoreFiles{stores: stores}
}

// AddFile adds one of the caller's files to a store.
func (c *VectorStoreFiles) AddFile(ctx context.Context, actor auth.Principal, id, fileID string, attrs map[string]any, chunking *events.Chunking) (vectorstore.State, error) {
	if err := CheckAttributes("attributes", attrs); err != nil {
		return vectorstore.State{}, err
	}
	ch, err := CheckChunking(chunking)
	if err != nil {
		return vectorstore.State{}, err
	}
	if err := ids.Check("file_id", ids.File, fileID); err != nil {
		return vectorstore.State{}, err
	}
	files, err := c.stores.filesOf(ctx, actor, "file_id", []string{fileID}, []map[string]any{attrs}, ch)
	if err != nil {
		return vectorstore.State{}, err
	}
	return c.stores.update(ctx, actor, id, "add a file to vector store", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.AddFiles(s, actor.AccountID, id, files, "")
	})
}

// CreateBatch adds files to a store in a batch, and returns the batch's ID.
func (c *VectorStoreFiles) CreateBatch(ctx context.Context, actor auth.Principal, id string, in []BatchFile, chunking *events.Chunking) (vectorstore.State, string, error) {
	if len(in) == 0 {
		return vectorstore.State{}, "", errs.Missing("file_ids")
	}
	fileIDs := make([]string, len(in))
	attrs := make([]map[string]any, len(in))
	for i, f := range in {
		if err := CheckAttributes(fmt.Sprintf("files[%d].attributes", i), f.Attributes); err != nil {
			return vectorstore.State{}, "", err
		}
		fileIDs[i], attrs[i] = f.FileID, f.Attributes
	}
	ch, err := CheckChunking(chunking)
	if err != nil {
		return vectorstore.State{}, "", err
	}
	files, err := c.stores.filesOf(ctx, actor, "file_ids", fileIDs, attrs, ch)
	if err != nil {
		return vectorstore.State{}, "", err
	}
	batch := events.NewPrefixedID("vsfb_")
	s, err := c.stores.update(ctx, actor, id, "create a file batch", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.AddFiles(s, actor.AccountID, id, files, batch)
	})
	return s, batch, err
}

// CancelBatch cancels a batch's files not yet processed.
func (c *VectorStoreFiles) CancelBatch(ctx context.Context, actor auth.Principal, id, batch string) (vectorstore.State, error) {
	return c.stores.update(ctx, actor, id, "cancel a file batch", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.CancelBatch(s, actor.AccountID, id, batch)
	})
}

// RemoveFile takes a file out of a store (the file itself stays).
func (c *VectorStoreFiles) RemoveFile(ctx context.Context, actor auth.Principal, id, fileID string) error {
	_, err := c.stores.update(ctx, actor, id, "remove a file from vector store", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.RemoveFile(s, actor.AccountID, id, fileID)
	})
	return err
}

// UpdateFile replaces a file's attributes.
func (c *VectorStoreFiles) UpdateFile(ctx context.Context, actor auth.Principal, id, fileID string, attrs map[string]any) (vectorstore.State, error) {
	if err := CheckAttributes("attributes", attrs); err != nil {
		return vectorstore.State{}, err
	}
	return c.stores.update(ctx, actor, id, "update a vector store file", func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.UpdateFile(s, actor.AccountID, id, fileID, attrs)
	})
}

// Content returns the text of a processed file of a store, as its chunks hold it.
func (c *VectorStoreFiles) Content(ctx context.Context, actor auth.Principal, id, fileID string) ([]string, error) {
	s, err := c.stores.Get(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	f := s.Files[fileID]
	if f == nil {
		return nil, errs.NotFoundf("vector store file", fileID)
	}
	if f.Status != vectorstore.StatusCompleted {
		return nil, errs.E(errs.Conflict, "file %s is %s: its content is there once it is completed", fileID, f.Status)
	}
	chunks, err := c.stores.index.Chunks(ctx, f.Index, "")
	if err != nil {
		return nil, err
	}
	// The chunks overlap: the text is each chunk's part past the end of the one before.
	var b strings.Builder
	var end int64
	for _, ch := range chunks {
		if ch.End <= end {
			continue
		}
		skip := max(0, end-ch.Start)
		if skip > int64(len(ch.Text)) {
			continue
		}
		b.WriteString(ch.Text[skip:])
		end = ch.End
	}
	return []string{b.String()}, nil
}
