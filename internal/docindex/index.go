package docindex

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	index "github.com/blevesearch/bleve_index_api"
	"github.com/philippgille/chromem-go"

	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/errs"
)

// Doc is a document of a collection: its chunks and what filters look at.
type Doc struct {
	ID string
	// Title is searched by keyword beside each chunk's text (a Julep doc's title, a file's name).
	Title string
	// Attributes are what filters compare: OpenAI's file attributes (string, number, bool), Julep's metadata (any
	// JSON). Numbers may be any Go numeric type.
	Attributes map[string]any
	Chunks     []Chunk
}

// Chunk is a piece of a document's text and its vector.
type Chunk struct {
	chunk.Chunk
	// Vector is the chunk's embedding, made by the index's embedder; nil when it is to be made. The index keeps
	// the slice it is given (when it is of unit length): it must not be changed afterwards.
	Vector []float32
}

// Chunks wraps chunks that have no vector yet, for Add to embed.
func Chunks(cs []chunk.Chunk) []Chunk {
	out := make([]Chunk, len(cs))
	for i, c := range cs {
		out[i] = Chunk{Chunk: c}
	}
	return out
}

// Index is the collections of documents of a node. It is safe for concurrent use.
type Index struct {
	emb     embedding.Embedder
	dir     string
	mapping mapping.IndexMapping

	mu     sync.RWMutex
	db     *chromem.DB
	colls  map[string]*collection
	seq    int
	closed bool
}

type collection struct {
	name string

	mu     sync.RWMutex
	text   bleve.Index
	vec    *chromem.Collection
	docs   map[string]*doc
	chunks map[string]*entry // by chunk key
	gone   bool              // deleted: searches find nothing, adds make a new collection
}

type doc struct {
	id     string
	title  string
	attrs  map[string]any
	chunks []string // keys
}

type entry struct {
	doc   *doc
	chunk chunk.Chunk
	vec   []float32
}

// chunkKey names a chunk in both indexes. A document's ID may hold anything; the index after the last '#' makes
// the key unique.
func chunkKey(docID string, index int) string { return docID + "#" + strconv.Itoa(index) }

// Options configures an Index.
type Options struct {
	// Dir is where the index keeps its scratch directory, docindex-scratch, for the keyword index's segment files
	// (bleve merges segments only on disk; in memory alone, search slows with every add). The scratch directory
	// is wiped on New and removed on Close; nothing else in Dir is touched. Empty: a new temporary directory.
	Dir string
}

// scratchName is the directory the index owns inside Options.Dir.
const scratchName = "docindex-scratch"

// New returns an empty index whose chunks are embedded by emb.
func New(emb embedding.Embedder, opt Options) (*Index, error) {
	var dir string
	if opt.Dir == "" {
		d, err := os.MkdirTemp("", "contrail-"+scratchName+"-")
		if err != nil {
			return nil, fmt.Errorf("docindex: scratch directory: %w", err)
		}
		dir = d
	} else {
		dir = filepath.Join(opt.Dir, scratchName)
		if err := os.RemoveAll(dir); err != nil {
			return nil, fmt.Errorf("docindex: clear %s: %w", dir, err)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("docindex: create %s: %w", dir, err)
		}
	}
	return &Index{emb: emb, dir: dir, mapping: textMapping(), db: chromem.NewDB(), colls: map[string]*collection{}}, nil
}

// textMapping indexes a chunk's text and its document's title with the English analyzer (stemming, stop words),
// storing nothing but the postings BM25 needs: the text itself lives in the index's own map.
func textMapping() mapping.IndexMapping {
	field := func() *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = en.AnalyzerName
		f.Store = false
		f.IncludeTermVectors = false
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	dm := mapping.NewDocumentStaticMapping()
	dm.AddFieldMappingsAt(fieldText, field())
	dm.AddFieldMappingsAt(fieldTitle, field())
	m := bleve.NewIndexMapping()
	m.DefaultMapping = dm
	m.DefaultAnalyzer = en.AnalyzerName
	m.ScoringModel = index.BM25Scoring
	m.StoreDynamic = false
	m.IndexDynamic = false
	m.DocValuesDynamic = false
	return m
}

