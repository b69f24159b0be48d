// Package vsindex is a node's index of the Assistants API's vector stores: it processes a file added to a store
// (extract its text, cut it into chunks, embed them, and store the chunks with their vectors in the object store),
// and it keeps every store's chunks searchable on every node by following the log: when a file's processing is
// recorded, each node reads the stored chunks and indexes them without embedding again, also after a restart.
//
// It imports events, the vector store domain, the blob store and the search libraries; never the faces, the read
// models or the handlers.
package vsindex

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/vectorstore"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/blobs"
	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/extract"
	"github.com/contrailhq/contrail/internal/logfeed"
)

// Index is a node's index of vector stores.
type Index struct {
	ix     *docindex.Index
	store  *eventstore.Store
	blobs  *blobs.Store
	js     jetstream.JetStream
	tmp    string
	logger *slog.Logger

	cursor *logfeed.Cursor
	mu     sync.Mutex
	// stores are the stores as the feed has folded them, for the files' names and attributes.
	stores map[string]*vectorstore.State
}

// New returns an index over ix; tmp is where files are spooled while they are read. Run feeds it from the log.
func New(ix *docindex.Index, store *eventstore.Store, b *blobs.Store, js jetstream.JetStream, tmp string, logger *slog.Logger) *Index {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Index{ix: ix, store: store, blobs: b, js: js, tmp: tmp, logger: logger, cursor: logfeed.NewCursor(),
		stores: map[string]*vectorstore.State{}}
}

// Collection names a store's chunks in the index.
func Collection(storeID string) string { return "vs:" + storeID }

// maxText bounds the text one file may give (a 512 MB upload of plain text gives no more than this).
const maxText = 256 << 20

// Process turns a file of a store into chunks with vectors, stores them, and returns what records the outcome. A
// file that cannot be read is a failed outcome (unsupported_file, invalid_file), not an error: the error is for
// the platform's own trouble (the object store, the embedder), which is worth another try.
func (x *Index) Process(ctx context.Context, storeID string, f vectorstore.File) (events.VectorStoreFileProcessed, error) {
	out := events.VectorStoreFileProcessed{FileID: f.FileID}
	failed := func(code, msg string) (events.VectorStoreFileProcessed, error) {
		out.Status, out.LastError = vectorstore.StatusFailed, &events.VectorStoreFileError{Code: code, Message: msg}
		return out, nil
	}
	spool, size, err := x.spool(ctx, f.Object)
	if errors.Is(err, blobs.ErrNotFound) {
		return failed("invalid_file", "the file's bytes are gone (the file was deleted)")
	}
	if err != nil {
		return out, err
	}
	defer func() { spool.Close(); os.Remove(spool.Name()) }()
	strategy := chunk.Strategy{MaxTokens: f.Chunking.MaxTokens, OverlapTokens: f.Chunking.OverlapTokens}
	name := blobName(storeID, f.FileID, f.Seq)
	// The chunks go to their blob as they are cut and embedded, embedBatch at a time, so that a large file is
	// never held whole: only the blob has it all.
	out.Index, out.Embedder = name, x.ix.Embedder().Name()
	blob := x.startChunks(ctx, name)
	var batch []chunk.Chunk
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		doc, err := x.ix.Embed(ctx, docindex.Doc{ID: f.FileID, Chunks: docindex.Chunks(batch)})
		if err != nil {
			return fmt.Errorf("%w: embed file %s of %s: %w", errPlatform, f.FileID, storeID, err)
		}
		for _, c := range doc.Chunks {
			if err := blob.add(c); err != nil {
				return err
			}
			out.Chunks++
			out.UsageBytes += int64(len(c.Text))
		}
		batch = batch[:0]
		return nil
	}
	w, err := chunk.NewWriter(strategy, func(c chunk.Chunk) error {
		batch = append(batch, c)
		if len(batch) == embedBatch {
			return flush()
		}
		return nil
	})
	if err != nil {
		blob.abort(err)
		return failed("invalid_file", err.Error())
	}
	_, err = extract.Extract(ctx, f.Filename, spool, size, w, extract.Options{MaxText: maxText})
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = flush()
	}
	if err != nil {
		blob.abort(err)
		if code, ok := extract.CodeOf(err); ok {
			return failed(string(code), err.Error())
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		if errors.Is(err, errPlatform) {
			return out, err
		}
		return failed("invalid_file", err.Error())
	}
	if out.Chunks == 0 {
		blob.abort(errors.New("no text"))
		return failed("invalid_file", "the file holds no text")
	}
	if err := blob.finish(); err != nil {
		return out, err
	}
	out.Status = vectorstore.StatusCompleted
	return out, nil
}

