// Package conversation is the conversation aggregate of the Conversations API: its metadata and its items, in
// order. Responses that name a conversation read its items first and, once they complete, append their input
// and output to it (a decision made here, once per response).
//
// It imports events and errs only.
package conversation

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// MaxItemsPerAdd bounds the items one request adds, as OpenAI does.
const MaxItemsPerAdd = 20

// State is a conversation rebuilt from its events.
type State struct {
	ID        string
	Account   string
	Exists    bool
	Deleted   bool
	CreatedAt time.Time
	Metadata  map[string]string
	Items     []*Item
	// index finds an item by ID.
	index map[string]*Item
	// Responses are the responses whose items were appended.
	Responses map[string]bool
	Seq       uint64
}

// Item is an item of the conversation.
type Item struct {
	events.Item
	Seq     uint64
	Deleted bool
}

// Clone copies the state; items are replaced, never changed in place, so they are shared.
func (s *State) Clone() State {
	out := *s
	out.Items = slices.Clip(s.Items)
	out.index = maps.Clone(s.index)
	out.Responses = maps.Clone(s.Responses)
	return out
}

// Apply folds one event.
func (s *State) Apply(e events.Envelope) {
	s.Seq = e.Sequence
	switch d := e.Event.(type) {
	case events.ConversationCreated:
		s.ID, s.Account, s.Exists, s.CreatedAt, s.Metadata = e.AggregateID, e.Account, true, e.Time, d.Metadata
		s.index, s.Responses = map[string]*Item{}, map[string]bool{}
	case events.ConversationModified:
		s.Metadata = d.Metadata
	case events.ConversationDeleted:
		s.Deleted = true
	case events.ConversationItemsAdded:
		for _, it := range d.Items {
			item := &Item{Item: it, Seq: e.Sequence}
			s.Items = append(s.Items, item)
			s.index[it.ID] = item
		}
		if d.ResponseID != "" {
			s.Responses[d.ResponseID] = true
		}
	case events.ConversationItemDeleted:
		if it := s.index[d.ItemID]; it != nil {
			c := *it
			c.Deleted = true
			s.index[d.ItemID] = &c
			for i, x := range s.Items {
				if x == it {
					s.Items = slices.Clone(s.Items)
					s.Items[i] = &c
					break
				}
			}
		}
	}
}

// Owned reports whether the conversation exists, is not deleted and is account's.
func (s *State) Owned(account string) bool {
	return s.Exists && !s.Deleted && s.Account == account
}

// Live lists the items not deleted, in order.
func (s *State) Live() []events.Item {
	out := make([]events.Item, 0, len(s.Items))
	for _, it := range s.Items {
		if !it.Deleted {
			out = append(out, it.Item)
		}
	}
	return out
}

// Find returns a live item by ID.
func (s *State) Find(id string) (*Item, bool) {
	it := s.index[id]
	if it == nil || it.Deleted {
		return nil, false
	}
	return it, true
}

// Create is what a client's conversations.create records: the conversation with its first items, which are
// checked as Add checks a client's items (checkItems).
func Create(metadata map[string]string, items []events.Item) ([]events.Event, error) {
	if err := checkItems(&State{}, items); err != nil {
		return nil, err
	}
	evs := []events.Event{events.ConversationCreated{Metadata: metadata}}
	if len(items) > 0 {
		evs = append(evs, events.ConversationItemsAdded{Items: items})
	}
	return evs, nil
}

// Add is what a client's items.create records.
func Add(s *State, account string, items []events.Item) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("conversation", s.ID)
	}
	if err := checkItems(s, items); err != nil {
		return nil, err
	}
	return []events.Event{events.ConversationItemsAdded{Items: items}}, nil
}

// checkItems is the one rule for the items a client adds to s, at its creation or after: at most MaxItemsPerAdd,
// none with the ID of an item s holds, no two with one ID (Distinct).
func checkItems(s *State, items []events.Item) error {
	if len(items) > MaxItemsPerAdd {
		return errs.InvalidField("items", "at most %d items can be added at a time, got %d", MaxItemsPerAdd, len(items))
	}
	for i, it := range items {
		if _, ok := s.index[it.ID]; ok {
			return errs.InvalidField("items", "items[%d]: an item with id '%s' is already in the conversation", i, it.ID)
		}
	}
	return Distinct(items)
}

// Distinct refuses items of which two carry the same ID: the second would hide the first, which could then be
// neither retrieved nor deleted.
func Distinct(items []events.Item) error {
	seen := make(map[string]int, len(items))
	for i, it := range items {
		if it.ID == "" {
			continue
		}
		if j, ok := seen[it.ID]; ok {
			return errs.InvalidField(fmt.Sprintf("items[%d].id", i), "items[%d] has the id '%s' of items[%d]", i, it.ID, j)
		}
		seen[it.ID] = i
	}
	return nil
}

// AddResponse is what a completed response appends: its input and output items, once. Items whose IDs the
// conversation holds already (an Agents SDK re-sending earlier output) are not added again.
func AddResponse(s *State, responseID string, items []events.Item) []events.Event {
	if !s.Exists || s.Deleted || s.Responses[responseID] {
		return nil
	}
	var add []events.Item
	added := map[string]bool{}
	for _, it := range items {
		if _, ok := s.index[it.ID]; (ok || added[it.ID]) && it.ID != "" {
			continue
		}
		added[it.ID] = true
		add = append(add, it)
	}
	return []events.Event{events.WithID(events.DeriveID(responseID, "conversation-items"),
		events.ConversationItemsAdded{Items: add, ResponseID: responseID})}
}

// DeleteItem is what deleting one item records.
func DeleteItem(s *State, account, itemID string) ([]events.Event, error) {
	if !s.Owned(account) {
		return nil, errs.NotFoundf("conversation", s.ID)
	}
	if _, ok := s.Find(itemID); !ok {
		return nil, errs.NotFoundf("item", itemID)
	}
	return []events.Event{events.ConversationItemDeleted{ItemID: itemID}}, nil
}
