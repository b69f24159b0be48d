package openaiapi

import (
	"net/http"
	"strings"

	"github.com/contrailhq/contrail/domain/conversation"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/projections"
)

// previewWords and previewChars bound a listed conversation's preview: enough to tell conversations apart.
const (
	previewWords = 12
	previewChars = 100
)

// listConversations is GET /v1/conversations, a Contrail extension: OpenAI has no way to list conversations, and
// a client that keeps its session as one (the Agents SDK's OpenAIConversationsSession) leaves nothing else to find
// it by. It pages through the caller's index of conversations (projections.Conversations), newest first unless
// asked, and reads only the conversations on the page, for their metadata and their preview (the first words of
// the first user message still there), which move with every response and which the index does not follow.
func (f *Face) listConversations(w http.ResponseWriter, r *http.Request) {
	p, err := parseList(r, 20, 100)
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	if err := onlyQuery(r, "'after', 'before', 'limit' and 'order'", "after", "before", "limit", "order"); err != nil {
		f.WriteError(w, r, err)
		return
	}
	// The create answers before the index shows it (conversations.go does not wait on it): waiting here for the
	// log's last creation lists the conversation a client just made; an index still behind past the wait is a
	// 503, not a listing without it (projections.Runner.ListCaughtUp).
	if err := f.d.Views.ListCaughtUp(r.Context(), projections.Conversations{}); err != nil {
		f.WriteError(w, r, err)
		return
	}
	account := principal(r).AccountID
	docs, err := projections.ListAll[projections.Listed[projections.ConversationView]](r.Context(), f.d.Views,
		projections.Conversations{}.Name(), account+".*")
	if err != nil {
		f.WriteError(w, r, err)
		return
	}
	items := make([]listed[string], 0, len(docs))
	for _, d := range docs {
		items = append(items, listed[string]{id: d.Obj.ID, seq: d.Seq, obj: d.Obj.ID})
	}
	ids := paginate(items, p)
	out := page[obj]{Object: ids.Object, Data: make([]obj, 0, len(ids.Data)), FirstID: ids.FirstID, LastID: ids.LastID, HasMore: ids.HasMore}
	for _, id := range ids.Data {
		s, err := f.d.Conversations.Get(r.Context(), account, id, eventstore.Fresh)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since the index was read
		}
		if err != nil {
			f.WriteError(w, r, err)
			return
		}
		c := wireConversation(&s)
		c["preview"] = conversationPreview(&s)
		out.Data = append(out.Data, c)
	}
	writeJSON(w, out)
}

// conversationPreview is the first words of the conversation's first user message (its text parts), "" when it
// has none.
func conversationPreview(s *conversation.State) string {
	for _, it := range s.Live() {
		if it.Type != "message" || it.Role != "user" {
			continue
		}
		words := strings.Fields(it.Text())
		if len(words) == 0 {
			continue
		}
		clipped := len(words) > previewWords
		text := strings.Join(words[:min(len(words), previewWords)], " ")
		if r := []rune(text); len(r) > previewChars {
			text, clipped = string(r[:previewChars]), true
		}
		if clipped {
			text += "…"
		}
		return text
	}
	return ""
}