const (
	fieldText  = "text"
	fieldTitle = "title"
)

// Embedder is the embedder whose vectors the index holds. Stored vectors should record its Name, so that vectors
// of another embedder are made again rather than compared.
func (ix *Index) Embedder() embedding.Embedder { return ix.emb }

// Close releases the collections and deletes the scratch directory.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil
	}
	ix.closed = true
	var errList []error
	for _, c := range ix.colls {
		errList = append(errList, c.close())
	}
	ix.colls = nil
	errList = append(errList, os.RemoveAll(ix.dir))
	return errors.Join(errList...)
}

func (c *collection) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gone = true
	if c.text == nil {
		return nil
	}
	err := c.text.Close()
	c.text = nil
	return err
}

var errClosed = errors.New("docindex: closed")

// collection returns the named collection, creating it when create is set (nil when it does not exist).
func (ix *Index) collection(name string, create bool) (*collection, error) {
	ix.mu.RLock()
	c, closed := ix.colls[name], ix.closed
	ix.mu.RUnlock()
	if closed {
		return nil, errClosed
	}
	if c != nil || !create {
		return c, nil
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil, errClosed
	}
	if c := ix.colls[name]; c != nil {
		return c, nil
	}
	ix.seq++
	path := filepath.Join(ix.dir, fmt.Sprintf("c%06d", ix.seq))
	text, err := bleve.NewUsing(path, ix.mapping, scorch.Name, scorch.Name,
		// The index is rebuilt from stored chunks at start, so a batch need not wait for its segment to reach the
		// disk; it is searchable once it returns either way.
		map[string]any{"unsafe_batch": true})
	if err != nil {
		return nil, fmt.Errorf("docindex: create keyword index of %q: %w", name, err)
	}
	// Every chunk comes with its vector: the collection must never call an embedding function (chromem's default
	// would call OpenAI), so it gets one that refuses.
	vec, err := ix.db.CreateCollection(fmt.Sprintf("c%06d", ix.seq), nil, func(context.Context, string) ([]float32, error) {
		return nil, errors.New("docindex: every chunk comes with its vector")
	})
	if err != nil {
		_ = text.Close()
		return nil, fmt.Errorf("docindex: create vector index of %q: %w", name, err)
	}
	c = &collection{name: name, text: text, vec: vec, docs: map[string]*doc{}, chunks: map[string]*entry{}}
	ix.colls[name] = c
	return c, nil
}

// Add indexes doc in the collection (created on its first document), replacing a document of the same ID. Chunks
// without a vector are embedded first; the document returned carries every chunk's vector, for the caller to
// store. The document is searchable when Add returns. A vector of the wrong size is refused (errs.Invalid); the
// caller drops the vectors of another embedder (see Embedder) so that Add makes them again.
func (ix *Index) Add(ctx context.Context, collectionName string, d Doc) (Doc, error) {
	docs, err := ix.AddMany(ctx, collectionName, []Doc{d})
	if err != nil {
		return Doc{}, err
	}
	return docs[0], nil
}

// maxBatch bounds the chunks written to the keyword index at once, to bound the memory of a bulk load.
const maxBatch = 512

// AddMany is Add for many documents of one collection at once, the fast way to rebuild a collection from stored
// chunks. An error from the keyword index may leave some documents added: adding again is safe, since a document
// replaces its namesake.
func (ix *Index) AddMany(ctx context.Context, collectionName string, docs []Doc) ([]Doc, error) {
	if collectionName == "" {
		return nil, errs.InvalidField("collection", "collection name must not be empty")
	}
	docs, err := ix.embedMissing(ctx, docs)
	if err != nil {
		return nil, err
	}
	for {
		c, err := ix.collection(collectionName, true)
		if err != nil {
			return nil, err
		}
		retry, err := c.add(ctx, docs)
		if !retry {
			return docs, err
		}
		// The collection was deleted between finding and locking it: add to its successor.
	}
}

