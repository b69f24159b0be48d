package openaiapi

import (
	"context"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/domain/conversation"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
)

type principalT = auth.Principal

// ConversationCommands is what the face asks of the conversation commands (commands.Conversations).
type ConversationCommands interface {
	Create(ctx context.Context, actor auth.Principal, metadata map[string]string, items []events.Item) (string, eventstore.Appended, error)
	Get(ctx context.Context, account, id string, atLeast uint64) (conversation.State, error)
	Modify(ctx context.Context, actor auth.Principal, id string, metadata map[string]string) (eventstore.Appended, error)
	Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error)
	AddItems(ctx context.Context, actor auth.Principal, id string, items []events.Item) ([]events.Item, eventstore.Appended, error)
	DeleteItem(ctx context.Context, actor auth.Principal, id, itemID string) (eventstore.Appended, error)
}

func wireConversation(s *conversation.State) obj {
	md := map[string]string{}
	if s.Metadata != nil {
		md = s.Metadata
	}
	return obj{"id": s.ID, "object": "conversation", "created_at": s.CreatedAt.Unix(), "metadata": md}
}

// readConversationItems reads a request's items (at most 20); a compaction item among them is opened as in a
// response's input, so that a response of the conversation reads its summary.
func (f *Face) readConversationItems(r *http.Request, in fields) ([]events.Item, error) {
	raw, ok := in.m["items"]
	if !ok || in.null("items") {
		return nil, nil
	}
	items, err := readItems(raw, "items")
	if err != nil {
		return nil, err
	}
	if len(items) > conversation.MaxItemsPerAdd {
		return nil, errs.InvalidField("items", "Invalid 'items': array too long. Expected an array with maximum length %d, but got an array with length %d instead.", conversation.MaxItemsPerAdd, len(items))
	}
	return items, f.openCompactions(principal(r).AccountID, "items", items)
}

func (f *Face) createConversation(w http.ResponseWriter, r *http.Request) {
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	md, err := in.metadata("metadata")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items, err := f.readConversationItems(r, in)
	if err == nil {
		err = f.checkItemFiles(r, "items", items)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	id, app, err := f.d.Conversations.Create(r.Context(), principal(r), md, items)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerConversation(w, r, id, app.LastSeq())
}

func (f *Face) answerConversation(w http.ResponseWriter, r *http.Request, id string, at uint64) {
	s, err := f.d.Conversations.Get(r.Context(), principal(r).AccountID, id, at)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, wireConversation(&s))
}

func (f *Face) getConversation(w http.ResponseWriter, r *http.Request) {
	f.answerConversation(w, r, chi.URLParam(r, "conversation_id"), eventstore.Fresh)
}

func (f *Face) updateConversation(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "conversation_id")
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !in.has("metadata") {
		f.WriteError(w, r, errs.Missing("metadata"))
		return
	}
	md, err := in.metadata("metadata")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	app, err := f.d.Conversations.Modify(r.Context(), principal(r), id, md)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerConversation(w, r, id, app.LastSeq())
}

func (f *Face) deleteConversation(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "conversation_id")
	if _, err := f.d.Conversations.Delete(r.Context(), principal(r), id); err != nil {
		f.WriteError(w, r, err)
		return
	}
	writeJSON(w, deleted{ID: id, Object: "conversation.deleted", Deleted: true})
}

func (f *Face) createConversationItems(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "conversation_id")
	// include (a query parameter, as on the item reads) is checked before anything is added
	include, err := includeQuery(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	in, err := readFields(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if !in.has("items") {
		f.WriteError(w, r, errs.Missing("items"))
		return
	}
	items, err := f.readConversationItems(r, in)
	if err == nil {
		err = f.checkItemFiles(r, "items", items)
	}
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	added, _, err := f.d.Conversations.AddItems(r.Context(), principal(r), id, items)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	data := wireItems(added, include)
	out := page[obj]{Object: "list", Data: data}
	if n := len(added); n > 0 {
		first, last := added[0].ID, added[n-1].ID
		out.FirstID, out.LastID = &first, &last
	}
	writeJSON(w, out)
}

func (f *Face) listConversationItems(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	include, err := includeQuery(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Conversations.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "conversation_id"), eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	live := s.Live()
	items := make([]listed[obj], 0, len(live))
	for i, it := range live {
		items = append(items, listed[obj]{id: it.ID, seq: uint64(i), obj: wireItem(it, include)})
	}
	writeJSON(w, paginate(items, p))
}

func (f *Face) getConversationItem(w http.ResponseWriter, r *http.Request) {
	include, err := includeQuery(r)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	s, err := f.d.Conversations.Get(r.Context(), principal(r).AccountID, chi.URLParam(r, "conversation_id"), eventstore.Fresh)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	itemID := chi.URLParam(r, "item_id")
	it, ok := s.Find(itemID)
	if !ok {
		f.WriteError(w, r, errs.E(errs.NotFound, "Item with id '%s' not found.", itemID))
		return
	}
	writeJSON(w, wireItem(it.Item, include))
}

func (f *Face) deleteConversationItem(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "conversation_id")
	app, err := f.d.Conversations.DeleteItem(r.Context(), principal(r), id, chi.URLParam(r, "item_id"))
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	f.answerConversation(w, r, id, app.LastSeq())
}
