package julepapi

import (
	"cmp"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// listParams are Julep's list parameters: limit (1-999, default 100), offset, sort_by (created_at, updated_at),
// direction (asc, desc) and, on lists of objects with metadata, metadata_filter: the values the metadata must equal,
// as a JSON object (metadata_filter={"k":"v"}), as metadata_filter[k]=v pairs, or as metadata_filter.k=v pairs (the
// dot notation @julep/sdk's query encoder writes, and Julep's own server reads).
type listParams struct {
	limit, offset int
	byUpdated     bool
	desc          bool
	filter        *docindex.Filter
}

// withMetadata is what a list of objects with metadata takes beyond paging.
var withMetadata = []string{"metadata_filter"}

// pagingParams are the list parameters every list takes.
var pagingParams = []string{"limit", "offset", "sort_by", "direction"}

// parseList reads a list's parameters. accepts names the other query parameters the route reads ("metadata_filter",
// "include_embeddings", "scope_id"); any other parameter is refused with a 400 naming it, because a filter the
// server silently drops answers a list the client did not ask for.
func parseList(r *http.Request, accepts ...string) (listParams, error) {
	q := r.URL.Query()
	p := listParams{limit: 100}
	metadata := slices.Contains(accepts, "metadata_filter")
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if slices.Contains(pagingParams, k) || slices.Contains(accepts, k) {
			continue
		}
		if _, ok := metadataKey(k); ok && metadata {
			continue
		}
		known := append(slices.Clone(pagingParams), accepts...)
		return p, badRequest{errs.InvalidField(k, "query parameter %q is not understood here; this list takes %s",
			k, strings.Join(known, ", "))}
	}
	num := func(name string, lo, hi int, dst *int) error {
		s := q.Get(name)
		if s == "" {
			return nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return errs.InvalidField(name, "%s must be an integer from %d to %d", name, lo, hi)
		}
		*dst = n
		return nil
	}
	if err := num("limit", 1, 999, &p.limit); err != nil {
		return p, err
	}
	if err := num("offset", 0, 1<<31-1, &p.offset); err != nil {
		return p, err
	}
	switch q.Get("sort_by") {
	case "", "created_at":
	case "updated_at":
		p.byUpdated = true
	default:
		return p, errs.InvalidField("sort_by", "sort_by must be created_at or updated_at")
	}
	switch q.Get("direction") {
	case "", "asc":
	case "desc":
		p.desc = true
	default:
		return p, errs.InvalidField("direction", "direction must be asc or desc")
	}
	if !metadata {
		return p, nil
	}
	filter := map[string]any{}
	if s := q.Get("metadata_filter"); s != "" {
		if err := json.Unmarshal([]byte(s), &filter); err != nil {
			return p, errs.InvalidField("metadata_filter", "metadata_filter must be a JSON object")
		}
	}
	var pairs []docindex.Filter
	for k, vs := range q {
		key, ok := metadataKey(k)
		if !ok || len(vs) == 0 {
			continue
		}
		if key == "" {
			return p, errs.InvalidField(k, "%s names no metadata key", k)
		}
		pairs = append(pairs, queryValue(key, vs[0]))
	}
	f := docindex.MetadataFilter(filter)
	if len(pairs) > 0 {
		if f == nil {
			f = &docindex.Filter{Type: "and"}
		}
		f.Filters = append(f.Filters, pairs...)
	}
	p.filter = f
	return p, nil
}

// metadataKey is the metadata key a query parameter filters on: k of metadata_filter[k] or metadata_filter.k. A
// dotted key stays whole ("metadata_filter.a.b" filters on the key "a.b"), as in Julep's server.
func metadataKey(param string) (string, bool) {
	if key, ok := strings.CutPrefix(param, "metadata_filter."); ok {
		return key, true
	}
	if key, ok := strings.CutPrefix(param, "metadata_filter["); ok && strings.HasSuffix(key, "]") {
		return strings.TrimSuffix(key, "]"), true
	}
	return "", false
}

// queryValue is the comparison of one metadata_filter pair. A query string carries no types, and the SDK writes 1,
// true and "1" alike, so a value that reads as JSON matches either that JSON value or the text itself.
func queryValue(key, s string) docindex.Filter {
	text := docindex.Filter{Type: "eq", Key: key, Value: s}
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return text
	}
	if _, isText := v.(string); isText {
		return docindex.Filter{Type: "eq", Key: key, Value: v}
	}
	return docindex.Filter{Type: "or", Filters: []docindex.Filter{text, {Type: "eq", Key: key, Value: v}}}
}

// listItem is what a list sorts and filters an item by.
type listItem struct {
	created, updated time.Time
	metadata         json.RawMessage
}

// listed is an item of a list and what it answers.
type listed struct {
	item listItem
	out  any
}

// page filters, sorts and cuts the items as the parameters say: Julep's {"items": [...]}.
func (p listParams) page(items []listed) map[string]any {
	kept := items[:0]
	for _, it := range items {
		if p.filter == nil || p.filter.Match(attributes(it.item.metadata)) {
			kept = append(kept, it)
		}
	}
	slices.SortStableFunc(kept, func(a, b listed) int {
		ta, tb := a.item.created, b.item.created
		if p.byUpdated {
			ta, tb = a.item.updated, b.item.updated
		}
		c := cmp.Compare(ta.UnixNano(), tb.UnixNano())
		if p.desc {
			c = -c
		}
		return c
	})
	out := make([]any, 0, p.limit)
	for i := p.offset; i < len(kept) && len(out) < p.limit; i++ {
		out = append(out, kept[i].out)
	}
	return map[string]any{"items": out}
}

func attributes(raw json.RawMessage) map[string]any {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// listFrom answers a page of a read model's documents under filter, once the read model shows every write made
// before the request (a client lists what it just made).
func listFrom[T any](f *Face, w http.ResponseWriter, r *http.Request, model, filter string, accepts []string, item func(T) (listItem, any)) {
	listWhere(f, w, r, model, filter, accepts, func(v T) (listItem, any, bool) {
		it, out := item(v)
		return it, out, true
	})
}

// listWhere is listFrom for the documents keep says to keep (those of one agent, one task).
// accepts is what the route takes beyond paging (parseList).
func listWhere[T any](f *Face, w http.ResponseWriter, r *http.Request, model, filter string, accepts []string, keep func(T) (listItem, any, bool)) {
	p, err := parseList(r, accepts...)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.d.Views.ListCaughtUp(r.Context(), models[model]); err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, err := projections.ListAll[T](r.Context(), f.d.Views, model, filter)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed, 0, len(docs))
	for _, d := range docs {
		if it, out, ok := keep(d); ok {
			items = append(items, listed{item: it, out: out})
		}
	}
	ok(w, p.page(items))
}

// models are the Julep read models, by name.
var models = map[string]projections.Projection{
	projections.JulepAgentsModel:   projections.JulepAgents{},
	projections.JulepUsersModel:    projections.JulepUsers{},
	projections.JulepDocsModel:     projections.JulepDocs{},
	projections.JulepSessionsModel: projections.JulepSessions{},
	projections.JulepTasksModel:    projections.JulepTasks{},
	projections.ExecutionsModel:    projections.Executions{},
}
