// Package assistant is the assistant aggregate of the Assistants API: its state and the one fold of its events.
//
// It imports events only.
package assistant

import "github.com/contrailhq/contrail/events"

// State is an assistant rebuilt from its events.
type State struct {
	ID      string
	Account string
	Exists  bool
	Deleted bool
	Spec    events.AssistantSpec
}

// Apply folds one event: the only fold of assistant events.
func (a *State) Apply(e events.Envelope) {
	switch d := e.Event.(type) {
	case events.AssistantCreated:
		a.ID, a.Account, a.Exists, a.Spec = e.AggregateID, e.Account, true, d.AssistantSpec
	case events.AssistantModified:
		a.Spec = d.AssistantSpec
	case events.AssistantDeleted:
		a.Deleted = true
	}
}

// Owned reports whether the assistant exists, is not deleted and is account's.
func (a *State) Owned(account string) bool {
	return a.Exists && !a.Deleted && a.Account == account
}