// embedBatch is how many chunks are embedded and written at a time.
const embedBatch = 128

// errPlatform marks an error of the platform's own (the embedder, the object store) met while a file was read:
// worth another try, unlike a file that cannot be read.
var errPlatform = errors.New("platform")

// chunkBlob is a blob of chunks being written, one JSON line each, through a pipe to the object store.
type chunkBlob struct {
	pw   *io.PipeWriter
	bw   *bufio.Writer
	enc  *json.Encoder
	done chan error
}

func (x *Index) startChunks(ctx context.Context, name string) *chunkBlob {
	pr, pw := io.Pipe()
	b := &chunkBlob{pw: pw, bw: bufio.NewWriter(pw), done: make(chan error, 1)}
	b.enc = json.NewEncoder(b.bw)
	go func() {
		_, err := x.blobs.Put(ctx, name, "application/x-ndjson", pr)
		_ = pr.CloseWithError(err)
		b.done <- err
	}()
	return b
}

func (b *chunkBlob) add(c docindex.Chunk) error {
	if err := b.enc.Encode(stored{Chunk: c.Chunk, Vector: docindex.PackVector(c.Vector)}); err != nil {
		return fmt.Errorf("%w: write chunks: %v", errPlatform, err)
	}
	return nil
}

// abort stops the write: the object store keeps nothing of it.
func (b *chunkBlob) abort(cause error) {
	_ = b.pw.CloseWithError(cause)
	<-b.done
}

// finish writes what is buffered and waits until the object store has the whole blob.
func (b *chunkBlob) finish() error {
	if err := b.bw.Flush(); err != nil {
		b.abort(err)
		return fmt.Errorf("write chunks: %w", err)
	}
	_ = b.pw.Close()
	return <-b.done
}

// spool copies a blob to a temporary file (PDF and DOCX are read at random offsets).
func (x *Index) spool(ctx context.Context, object string) (*os.File, int64, error) {
	r, _, err := x.blobs.Get(ctx, object)
	if err != nil {
		return nil, 0, err
	}
	defer r.Close()
	f, err := os.CreateTemp(x.tmp, "vsfile-*")
	if err != nil {
		return nil, 0, fmt.Errorf("spool %s: %w", object, err)
	}
	n, err := io.Copy(f, r)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, 0, fmt.Errorf("spool %s: %w", object, err)
	}
	return f, n, nil
}

// blobName is where a file's chunks are stored: one blob per addition of the file to the store.
func blobName(storeID, fileID string, seq uint64) string {
	return fmt.Sprintf("vsindex/%s/%s/%d", storeID, fileID, seq)
}

// stored is a chunk as its blob holds it, one JSON line each.
type stored struct {
	chunk.Chunk
	Vector []byte `json:"vector"`
}

// Chunks reads a processed file's chunks from its blob, with their vectors when embedder made them.
func (x *Index) Chunks(ctx context.Context, name, embedder string) ([]docindex.Chunk, error) {
	r, _, err := x.blobs.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	same := embedder == x.ix.Embedder().Name()
	dim := x.ix.Embedder().Dim()
	var out []docindex.Chunk
	dec := json.NewDecoder(bufio.NewReader(r))
	for {
		var s stored
		if err := dec.Decode(&s); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("read chunks %s: %w", name, err)
		}
		c := docindex.Chunk{Chunk: s.Chunk}
		if same {
			d := dim
			if d == 0 {
				d = len(s.Vector) / 4
			}
			c.Vector = docindex.UnpackVector(s.Vector, d)
		}
		out = append(out, c)
	}
}

// Run feeds the index from the log until ctx ends.
func (x *Index) Run(ctx context.Context) {
	filter := x.store.Names().TypeFilter(vectorstore.Aggregate + ".*")
	logfeed.Run(ctx, x.logger, "the vector store index", func(ctx context.Context) error { return x.run(ctx, filter) })
}

func (x *Index) run(ctx context.Context, filter string) error {
	from := x.cursor.Next()
	if !x.cursor.Loaded() {
		// The history is folded first, then each store's processed files are indexed from their blobs at once.
		last, err := x.store.Read(ctx, from, func(e events.Envelope) error {
			x.fold(e)
			return nil
		}, filter)
		if err != nil {
			return fmt.Errorf("read the vector stores' history: %w", err)
		}
		if err := x.loadAll(ctx); err != nil {
			return err
		}
		x.cursor.SetLoaded(last)
		from = last + 1
	}
	for e, err := range x.store.Follow(ctx, from, filter) {
		if err != nil {
			return err
		}
		if err := x.apply(ctx, e); err != nil {
			x.logger.Error("index a vector store event", "store", e.AggregateID, "type", e.Type, "err", err)
		}
		x.cursor.Advance(e.Sequence)
	}
	return ctx.Err()
}

