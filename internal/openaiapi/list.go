package openaiapi

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// listParams are a list request's pagination: limit, order and the after/before cursors (object IDs).
type listParams struct {
	limit  int
	desc   bool
	after  string
	before string
}

// parseList reads the pagination query of a list request.
func parseList(r *http.Request, defaultLimit, maxLimit int) (listParams, error) {
	q := r.URL.Query()
	p := listParams{limit: defaultLimit, desc: true, after: q.Get("after"), before: q.Get("before")}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			return p, errs.InvalidField("limit", "Invalid 'limit': expected an integer, but got '%s' instead.", s)
		}
		if n < 1 {
			return p, errs.InvalidField("limit", "Invalid 'limit': integer below minimum value. Expected a value >= 1, but got %d instead.", n)
		}
		if n > maxLimit {
			return p, errs.InvalidField("limit", "Invalid 'limit': integer above maximum value. Expected a value <= %d, but got %d instead.", maxLimit, n)
		}
		p.limit = n
	}
	switch o := q.Get("order"); o {
	case "", "desc":
	case "asc":
		p.desc = false
	default:
		return p, errs.InvalidField("order", "Invalid value: '%s'. Supported values are: 'asc' and 'desc'.", o)
	}
	return p, nil
}

// page is OpenAI's list object.
type page[T any] struct {
	Object  string  `json:"object"`
	Data    []T     `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// listed is an item of a list with what pagination needs: its ID and its place in creation order.
type listed[T any] struct {
	id  string
	seq uint64
	obj T
}

// paginate orders items by creation and cuts the page the parameters ask for. A cursor that names no item of
// the list gives an empty page.
func paginate[T any](items []listed[T], p listParams) page[T] {
	slices.SortFunc(items, func(a, b listed[T]) int {
		if p.desc {
			return cmp.Compare(b.seq, a.seq)
		}
		return cmp.Compare(a.seq, b.seq)
	})
	index := func(id string) int {
		return slices.IndexFunc(items, func(it listed[T]) bool { return it.id == id })
	}
	more := false
	if p.before != "" {
		i := index(p.before)
		if i < 0 {
			items = nil
		} else {
			items = items[:i]
		}
	}
	if p.after != "" {
		i := index(p.after)
		if i < 0 {
			items = nil
		} else {
			items = items[i+1:]
		}
	}
	if len(items) > p.limit {
		more = true
		if p.before != "" && p.after == "" {
			// The page just before the cursor: the items nearest to it.
			items = items[len(items)-p.limit:]
		} else {
			items = items[:p.limit]
		}
	}
	out := page[T]{Object: "list", Data: make([]T, 0, len(items)), HasMore: more}
	for _, it := range items {
		out.Data = append(out.Data, it.obj)
	}
	if n := len(items); n > 0 {
		first, last := items[0].id, items[n-1].id
		out.FirstID, out.LastID = &first, &last
	}
	return out
}

// listOwned answers a page of the caller's objects of a read model kept as Listed documents under
// "<account>.<id>", each as show maps it, newest first unless the request says otherwise.
func listOwned[T, W any](f *Face, w http.ResponseWriter, r *http.Request, model projections.Projection, id func(T) string,
	show func(T) W) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := f.d.Views.ListCaughtUp(r.Context(), model); err != nil {
		f.WriteError(w, r, err)
		return
	}
	docs, err := projections.ListAll[projections.Listed[T]](r.Context(), f.d.Views, model.Name(), principal(r).AccountID+".*")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[W], 0, len(docs))
	for _, d := range docs {
		items = append(items, listed[W]{id: id(d.Obj), seq: d.Seq, obj: show(d.Obj)})
	}
	writeJSON(w, paginate(items, p))
}
