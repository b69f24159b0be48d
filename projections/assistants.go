package projections

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// The read models of the OpenAI Assistants API (assistants, threads, messages, runs, run steps, files). Assistants,
// threads and runs keep what the log made (views: times as times, unset options nil) and the face maps them to the
// API's objects; messages, run steps and files still store the API's object itself. Keys put the owning account
// first, "<account>.<id>" (objects of a thread: "<account>.<thread>.<id>"), so that a lookup with the caller's
// account can only find the caller's objects, and a list is one filtered watch.

// Listed is a document of an object that lists show in creation order: the object and the stream sequence of the
// event that created it. (IDs are ULIDs too, but IDs derived from a cause share its millisecond, so the sequence
// is the order to trust.)
type Listed[T any] struct {
	Seq uint64 `json:"seq"`
	Obj T      `json:"obj"`
}

// AssistantView is an assistant as the log made it: its settings as last given. The Assistants face maps it to its
// wire object.
type AssistantView struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	events.AssistantSpec
}

// Assistants is the read model of assistants: "<account>.<asst_id>" -> Listed[AssistantView].
type Assistants struct{}

// Name implements Projection.
func (Assistants) Name() string { return "assistants" }

// Version implements Versioned: version 1 stored the Assistants API's wire object.
func (Assistants) Version() int { return 2 }

// EventTypes implements Projection.
func (Assistants) EventTypes() []string { return []string{"assistant.*"} }

// OwnedKey is the document key of an object owned by an account directly (assistants, threads, files).
func OwnedKey(account, id string) string { return account + "." + id }

// Apply implements Projection.
func (Assistants) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.AssistantCreated:
		a := AssistantView{ID: e.AggregateID, CreatedAt: e.Time, AssistantSpec: d.AssistantSpec}
		return tx.Put(key, Listed[AssistantView]{Seq: e.Sequence, Obj: a})
	case events.AssistantModified:
		return Modify(tx, key, func(l *Listed[AssistantView], exists bool) error {
			if !exists {
				return ErrSkip
			}
			l.Obj.AssistantSpec = d.AssistantSpec
			return nil
		})
	case events.AssistantDeleted:
		return tx.Delete(key)
	}
	return nil
}