// Embed returns a document with a vector for every chunk that had none, without indexing it: for a caller that
// stores the vectors and indexes the document later, from the store.
func (ix *Index) Embed(ctx context.Context, d Doc) (Doc, error) {
	docs, err := ix.embedMissing(ctx, []Doc{d})
	if err != nil {
		return Doc{}, err
	}
	return docs[0], nil
}

// embedMissing validates the documents and embeds the chunks that have no vector, in one call to the embedder.
// The documents returned are copies; the caller's are left alone.
func (ix *Index) embedMissing(ctx context.Context, docs []Doc) ([]Doc, error) {
	out := make([]Doc, len(docs))
	var texts []string
	var where [][2]int
	seen := make(map[string]bool, len(docs))
	for i, d := range docs {
		if d.ID == "" {
			return nil, errs.InvalidField("id", "document ID must not be empty")
		}
		if seen[d.ID] {
			return nil, errs.InvalidField("id", "document %q is given twice", d.ID)
		}
		seen[d.ID] = true
		out[i] = d
		out[i].Chunks = append([]Chunk(nil), d.Chunks...)
		indexes := make(map[int]bool, len(d.Chunks))
		for j, c := range d.Chunks {
			if indexes[c.Index] {
				return nil, errs.InvalidField("chunks", "document %q has two chunks with index %d", d.ID, c.Index)
			}
			indexes[c.Index] = true
			switch {
			case c.Vector == nil:
				texts = append(texts, c.Text)
				where = append(where, [2]int{i, j})
			// A remote embedder learns its size from its first answer: before one, stored vectors are taken as
			// they are (they record the embedder that made them; the caller drops those of another).
			case ix.emb.Dim() > 0 && len(c.Vector) != ix.emb.Dim():
				return nil, errs.InvalidField("vector", "chunk %d of document %q has a vector of %d dimensions; %s makes %d",
					c.Index, d.ID, len(c.Vector), ix.emb.Name(), ix.emb.Dim())
			}
		}
	}
	if len(texts) == 0 {
		return out, nil
	}
	vecs, err := ix.emb.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("docindex: embed %d chunks: %w", len(texts), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("docindex: embedder %s returned %d vectors for %d texts", ix.emb.Name(), len(vecs), len(texts))
	}
	for k, w := range where {
		out[w[0]].Chunks[w[1]].Vector = vecs[k]
	}
	return out, nil
}

