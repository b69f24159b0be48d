package julepdocs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/chunk"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/logfeed"
)

// Index is a node's index of Julep docs.
type Index struct {
	ix     *docindex.Index
	store  *eventstore.Store
	js     jetstream.JetStream
	logger *slog.Logger

	cursor *logfeed.Cursor
	mu     sync.Mutex
	docs   map[string]docMeta // by the doc's aggregate ID (an account's UUID)
}

// docMeta is what a search answer says of a doc besides the snippet.
type docMeta struct {
	owner    events.DocOwner
	metadata json.RawMessage
}

// New returns an index over ix. Run feeds it from the log.
func New(ix *docindex.Index, store *eventstore.Store, js jetstream.JetStream, logger *slog.Logger) *Index {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Index{ix: ix, store: store, js: js, logger: logger, cursor: logfeed.NewCursor(), docs: map[string]docMeta{}}
}

// Collection names the docs of an account's agent or user in the index.
func Collection(account string, o events.DocOwner) string { return account + ":" + o.Role + ":" + o.ID }

// EmbedderName names the embedder the vectors are made by; docs record it.
func (x *Index) EmbedderName() (string, int) { return x.ix.Embedder().Name(), x.ix.Embedder().Dim() }

// Embed makes the vectors of texts, as a doc stores them.
func (x *Index) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	vecs, err := x.ix.Embedder().Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed %d texts with %s: %w", len(texts), x.ix.Embedder().Name(), err)
	}
	return vecs, nil
}

// Snippets cuts a doc's texts into snippets with their vectors, ready for its doc.created.
func (x *Index) Snippets(ctx context.Context, texts []string) ([]events.DocSnippet, error) {
	chunks, err := chunk.Snippets(texts)
	if err != nil {
		return nil, err
	}
	vecs, err := x.Embed(ctx, texts)
	if err != nil {
		return nil, err
	}
	out := make([]events.DocSnippet, len(chunks))
	for i, c := range chunks {
		out[i] = events.DocSnippet{Index: c.Index, Tokens: c.Tokens, Vector: docindex.PackVector(vecs[i])}
	}
	return out, nil
}

// Add indexes a doc at once (the create path, so that it is searchable when the create returns).
func (x *Index) Add(ctx context.Context, d julep.Doc) error {
	_, err := x.ix.Add(ctx, Collection(d.Account, d.Owner), x.indexDoc(d))
	if err != nil {
		return fmt.Errorf("index doc %s: %w", d.ID, err)
	}
	x.mu.Lock()
	x.docs[events.JulepAggregateID(d.Account, d.ID)] = docMeta{owner: d.Owner, metadata: d.Metadata}
	x.mu.Unlock()
	return nil
}

// indexDoc is a doc as the index holds it: its snippets with their stored vectors, unless another embedder made
// them (then the index embeds them again).
func (x *Index) indexDoc(d julep.Doc) docindex.Doc {
	name, _ := x.EmbedderName()
	texts := d.Texts()
	chunks, _ := chunk.Snippets(texts)
	out := docindex.Doc{ID: d.ID, Title: d.Title, Attributes: attributes(d.Metadata), Chunks: make([]docindex.Chunk, len(chunks))}
	for i, c := range chunks {
		out.Chunks[i] = docindex.Chunk{Chunk: c}
		if d.Embedder == name && i < len(d.Snippets) {
			out.Chunks[i].Vector = docindex.UnpackVector(d.Snippets[i].Vector, d.Dim)
		}
	}
	return out
}

