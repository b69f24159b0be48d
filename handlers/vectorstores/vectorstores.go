// Package vectorstores is the handler that processes the files added to vector stores: for each file added it
// extracts, chunks, embeds and stores the chunks (internal/vsindex), then records the outcome on the store, where
// every node's index picks it up. A file that cannot be read ends failed with OpenAI's code; a crash mid-way leaves
// the event to be processed again, and a file added again, removed or cancelled meanwhile records nothing.
package vectorstores

import (
	"context"
	"fmt"
	"time"

	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/vsindex"
)

// Stores is the repository of vector stores.
type Stores = eventstore.Repo[vectorstore.State, *vectorstore.State]

// Handler processes added files.
type Handler struct {
	stores *Stores
	index  *vsindex.Index
	// concurrency bounds the files this node processes at once (embedding is CPU-bound).
	concurrency int
}

// New returns the handler.
func New(stores *Stores, index *vsindex.Index, concurrency int) *Handler {
	if concurrency <= 0 {
		concurrency = 2
	}
	return &Handler{stores: stores, index: index, concurrency: concurrency}
}

// Files is the handler of files added.
func (h *Handler) Files() runtime.Handler {
	return runtime.Handler{
		Name:        "vector-store-files",
		EventTypes:  []string{"vstore.file_added"},
		Handle:      h.process,
		Concurrency: h.concurrency,
		AckWait:     10 * time.Second,
		Prefetch:    1,
	}
}

func (h *Handler) process(ctx context.Context, e events.Envelope) error {
	d, ok := e.Event.(events.VectorStoreFileAdded)
	if !ok {
		return nil
	}
	var f vectorstore.File
	waiting := false
	err := h.stores.Read(ctx, e.AggregateID, e.Sequence, func(s *vectorstore.State, _ events.Version) error {
		if p := s.Files[d.FileID]; s.Exists && !s.Deleted && p != nil && p.Seq == e.Sequence && p.Status == vectorstore.StatusInProgress {
			f, waiting = *p, true
		}
		return nil
	})
	if err != nil || !waiting {
		return err
	}
	out, err := h.index.Process(ctx, e.AggregateID, f)
	if err != nil {
		return fmt.Errorf("process file %s of %s: %w", d.FileID, e.AggregateID, err)
	}
	meta := events.Meta{Account: e.Account, Actor: "system", CorrelationID: e.AggregateID, CausationID: e.ID}
	_, err = h.stores.Update(ctx, e.AggregateID, e.Sequence, meta, func(s *vectorstore.State) ([]events.Event, error) {
		return vectorstore.Processed(s, out, e.Sequence), nil
	})
	return err
}
