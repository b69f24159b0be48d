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
	"github.com/contrailhq/contrail/internal/ids"
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
	actor := auth.Principal{AccountID: account}
	// The thread's stores (its attachments' and those it names) are searched once their files are processed, or
	// after threadStoreWait with what is processed by then; the assistant's are searched as they are.
	wait, cancel := context.WithTimeout(ctx, threadStoreWait)
	defer cancel()
	ids := vectorStoreIDs(threadResources)
	for _, id := range ids {
		s, err := f.p.Vectors.Commands.Get(ctx, actor, id)
		if errs.CodeOf(err) == errs.NotFound {
			continue // searchFiles passes over it
		}
		if err != nil {
			return nil, err
		}
		if err := f.processed(ctx, wait, actor, s, nil); err != nil {
			return nil, err
		}
	}
	if len(attached) > 0 {
		s, err := f.threadStore(ctx, account, threadID, attached)
		if err != nil {
			return nil, err
		}
		if err := f.processed(ctx, wait, actor, s, attached); err != nil {
			return nil, fmt.Errorf("keep the thread's attachments: %w", err)
		}
		ids = append(ids, s.ID)
	}
	a, ok, err := f.p.runAssistant(ctx, account, assistantID)
	if err != nil {
		return nil, err
	}
	if ok {
		ids = append(ids, vectorStoreIDs(a.ToolResources)...)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out, searched, err := f.p.searchFiles(ctx, account, ids, commands.SearchRequest{Queries: queries, Limit: limit, MinScore: threshold})
	if err == nil && !searched {
		return nil, errs.E(errs.Invalid, "no vector store is attached to this assistant or thread: set tool_resources.file_search.vector_store_ids")
	}
	return out, err
}

// runAssistant is the account's assistant a run's tool call reads its tool_resources from: as the assistants read
// model holds it once the model shows the assistant's last event, or else, past the read wait, its events folded
// from the log with the model's own Apply (projections.OwnedShownOrFolded, as the Assistants face reads an
// assistant), so that stores given to an assistant a moment before its run (on this node or another) are
// searched, not left out because the model stood still a moment. ok is false when the account has no such
// assistant (deleted since the run began). A log that cannot be read either is an error: what the model holds may
// be stale, and is not searched as if it were current.
func (p *Platform) runAssistant(ctx context.Context, account, assistantID string) (projections.AssistantView, bool, error) {
	// The run's assistant ID comes from the log, checked when the run was made; it names subjects, so it is
	// checked all the same.
	if !ids.Valid(ids.Assistant, assistantID) {
		return projections.AssistantView{}, false, nil
	}
	a, ok, err := projections.OwnedShownOrFolded[projections.AssistantView](ctx, p.Views, projections.Assistants{},
		events.Ref{Type: "assistant", ID: assistantID}, account)
	return a, ok, projections.Behind(err, "the assistant")
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

// threadStoreWait is how long a run's search waits for its thread's stores to finish processing files: OpenAI's run
// waits up to a minute for a thread's vector store whose files are still being processed, so that what a user just
// attached is searchable, and not for the assistant's stores, which the client is asked to poll to completion first.
const threadStoreWait = 60 * time.Second

// threadStore keeps the files the thread's messages attach for file_search in the thread's own store.
func (f runFiles) threadStore(ctx context.Context, account, threadID string, attached []string) (vectorstore.State, error) {
	actor := auth.Principal{AccountID: account}
	s, res, err := f.p.Vectors.Commands.EnsureThreadStore(ctx, actor, threadID, attached)
	if err != nil {
		return vectorstore.State{}, fmt.Errorf("keep the thread's attachments: %w", err)
	}
	// The client lists its stores: the thread's is among them once the run that made it has started. Past the read
	// wait the store is made all the same, and the search reads it from the log (s, then Commands.Get): the search
	// goes on rather than fail for a model standing still a moment.
	if err := f.p.Views.Shows(ctx, res, projections.VectorStores{}); err != nil && ctx.Err() != nil {
		return vectorstore.State{}, ctx.Err()
	}
	return s, nil
}

// processed waits until none of the store's files (of files only, when given) is still being processed, or until
// wait ends: the search then goes on with what is processed. It fails only when ctx ends (the run's lock lost, the
// node stopping).
func (f runFiles) processed(ctx, wait context.Context, actor auth.Principal, s vectorstore.State, files []string) error {
	for inProgress(s, files) {
		select {
		case <-wait.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		var err error
		s, err = f.p.Vectors.Commands.Get(ctx, actor, s.ID)
		if errs.CodeOf(err) == errs.NotFound {
			return nil // deleted meanwhile: searchFiles passes over it
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// inProgress says whether a file of the store (of files only, when given) is still being processed.
func inProgress(s vectorstore.State, files []string) bool {
	if files == nil {
		for _, f := range s.Files {
			if f.Status == vectorstore.StatusInProgress {
				return true
			}
		}
		return false
	}
	for _, id := range files {
		if f := s.Files[id]; f != nil && f.Status == vectorstore.StatusInProgress {
			return true
		}
	}
	return false
}
