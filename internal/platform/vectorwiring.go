package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/contrailhq/contrail/domain/file"
	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/vectorstores"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/vsindex"
	"github.com/contrailhq/contrail/projections"
)

// VectorParts are the Assistants API's vector stores on a node: the commands, the index (sharing the Julep docs'
// search index, under collections of its own) and its feed from the log, the handler that processes files.
type VectorParts struct {
	Commands *commands.VectorStores
	// Files are the commands on the stores' files and batches.
	Files   *commands.VectorStoreFiles
	Index   *vsindex.Index
	handler *vectorstores.Handler
	stop    context.CancelFunc
	done    chan struct{}
}

// assembleVectorStores wires the vector stores; it comes after assembleJulep, whose search index it shares.
func (p *Platform) assembleVectorStores() error {
	tmp := os.TempDir()
	if p.Config.DataDir != "" {
		tmp = filepath.Join(p.Config.DataDir, "tmp")
		if err := os.MkdirAll(tmp, 0o700); err != nil {
			return err
		}
	}
	repo := eventstore.NewRepo[vectorstore.State](p.Store, vectorstore.Aggregate, 1024)
	v := &VectorParts{Index: vsindex.New(p.Julep.docIndex, p.Store, p.Blobs, p.JS, tmp, p.Logger.With("component", "vector-stores")),
		done: make(chan struct{})}
	v.Commands = commands.NewVectorStores(repo, eventstore.NewRepo[file.State](p.Store, "file", 0), v.Index)
	v.Files = commands.NewVectorStoreFiles(v.Commands)
	v.handler = vectorstores.New(repo, v.Index, 2)
	feed, cancel := context.WithCancel(context.Background())
	v.stop = cancel
	go func() {
		defer close(v.done)
		v.Index.Run(feed)
	}()
	p.Vectors = v
	return nil
}

// stopVectorStores stops the index's feed (before the search index it shares closes).
func (p *Platform) stopVectorStores() {
	if p.Vectors == nil || p.Vectors.stop == nil {
		return
	}
	p.Vectors.stop()
	<-p.Vectors.done
}

// vectorHandlers are the handlers of vector stores: the processing of files added.
func (p *Platform) vectorHandlers() []runtime.Handler {
	return []runtime.Handler{p.Vectors.handler.Files()}
}

// runFiles runs the file_search calls of runs: over the vector stores named by the assistant's and the thread's
// tool_resources, as they are when the call is made.
type runFiles struct{ p *Platform }

func (f runFiles) SearchRunFiles(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
	queries []string, limit int, threshold float64) ([]events.FileSearchResult, error) {
	ids := vectorStoreIDs(threadResources)
	if len(attached) > 0 {
		id, err := f.threadStore(ctx, account, threadID, attached)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	a, ok, err := projections.Get[projections.Listed[projections.AssistantView]](ctx, f.p.Views, "assistants",
		projections.OwnedKey(account, assistantID))
	if err != nil {
		return nil, err
	}
	if ok {
		ids = append(ids, vectorStoreIDs(a.Obj.ToolResources)...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out, searched, err := f.p.searchFiles(ctx, account, ids, commands.SearchRequest{Queries: queries, Limit: limit, MinScore: threshold})
	if err == nil && !searched {
		return nil, errs.E(errs.Invalid, "no vector store is attached to this assistant or thread: set tool_resources.file_search.vector_store_ids")
	}
	return out, err
}

// searchFiles is file_search over the account's stores ids, for runs and responses alike; a store deleted since it
// was named is skipped. searched says whether any store was left to search.
func (p *Platform) searchFiles(ctx context.Context, account string, ids []string, req commands.SearchRequest) (out []events.FileSearchResult, searched bool, err error) {
	actor := auth.Principal{AccountID: account}
	var stores []vectorstore.State
	for _, id := range ids {
		s, err := p.Vectors.Commands.Get(ctx, actor, id)
		if errs.CodeOf(err) == errs.NotFound {
			continue
		}
		if err != nil {
			return nil, false, err
		}
		stores = append(stores, s)
	}
	if len(stores) == 0 {
		return nil, false, nil
	}
	hits, err := p.Vectors.Commands.SearchStores(ctx, stores, req)
	if err != nil {
		return nil, true, err
	}
	out = make([]events.FileSearchResult, len(hits))
	for i, h := range hits {
		out[i] = events.FileSearchResult{FileID: h.FileID, FileName: h.Filename, Score: h.Score, Text: h.Text}
	}
	return out, true, nil
}

// vectorStoreIDs reads tool_resources.file_search.vector_store_ids.
func vectorStoreIDs(toolResources json.RawMessage) []string {
	var tr struct {
		FileSearch struct {
			VectorStoreIDs []string `json:"vector_store_ids"`
		} `json:"file_search"`
	}
	if len(toolResources) == 0 || json.Unmarshal(toolResources, &tr) != nil {
		return nil
	}
	return tr.FileSearch.VectorStoreIDs
}

// threadStore keeps the files the thread's messages attach for file_search in the thread's own store, and waits
// until they are processed (as OpenAI does before a run reads them).
func (f runFiles) threadStore(ctx context.Context, account, threadID string, attached []string) (string, error) {
	actor := auth.Principal{AccountID: account}
	s, res, err := f.p.Vectors.Commands.EnsureThreadStore(ctx, actor, threadID, attached)
	// The client lists its stores: the thread's is among them once the run that made it has started.
	err = f.p.Views.ShowsWrite(ctx, res, err, projections.VectorStores{})
	if err != nil {
		return "", fmt.Errorf("keep the thread's attachments: %w", err)
	}
	for {
		waiting := false
		for _, id := range attached {
			if file := s.Files[id]; file != nil && file.Status == vectorstore.StatusInProgress {
				waiting = true
			}
		}
		if !waiting {
			return s.ID, nil
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if s, err = f.p.Vectors.Commands.Get(ctx, actor, s.ID); err != nil {
			return "", err
		}
	}
}
