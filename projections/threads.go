package projections

import (
	"encoding/json"
	"time"

	"github.com/contrailhq/contrail/events"
)

// ThreadView is a thread as the log made it; the Assistants face maps it to its wire object.
type ThreadView struct {
	ID            string            `json:"id"`
	CreatedAt     time.Time         `json:"created_at"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	ToolResources json.RawMessage   `json:"tool_resources,omitempty"`
}

// Threads is the read model of threads: "<account>.<thread_id>" -> Listed[ThreadView]. A deleted thread's
// messages and runs stay in their models, unreachable: every read of them checks the thread first.
type Threads struct{}

// Name implements Projection.
func (Threads) Name() string { return "threads" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (Threads) Version() int { return 2 }

// EventTypes implements Projection.
func (Threads) EventTypes() []string {
	return []string{"thread.created", "thread.modified", "thread.deleted"}
}

// Apply implements Projection.
func (Threads) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.ThreadCreated:
		return tx.Put(key, Listed[ThreadView]{Seq: e.Sequence, Obj: NewThreadView(e, d)})
	case events.ThreadModified:
		return Modify(tx, key, func(l *Listed[ThreadView], exists bool) error {
			if !exists {
				return ErrSkip
			}
			ApplyThread(&l.Obj, e)
			return nil
		})
	case events.ThreadDeleted:
		return tx.Delete(key)
	}
	return nil
}

// ApplyThread folds a change of a thread into its view: the fold the read model and a read from the log share.
func ApplyThread(v *ThreadView, e events.Envelope) {
	if d, ok := e.Event.(events.ThreadModified); ok {
		v.Metadata, v.ToolResources = d.Metadata, d.ToolResources
	}
}

// NewThreadView is the thread a ThreadCreated event makes.
func NewThreadView(e events.Envelope, d events.ThreadCreated) ThreadView {
	return ThreadView{ID: e.AggregateID, CreatedAt: e.Time, Metadata: d.Metadata, ToolResources: d.ToolResources}
}

// ThreadMessageView is a thread's message as the log made it; the Assistants face maps it to its wire object. A message is
// recorded whole: its status is completed or incomplete from the start.
type ThreadMessageView struct {
	ID               string               `json:"id"`
	CreatedAt        time.Time            `json:"created_at"`
	ThreadID         string               `json:"thread_id"`
	AssistantID      string               `json:"assistant_id,omitempty"`
	RunID            string               `json:"run_id,omitempty"`
	Status           string               `json:"status"`
	IncompleteReason string               `json:"incomplete_reason,omitempty"`
	Role             string               `json:"role"`
	Content          []events.ContentPart `json:"content"`
	Attachments      json.RawMessage      `json:"attachments,omitempty"`
	Metadata         map[string]string    `json:"metadata,omitempty"`
}

// MessageKey is the document key of a message.
func MessageKey(account, threadID, messageID string) string {
	return account + "." + threadID + "." + messageID
}

// Messages is the read model of messages: "<account>.<thread_id>.<msg_id>" -> Listed[ThreadMessageView].
type Messages struct{}

// Name implements Projection.
func (Messages) Name() string { return "messages" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (Messages) Version() int { return 2 }

// EventTypes implements Projection.
func (Messages) EventTypes() []string {
	return []string{"thread.message_created", "thread.message_modified", "thread.message_deleted"}
}

// Apply implements Projection.
func (Messages) Apply(tx *Tx, e events.Envelope) error {
	switch d := e.Event.(type) {
	case events.MessageCreated:
		return tx.Put(MessageKey(e.Account, e.AggregateID, d.MessageID),
			Listed[ThreadMessageView]{Seq: e.Sequence, Obj: NewThreadMessageView(e, d)})
	case events.MessageModified:
		return Modify(tx, MessageKey(e.Account, e.AggregateID, d.MessageID), func(l *Listed[ThreadMessageView], exists bool) error {
			if !exists {
				return ErrSkip
			}
			l.Obj.Metadata = d.Metadata
			return nil
		})
	case events.MessageDeleted:
		return tx.Delete(MessageKey(e.Account, e.AggregateID, d.MessageID))
	}
	return nil
}

// NewThreadMessageView is the message a MessageCreated event makes.
func NewThreadMessageView(e events.Envelope, d events.MessageCreated) ThreadMessageView {
	return ThreadMessageView{ID: d.MessageID, CreatedAt: e.Time, ThreadID: e.AggregateID, AssistantID: d.AssistantID,
		RunID: d.RunID, Status: d.Status, IncompleteReason: d.IncompleteReason, Role: d.Role, Content: d.Content,
		Attachments: d.Attachments, Metadata: d.Metadata}
}