// add applies documents under the collection's lock. retry reports that the collection was deleted meanwhile.
// The context is looked at once, before anything changes: stopping halfway would leave the two indexes apart.
func (c *collection) add(ctx context.Context, docs []Doc) (retry bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone {
		return true, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	batch := c.text.NewBatch()
	flush := func() error {
		if batch.Size() == 0 {
			return nil
		}
		if err := c.text.Batch(batch); err != nil {
			return fmt.Errorf("docindex: keyword index of %q: %w", c.name, err)
		}
		// A fresh batch rather than Reset: scorch's Batch leaves a goroutine ranging over the old batch's map
		// after it returns (a data race under -race when the map is cleared).
		batch = c.text.NewBatch()
		return nil
	}
	for _, d := range docs {
		if old := c.docs[d.ID]; old != nil {
			c.removeLocked(old, batch)
		}
		nd := &doc{id: d.ID, title: d.Title, attrs: maps.Clone(d.Attributes), chunks: make([]string, 0, len(d.Chunks))}
		for _, ch := range d.Chunks {
			key := chunkKey(d.ID, ch.Index)
			fields := map[string]any{fieldText: ch.Text}
			if d.Title != "" {
				fields[fieldTitle] = d.Title
			}
			if err := batch.Index(key, fields); err != nil {
				return false, fmt.Errorf("docindex: index chunk %s: %w", key, err)
			}
			// chromem keeps the slice it is given when it is already unit length, so the vector is held once, and
			// the same unit vector serves hybrid scores and MMR. A zero vector (an embedder's answer to no text)
			// is similar to nothing: only its words are searched.
			vec, ok := unit(ch.Vector)
			if !ok {
				vec = nil
			} else if err := c.vec.AddDocument(ctx, chromem.Document{ID: key, Embedding: vec}); err != nil {
				return false, fmt.Errorf("docindex: vector of chunk %s: %w", key, err)
			}
			c.chunks[key] = &entry{doc: nd, chunk: ch.Chunk, vec: vec}
			nd.chunks = append(nd.chunks, key)
			// Within a document too: a 50 MB file is thousands of chunks, and a batch holds every chunk's
			// analysis (its terms and their positions) until it is applied.
			if batch.Size() >= maxBatch {
				if err := flush(); err != nil {
					return false, err
				}
			}
		}
		c.docs[nd.id] = nd
	}
	return false, flush()
}

// removeLocked takes a document's chunks out of both indexes (the keyword index's deletions go in batch).
func (c *collection) removeLocked(d *doc, batch *bleve.Batch) {
	for _, key := range d.chunks {
		batch.Delete(key)
		delete(c.chunks, key)
	}
	if len(d.chunks) > 0 { // chromem refuses a delete without IDs
		_ = c.vec.Delete(context.Background(), nil, nil, d.chunks...)
	}
	delete(c.docs, d.id)
}

// Delete removes a document from a collection, reporting whether it was there.
func (ix *Index) Delete(ctx context.Context, collectionName, docID string) (bool, error) {
	c, err := ix.collection(collectionName, false)
	if err != nil || c == nil {
		return false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.docs[docID]
	if c.gone || d == nil {
		return false, nil
	}
	batch := c.text.NewBatch()
	c.removeLocked(d, batch)
	if err := c.text.Batch(batch); err != nil {
		return true, fmt.Errorf("docindex: delete %s from the keyword index of %q: %w", docID, collectionName, err)
	}
	return true, nil
}

// DeleteCollection removes a collection and everything in it.
func (ix *Index) DeleteCollection(collectionName string) error {
	ix.mu.Lock()
	c := ix.colls[collectionName]
	delete(ix.colls, collectionName)
	if c != nil && !ix.closed {
		_ = ix.db.DeleteCollection(c.vec.Name)
	}
	ix.mu.Unlock()
	if c == nil {
		return nil
	}
	return c.close()
}

// Stats counts what a collection holds.
type Stats struct {
	Docs   int
	Chunks int
}

// Stats counts the documents and chunks of a collection (zero for one that does not exist).
func (ix *Index) Stats(collectionName string) Stats {
	c, err := ix.collection(collectionName, false)
	if err != nil || c == nil {
		return Stats{}
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	return Stats{Docs: len(c.docs), Chunks: len(c.chunks)}
}

// Collections lists the collections, sorted.
func (ix *Index) Collections() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(ix.colls))
	for n := range ix.colls {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// unit returns v scaled to unit length (v itself when it is already, within chromem's tolerance), so that dot
// products are cosine similarities; false for a zero vector, which has no direction.
func unit(v []float32) ([]float32, bool) {
	var sq float64
	for _, x := range v {
		sq += float64(x) * float64(x)
	}
	n := math.Sqrt(sq)
	switch {
	case n == 0 || math.IsNaN(n) || math.IsInf(n, 0):
		return v, false
	case math.Abs(n-1) < 1e-6:
		return v, true
	}
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out, true
}

// PackVector writes a vector as it is stored (a Julep doc's snippets, a vector store file's chunks): little-endian
// float32s.
func PackVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// UnpackVector reads a stored vector (nil when it has the wrong length).
func UnpackVector(b []byte, dim int) []float32 {
	if len(b) != 4*dim || dim == 0 {
		return nil
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}
