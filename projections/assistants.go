package projections

import (
	"encoding/json"

	"github.com/contrailhq/contrail/events"
)

// The read models of the OpenAI Assistants API (assistants, threads, messages, runs, run steps, files) store each
// object in the exact shape the API returns it, so a read is one Get and an encode. Keys put the owning account
// first, "<account>.<id>" (objects of a thread: "<account>.<thread>.<id>"), so that a lookup with the caller's
// account can only find the caller's objects, and a list is one filtered watch.

// Listed is a document of an object that lists show in creation order: the object and the stream sequence of the
// event that created it. (IDs are ULIDs too, but IDs derived from a cause share its millisecond, so the sequence
// is the order to trust.)
type Listed[T any] struct {
	Seq uint64 `json:"seq"`
	Obj T      `json:"obj"`
}

// AssistantObject is an assistant as the API shows it.
type AssistantObject struct {
	ID             string            `json:"id"`
	Object         string            `json:"object"`
	CreatedAt      int64             `json:"created_at"`
	Name           *string           `json:"name"`
	Description    *string           `json:"description"`
	Model          string            `json:"model"`
	Instructions   *string           `json:"instructions"`
	Tools          []events.Tool     `json:"tools"`
	ToolResources  json.RawMessage   `json:"tool_resources"`
	Metadata       map[string]string `json:"metadata"`
	Temperature    *float64          `json:"temperature"`
	TopP           *float64          `json:"top_p"`
	ResponseFormat json.RawMessage   `json:"response_format"`
}

// Assistants is the read model of assistants: "<account>.<asst_id>" -> Listed[AssistantObject].
type Assistants struct{}

// Name implements Projection.
func (Assistants) Name() string { return "assistants" }

// EventTypes implements Projection.
func (Assistants) EventTypes() []string { return []string{"assistant.*"} }

// OwnedKey is the document key of an object owned by an account directly (assistants, threads, files).
func OwnedKey(account, id string) string { return account + "." + id }

// Apply implements Projection.
func (Assistants) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.AssistantCreated:
		a := AssistantObject{ID: e.AggregateID, Object: "assistant", CreatedAt: e.Time.Unix()}
		setAssistantSpec(&a, d.AssistantSpec)
		return tx.Put(key, Listed[AssistantObject]{Seq: e.Sequence, Obj: a})
	case events.AssistantModified:
		return Modify(tx, key, func(l *Listed[AssistantObject], exists bool) error {
			if !exists {
				return ErrSkip
			}
			setAssistantSpec(&l.Obj, d.AssistantSpec)
			return nil
		})
	case events.AssistantDeleted:
		return tx.Delete(key)
	}
	return nil
}

// Defaults OpenAI shows for settings nobody set.
const (
	defaultSampling = 1.0
	autoJSON        = `"auto"`
	emptyObjectJSON = `{}`
)

func setAssistantSpec(a *AssistantObject, s events.AssistantSpec) {
	a.Model, a.Name, a.Description, a.Instructions = s.Model, s.Name, s.Description, s.Instructions
	a.Tools = nonNilTools(s.Tools)
	a.ToolResources = orJSON(s.ToolResources, emptyObjectJSON)
	a.Metadata = nonNilMap(s.Metadata)
	a.Temperature, a.TopP = orDefault(s.Temperature), orDefault(s.TopP)
	a.ResponseFormat = orJSON(s.ResponseFormat, autoJSON)
}

func nonNilTools(t []events.Tool) []events.Tool {
	if t == nil {
		return []events.Tool{}
	}
	return t
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func orJSON(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 || string(v) == "null" {
		return json.RawMessage(def)
	}
	return v
}

func orDefault(v *float64) *float64 {
	if v == nil {
		d := defaultSampling
		return &d
	}
	return v
}
