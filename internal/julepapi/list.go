package julepapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/docindex"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// listParams are Julep's list parameters: limit (1-999, default 100), offset, sort_by (created_at, updated_at),
// direction (asc, desc) and metadata_filter (a JSON object of values the metadata must equal, or
// metadata_filter[key]=value pairs).
type listParams struct {
	limit, offset int
	byUpdated     bool
	desc          bool
	filter        *docindex.Filter
}

func parseList(r *http.Request) (listParams, error) {
	q := r.URL.Query()
	p := listParams{limit: 100}
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
	filter := map[string]any{}
	if s := q.Get("metadata_filter"); s != "" {
		if err := json.Unmarshal([]byte(s), &filter); err != nil {
			return p, errs.InvalidField("metadata_filter", "metadata_filter must be a JSON object")
		}
	}
	for k, vs := range q {
		if key, found := strings.CutPrefix(k, "metadata_filter["); found && strings.HasSuffix(key, "]") && len(vs) > 0 {
			var v any
			if json.Unmarshal([]byte(vs[0]), &v) != nil {
				v = vs[0] // a bare string
			}
			filter[strings.TrimSuffix(key, "]")] = v
		}
	}
	p.filter = docindex.MetadataFilter(filter)
	return p, nil
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
func listFrom[T any](f *Face, w http.ResponseWriter, r *http.Request, model, filter string, item func(T) (listItem, any)) {
	listWhere(f, w, r, model, filter, func(v T) (listItem, any, bool) {
		it, out := item(v)
		return it, out, true
	})
}

// listWhere is listFrom for the documents keep says to keep (those of one agent, one task).
func listWhere[T any](f *Face, w http.ResponseWriter, r *http.Request, model, filter string, keep func(T) (listItem, any, bool)) {
	p, err := parseList(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.caughtUp(r.Context(), model); err != nil {
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

// caughtUp waits (briefly) until the read model has applied the log's last event of the kinds it folds.
func (f *Face) caughtUp(ctx context.Context, model string) error {
	stream, err := f.d.JS.Stream(ctx, f.d.Names.EventsStream())
	if err != nil {
		return err
	}
	var last uint64
	for _, t := range models[model].EventTypes() {
		m, err := stream.GetLastMsgForSubject(ctx, f.d.Names.TypeFilter(t))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		last = max(last, m.Sequence)
	}
	if last == 0 {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := f.d.Views.WaitFor(wctx, model, last); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}
