package projections

import (
	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
)

// Threads is the read model of threads: "<account>.<thread_id>" -> Listed[thread.ThreadView]. A deleted thread's
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
		return tx.Put(key, Listed[thread.ThreadView]{Seq: e.Sequence, Obj: thread.NewThreadView(e, d)})
	case events.ThreadModified:
		return Modify(tx, key, func(l *Listed[thread.ThreadView], exists bool) error {
			if !exists {
				return ErrSkip
			}
			thread.ApplyThread(&l.Obj, e)
			return nil
		})
	case events.ThreadDeleted:
		return tx.Delete(key)
	}
	return nil
}

// MessageKey is the document key of a message.
func MessageKey(account, threadID, messageID string) string {
	return account + "." + threadID + "." + messageID
}

// Messages is the read model of messages: "<account>.<thread_id>.<msg_id>" -> Listed[thread.ThreadMessageView].
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
			Listed[thread.ThreadMessageView]{Seq: e.Sequence, Obj: NewThreadMessageView(e, d)})
	case events.MessageModified:
		return Modify(tx, MessageKey(e.Account, e.AggregateID, d.MessageID), func(l *Listed[thread.ThreadMessageView], exists bool) error {
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
func NewThreadMessageView(e events.Envelope, d events.MessageCreated) thread.ThreadMessageView {
	return thread.ThreadMessageView{ID: d.MessageID, CreatedAt: e.Time, ThreadID: e.AggregateID, AssistantID: d.AssistantID,
		RunID: d.RunID, Status: d.Status, IncompleteReason: d.IncompleteReason, Role: d.Role, Content: d.Content,
		Attachments: d.Attachments, Metadata: d.Metadata}
}
