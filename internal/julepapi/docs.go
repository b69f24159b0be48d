package julepapi

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepdocs"
	"github.com/contrailhq/contrail/projections"
)

// docJSON is Julep's Doc.
type docJSON struct {
	ID                  string          `json:"id"`
	Title               string          `json:"title"`
	Content             json.RawMessage `json:"content"`
	Metadata            json.RawMessage `json:"metadata"`
	CreatedAt           string          `json:"created_at"`
	Embeddings          any             `json:"embeddings"`
	Modality            string          `json:"modality"`
	Language            string          `json:"language"`
	EmbeddingModel      string          `json:"embedding_model"`
	EmbeddingDimensions int             `json:"embedding_dimensions"`
}

// docOut is a doc as Julep shows it; with vectors, its snippets' embeddings (one list, or one per snippet).
func docOut(d julep.Doc, vectors bool) docJSON {
	out := docJSON{ID: d.ID, Title: d.Title, Content: d.Content, Metadata: orObject(d.Metadata), CreatedAt: jsonTime(d.Created),
		Modality: "text", Language: "english", EmbeddingModel: d.Embedder, EmbeddingDimensions: d.Dim}
	if vectors && len(d.Snippets) > 0 {
		vecs := make([][]float32, len(d.Snippets))
		for i, s := range d.Snippets {
			vecs[i] = docindex.UnpackVector(s.Vector, d.Dim)
		}
		if len(vecs) == 1 {
			out.Embeddings = vecs[0]
		} else {
			out.Embeddings = vecs
		}
	}
	return out
}

// owner is the agent or user a docs route is under.
func owner(r *http.Request, role string) events.DocOwner {
	return events.DocOwner{Role: role, ID: chi.URLParam(r, role+"_id")}
}

func (f *Face) createDoc(role string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var b struct {
			Title            present[string] `json:"title"`
			Content          json.RawMessage `json:"content"`
			Metadata         json.RawMessage `json:"metadata"`
			EmbedInstruction present[string] `json:"embed_instruction"`
		}
		id, err := f.readJSON(r, true, &b)
		switch {
		case err != nil:
		case !b.Title.Set || b.Title.Null:
			err = errs.Missing("title")
		case len(notNull(b.Content)) == 0:
			err = errs.Missing("content")
		}
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		res, err := f.d.Docs.Create(r.Context(), principal(r), id, owner(r, role), commands.NewDoc{Title: b.Title.Value,
			Content: b.Content, Metadata: notNull(b.Metadata), EmbedInstruction: b.EmbedInstruction.Value})
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		created(w, docOut(res.Object, false))
	}
}

func (f *Face) deleteDoc(role string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "doc_id")
		res, err := f.d.Docs.Delete(r.Context(), principal(r), owner(r, role), id, isRetry(r))
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		deleted(w, id, res.Object.Updated)
	}
}

