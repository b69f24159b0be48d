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

// MessageObject is a message as the API shows it.
type MessageObject struct {
	ID                string             `json:"id"`
	Object            string             `json:"object"`
	CreatedAt         int64              `json:"created_at"`
	AssistantID       *string            `json:"assistant_id"`
	ThreadID          string             `json:"thread_id"`
	RunID             *string            `json:"run_id"`
	Status            string             `json:"status"`
	IncompleteDetails *IncompleteDetails `json:"incomplete_details"`
	CompletedAt       *int64             `json:"completed_at"`
	IncompleteAt      *int64             `json:"incomplete_at"`
	Role              string             `json:"role"`
	Content           []MessageContent   `json:"content"`
	Attachments       json.RawMessage    `json:"attachments"`
	Metadata          map[string]string  `json:"metadata"`
}

// IncompleteDetails says why a message or a run stopped short.
type IncompleteDetails struct {
	Reason string `json:"reason"`
}

// MessageContent is one part of a message's content.
type MessageContent struct {
	Type      string            `json:"type"`
	Text      *TextContent      `json:"text,omitempty"`
	ImageFile *events.ImageFile `json:"image_file,omitempty"`
	ImageURL  *events.ImageURL  `json:"image_url,omitempty"`
}

// TextContent is text with its annotations (file citations; the list is always there).
type TextContent struct {
	Value       string            `json:"value"`
	Annotations []json.RawMessage `json:"annotations"`
}

// MessageKey is the document key of a message.
func MessageKey(account, threadID, messageID string) string {
	return account + "." + threadID + "." + messageID
}

// Messages is the read model of messages: "<account>.<thread_id>.<msg_id>" -> Listed[MessageObject].
type Messages struct{}

// Name implements Projection.
func (Messages) Name() string { return "messages" }

// EventTypes implements Projection.
func (Messages) EventTypes() []string {
	return []string{"thread.message_created", "thread.message_modified", "thread.message_deleted"}
}

// Apply implements Projection.
func (Messages) Apply(tx *Tx, e events.Envelope) error {
	switch d := e.Event.(type) {
	case events.MessageCreated:
		return tx.Put(MessageKey(e.Account, e.AggregateID, d.MessageID),
			Listed[MessageObject]{Seq: e.Sequence, Obj: NewMessageObject(e, d)})
	case events.MessageModified:
		return Modify(tx, MessageKey(e.Account, e.AggregateID, d.MessageID), func(l *Listed[MessageObject], exists bool) error {
			if !exists {
				return ErrSkip
			}
			l.Obj.Metadata = nonNilMap(d.Metadata)
			return nil
		})
	case events.MessageDeleted:
		return tx.Delete(MessageKey(e.Account, e.AggregateID, d.MessageID))
	}
	return nil
}

// NewMessageObject is the message a MessageCreated event makes.
func NewMessageObject(e events.Envelope, d events.MessageCreated) MessageObject {
	at := e.Time.Unix()
	m := MessageObject{
		ID: d.MessageID, Object: "thread.message", CreatedAt: at, ThreadID: e.AggregateID,
		AssistantID: optional(d.AssistantID), RunID: optional(d.RunID), Status: d.Status, Role: d.Role,
		Content: MessageContents(d.Content), Attachments: orJSON(d.Attachments, `[]`), Metadata: nonNilMap(d.Metadata),
	}
	if d.Status == events.MessageStatusIncomplete {
		m.IncompleteAt = &at
		m.IncompleteDetails = &IncompleteDetails{Reason: d.IncompleteReason}
	} else {
		m.CompletedAt = &at
	}
	return m
}

// annotation renders an annotation as OpenAI's file_citation or file_path object.
func annotation(a events.Annotation) json.RawMessage {
	file := map[string]string{"file_id": a.FileID}
	raw, _ := json.Marshal(map[string]any{"type": a.Type, "text": a.Text, "start_index": a.StartIndex, "end_index": a.EndIndex,
		a.Type: file})
	return raw
}

// MessageContents renders stored content parts as the API shows them.
func MessageContents(parts []events.ContentPart) []MessageContent {
	out := make([]MessageContent, 0, len(parts))
	for _, p := range parts {
		c := MessageContent{Type: p.Type, ImageFile: p.ImageFile, ImageURL: p.ImageURL}
		if p.Type == "text" {
			c.Text = &TextContent{Value: p.Text, Annotations: []json.RawMessage{}}
			for _, a := range p.Annotations {
				c.Text.Annotations = append(c.Text.Annotations, annotation(a))
			}
		}
		out = append(out, c)
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
