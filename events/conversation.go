package events

// Conversation events (the OpenAI Conversations API): a conversation is an ordered list of items that responses
// read first and append their input and output to once they complete.

// ConversationCreated opens a conversation; its first items follow as ConversationItemsAdded.
type ConversationCreated struct {
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (ConversationCreated) EventType() string { return "conversation.created" }

// ConversationModified replaces the conversation's metadata.
type ConversationModified struct {
	Metadata map[string]string `json:"metadata,omitempty"`
}

func (ConversationModified) EventType() string { return "conversation.modified" }

// ConversationDeleted deletes a conversation with its items.
type ConversationDeleted struct{}

func (ConversationDeleted) EventType() string { return "conversation.deleted" }

// ConversationItemsAdded appends items: a client's, or a completed response's input and output (ResponseID).
type ConversationItemsAdded struct {
	Items      []Item `json:"items"`
	ResponseID string `json:"response_id,omitempty"`
}

func (ConversationItemsAdded) EventType() string { return "conversation.items_added" }

// ConversationItemDeleted removes one item.
type ConversationItemDeleted struct {
	ItemID string `json:"item_id"`
}

func (ConversationItemDeleted) EventType() string { return "conversation.item_deleted" }

func conversationEvents() []Event {
	return []Event{ConversationCreated{}, ConversationModified{}, ConversationDeleted{}, ConversationItemsAdded{},
		ConversationItemDeleted{}}
}