func (f *Face) getDoc(w http.ResponseWriter, r *http.Request) {
	d, err := f.d.Docs.Get(r.Context(), principal(r), chi.URLParam(r, "doc_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, docOut(d, r.URL.Query().Get("include_embeddings") == "true"))
}

func (f *Face) listDocs(role string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		o := owner(r, role)
		if err := f.d.Docs.CheckOwner(r.Context(), principal(r), o); err != nil {
			f.WriteError(w, r, err)
			return
		}
		if r.URL.Query().Get("include_embeddings") == "true" {
			// The docs read model keeps no vectors (the log does): refuse rather than answer without them.
			f.WriteError(w, r, badRequest{errs.InvalidField("include_embeddings",
				"a list of docs does not carry embeddings; get a doc (GET /docs/{doc_id}?include_embeddings=true) for its vectors")})
			return
		}
		listFrom(f, w, r, projections.JulepDocsModel, projections.JulepDocsFilter(principal(r).AccountID, o), []string{"metadata_filter", "include_embeddings"}, func(d julep.Doc) (listItem, any) {
			return listItem{created: d.Created, updated: d.Created, metadata: d.Metadata}, docOut(d, false)
		})
	}
}

// searchBody is a doc search: text only, vector only, or both (hybrid).
type searchBody struct {
	Text           present[string]    `json:"text"`
	Vector         present[[]float32] `json:"vector"`
	Limit          present[int]       `json:"limit"`
	Confidence     present[float64]   `json:"confidence"`
	Alpha          present[float64]   `json:"alpha"`
	MMRStrength    present[float64]   `json:"mmr_strength"`
	MetadataFilter map[string]any     `json:"metadata_filter"`
}

// query is the search the body asks for, with Julep's defaults and ranges.
func (b searchBody) query(owners []events.DocOwner) (julepdocs.Query, error) {
	q := julepdocs.Query{Owners: owners, Text: b.Text.Value, Vector: b.Vector.Value, Limit: 10, Confidence: 0.5,
		Alpha: 0.5, MMRStrength: 0, MetadataFilter: b.MetadataFilter}
	hasText, hasVector := b.Text.ptr() != nil, len(b.Vector.Value) > 0
	switch {
	case hasText && hasVector:
		q.Mode = docindex.Hybrid
	case hasVector:
		q.Mode = docindex.Vector
	case hasText:
		q.Mode = docindex.Text
	default:
		return q, errs.InvalidField("text", "a doc search needs text, a vector, or both")
	}
	if v := b.Limit.ptr(); v != nil {
		if *v < 1 || *v > 50 {
			return q, errs.InvalidField("limit", "limit must be between 1 and 50")
		}
		q.Limit = *v
	}
	for _, p := range []struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float64
	}{{"confidence", b.Confidence.ptr(), -1, 1, &q.Confidence}, {"alpha", b.Alpha.ptr(), 0, 1, &q.Alpha},
		{"mmr_strength", b.MMRStrength.ptr(), 0, 0.999999, &q.MMRStrength}} {
		if p.v == nil {
			continue
		}
		if *p.v < p.lo || *p.v > p.hi {
			return q, errs.InvalidField(p.name, "%s must be between %v and %v", p.name, p.lo, p.hi)
		}
		*p.dst = *p.v
	}
	return q, nil
}

// docRef is Julep's DocReference.
type docRef struct {
	ID       string          `json:"id"`
	Owner    events.DocOwner `json:"owner"`
	Title    string          `json:"title"`
	Snippet  snippet         `json:"snippet"`
	Distance float64         `json:"distance"`
	Metadata json.RawMessage `json:"metadata"`
}

type snippet struct {
	Index   int    `json:"index"`
	Content string `json:"content"`
}

func refOut(r julepdocs.Ref) docRef {
	return docRef{ID: r.DocID, Owner: r.Owner, Title: r.Title, Snippet: snippet{Index: r.Index, Content: r.Snippet},
		Distance: r.Distance, Metadata: orObject(r.Metadata)}
}

func (f *Face) searchDocs(role string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		var b searchBody
		if _, err := f.readJSON(r, false, &b); err != nil {
			f.WriteError(w, r, err)
			return
		}
		q, err := b.query([]events.DocOwner{owner(r, role)})
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		refs, err := f.d.Docs.Search(r.Context(), principal(r), q)
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		out := make([]docRef, len(refs))
		for i, ref := range refs {
			out[i] = refOut(ref)
		}
		ok(w, map[string]any{"docs": out, "time": max(time.Since(start).Seconds(), 0.0001)})
	}
}

// embed is POST /embed: {text: string or list} → {vectors}.
func (f *Face) embed(w http.ResponseWriter, r *http.Request) {
	var b struct {
		Text json.RawMessage `json:"text"`
	}
	if _, err := f.readJSON(r, false, &b); err != nil {
		f.WriteError(w, r, err)
		return
	}
	texts := julep.ContentStrings(b.Text)
	if len(notNull(b.Text)) > 0 && len(texts) == 0 {
		f.WriteError(w, r, errs.InvalidField("text", "text must be a string or a list of strings"))
		return
	}
	vecs, err := f.d.Docs.Embed(r.Context(), texts)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	ok(w, map[string]any{"vectors": vecs})
}