// attributes are a doc's metadata as filters compare them.
func attributes(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// Remove takes an account's doc out of the index.
func (x *Index) Remove(ctx context.Context, account, id string, owner events.DocOwner) error {
	if _, err := x.ix.Delete(ctx, Collection(account, owner), id); err != nil {
		return fmt.Errorf("unindex doc %s: %w", id, err)
	}
	x.mu.Lock()
	delete(x.docs, events.JulepAggregateID(account, id))
	x.mu.Unlock()
	return nil
}

// Run feeds the index from the log until ctx ends: the history first (every doc made since the log began, with
// its stored vectors), then each doc as it is made or deleted.
func (x *Index) Run(ctx context.Context) {
	filter := x.store.Names().TypeFilter(julep.DocAggregate + ".*")
	logfeed.Run(ctx, x.logger, "the docs index", func(ctx context.Context) error { return x.run(ctx, filter) })
}

func (x *Index) run(ctx context.Context, filter string) error {
	from := x.cursor.Next()
	if !x.cursor.Loaded() {
		// The history is read in bulk and indexed one collection at a time, much faster than event by event.
		docs := map[string]julep.Doc{}
		last, err := x.store.Read(ctx, from, func(e events.Envelope) error {
			switch e.Event.(type) {
			case events.DocCreated:
				var s julep.DocState
				s.Apply(e)
				docs[e.AggregateID] = s.Doc
			case events.DocDeleted:
				delete(docs, e.AggregateID)
			}
			return nil
		}, filter)
		if err != nil {
			return fmt.Errorf("read the docs' history: %w", err)
		}
		if err := x.addMany(ctx, docs); err != nil {
			return err
		}
		x.cursor.SetLoaded(last)
		from = last + 1
	}
	for e, err := range x.store.Follow(ctx, from, filter) {
		if err != nil {
			return err
		}
		switch d := e.Event.(type) {
		case events.DocCreated:
			var s julep.DocState
			s.Apply(e)
			err = x.Add(ctx, s.Doc)
		case events.DocDeleted:
			err = x.Remove(ctx, e.Account, events.JulepPublicID(e.AggregateID), d.Owner)
		}
		if err != nil {
			x.logger.Error("index a doc from the log", "doc", e.AggregateID, "err", err)
		}
		x.cursor.Advance(e.Sequence)
	}
	return ctx.Err()
}

func (x *Index) addMany(ctx context.Context, docs map[string]julep.Doc) error {
	byColl := map[string][]docindex.Doc{}
	for _, d := range docs {
		c := Collection(d.Account, d.Owner)
		byColl[c] = append(byColl[c], x.indexDoc(d))
	}
	for c, ds := range byColl {
		if _, err := x.ix.AddMany(ctx, c, ds); err != nil {
			return fmt.Errorf("index the docs of %s: %w", c, err)
		}
	}
	x.mu.Lock()
	for id, d := range docs {
		x.docs[id] = docMeta{owner: d.Owner, metadata: d.Metadata}
	}
	x.mu.Unlock()
	return nil
}

// CatchUp waits until the feed has applied the log's last doc event (as of the call), so that a search sees every
// doc whose create returned before it, whichever node made it.
func (x *Index) CatchUp(ctx context.Context) error {
	if err := x.cursor.Wait(ctx, 0); err != nil {
		return err
	}
	stream, err := x.js.Stream(ctx, x.store.Names().EventsStream())
	if err != nil {
		return fmt.Errorf("look up events stream: %w", err)
	}
	m, err := stream.GetLastMsgForSubject(ctx, x.store.Names().TypeFilter(julep.DocAggregate+".*"))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("last doc event: %w", err)
	}
	return x.cursor.Wait(ctx, m.Sequence)
}

// Query is a search of the docs of some of an account's agents and users.
type Query struct {
	Account string
	Owners  []events.DocOwner
	Mode    docindex.Mode
	Text    string
	Vector  []float32
	Limit   int
	// Alpha, Confidence and MMRStrength are Julep's (see docindex.Query).
	Alpha, Confidence, MMRStrength float64
	MetadataFilter                 map[string]any
}

// Ref is a snippet found: Julep's DocReference.
type Ref struct {
	DocID    string
	Owner    events.DocOwner
	Title    string
	Index    int
	Snippet  string
	Score    float64
	Distance float64
	Metadata json.RawMessage
}

// Search finds the snippets of the owners' docs that best match q, best first, one per doc as Julep answers.
func (x *Index) Search(ctx context.Context, q Query) ([]Ref, error) {
	if err := x.CatchUp(ctx); err != nil {
		return nil, err
	}
	colls := make([]string, len(q.Owners))
	for i, o := range q.Owners {
		colls[i] = Collection(q.Account, o)
	}
	hits, err := x.ix.Search(ctx, docindex.Query{Collections: colls, Mode: q.Mode, Text: q.Text, Vector: q.Vector,
		Limit: q.Limit, Alpha: q.Alpha, Confidence: q.Confidence, MMRStrength: q.MMRStrength,
		Filter: docindex.MetadataFilter(q.MetadataFilter), OneHitPerDoc: true})
	if err != nil {
		return nil, err
	}
	out := make([]Ref, 0, len(hits))
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, h := range hits {
		meta, ok := x.docs[events.JulepAggregateID(q.Account, h.DocID)]
		if !ok {
			continue // deleted while the search ran
		}
		r := Ref{DocID: h.DocID, Owner: meta.owner, Title: h.Title, Index: h.Chunk.Index, Snippet: h.Chunk.Text,
			Score: h.Score, Distance: 1 - h.Score, Metadata: meta.metadata}
		out = append(out, r)
	}
	return out, nil
}
