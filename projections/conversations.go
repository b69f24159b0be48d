package projections

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// ConversationView is a conversation as its listing needs it: which it is and when it was made. Its metadata and
// items move with every response, and are read from the conversation itself (domain/conversation) for the page
// shown.
type ConversationView struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
}

// Conversations is the index of each account's conversations: "<account>.<conversation_id>" ->
// Listed[ConversationView], Seq the creation's, so that a listing (GET /v1/conversations, which OpenAI does not
// have) pages through one account's keys and never reads the log. It is an index, not a view: it folds neither
// items nor metadata, so a response appending to a conversation never touches it.
type Conversations struct{}

// Name implements Projection.
func (Conversations) Name() string { return "conversations" }

// EventTypes implements Projection.
func (Conversations) EventTypes() []string {
	return []string{"conversation.created", "conversation.deleted"}
}

// Apply implements Projection.
func (Conversations) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch e.Event.(type) {
	case events.ConversationCreated:
		return tx.Put(key, Listed[ConversationView]{Seq: e.Sequence, Obj: ConversationView{ID: e.AggregateID, CreatedAt: e.Time}})
	case events.ConversationDeleted:
		return tx.Delete(key)
	}
	return nil
}