// fold applies an event to the feed's copy of its store, and returns the store.
func (x *Index) fold(e events.Envelope) *vectorstore.State {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.stores[e.AggregateID]
	if s == nil {
		s = &vectorstore.State{}
		x.stores[e.AggregateID] = s
	}
	if e.Event != nil {
		s.Apply(e)
	}
	if s.Deleted {
		delete(x.stores, e.AggregateID)
	}
	return s
}

// loadAll indexes the completed files of every store from their blobs.
func (x *Index) loadAll(ctx context.Context) error {
	x.mu.Lock()
	stores := make(map[string][]vectorstore.File, len(x.stores))
	for id, s := range x.stores {
		for _, f := range s.Files {
			if f.Status == vectorstore.StatusCompleted {
				stores[id] = append(stores[id], *f)
			}
		}
	}
	x.mu.Unlock()
	for id, files := range stores {
		docs := make([]docindex.Doc, 0, len(files))
		for _, f := range files {
			d, err := x.doc(ctx, f)
			if err != nil {
				x.logger.Error("load a vector store file's chunks", "store", id, "file", f.FileID, "err", err)
				continue
			}
			docs = append(docs, d)
		}
		if _, err := x.ix.AddMany(ctx, Collection(id), docs); err != nil {
			return fmt.Errorf("index vector store %s: %w", id, err)
		}
	}
	return nil
}

func (x *Index) doc(ctx context.Context, f vectorstore.File) (docindex.Doc, error) {
	chunks, err := x.Chunks(ctx, f.Index, f.Embedder)
	if err != nil {
		return docindex.Doc{}, err
	}
	return docindex.Doc{ID: f.FileID, Title: f.Filename, Attributes: f.Attributes, Chunks: chunks}, nil
}

// apply keeps the index in line with one event.
func (x *Index) apply(ctx context.Context, e events.Envelope) error {
	s := x.fold(e)
	switch d := e.Event.(type) {
	case events.VectorStoreDeleted:
		return x.ix.DeleteCollection(Collection(e.AggregateID))
	case events.VectorStoreFileRemoved:
		_, err := x.ix.Delete(ctx, Collection(e.AggregateID), d.FileID)
		return err
	case events.VectorStoreFileProcessed, events.VectorStoreFileUpdated:
		var id string
		switch d := d.(type) {
		case events.VectorStoreFileProcessed:
			id = d.FileID
		case events.VectorStoreFileUpdated:
			id = d.FileID
		}
		x.mu.Lock()
		var f vectorstore.File
		ok := false
		if p := s.Files[id]; p != nil {
			f, ok = *p, p.Status == vectorstore.StatusCompleted
		}
		x.mu.Unlock()
		if !ok {
			return nil
		}
		doc, err := x.doc(ctx, f)
		if err != nil {
			return err
		}
		_, err = x.ix.Add(ctx, Collection(e.AggregateID), doc)
		return err
	}
	return nil
}

// CatchUp waits until the feed has applied the log up to seq, so that a search sees what a store's state said.
func (x *Index) CatchUp(ctx context.Context, seq uint64) error { return x.cursor.Wait(ctx, seq) }

// Query is a search of some stores.
type Query struct {
	Stores []string
	// Text is the query (several queries are joined by the caller).
	Text     string
	Limit    int
	Filter   *docindex.Filter
	MinScore float64
	// Mode is hybrid unless set.
	Mode docindex.Mode
}

// Hit is a chunk found.
type Hit struct {
	StoreID    string
	FileID     string
	Filename   string
	Attributes map[string]any
	Text       string
	Score      float64
}

// Search finds the chunks of the stores that best match q, best first. The caller has made sure the feed reached
// the stores' last events (CatchUp).
func (x *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	colls := make([]string, len(q.Stores))
	for i, s := range q.Stores {
		colls[i] = Collection(s)
	}
	mode := q.Mode
	if mode == "" {
		mode = docindex.Hybrid
	}
	hits, err := x.ix.Search(ctx, docindex.Query{Collections: colls, Mode: mode, Text: q.Text, Limit: q.Limit, Alpha: 0.5,
		Filter: q.Filter, MinScore: q.MinScore})
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(hits))
	for i, h := range hits {
		out[i] = Hit{StoreID: strings.TrimPrefix(h.Collection, "vs:"), FileID: h.DocID, Filename: h.Title,
			Attributes: h.Attributes, Text: h.Chunk.Text, Score: h.Score}
	}
	return out, nil
}
