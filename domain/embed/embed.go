// Package embed is the embed aggregate of the Fixie API: bytes a client uploaded, named by their hash; its state
// and the one fold of its events.
//
// It imports events only.
package embed

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// State is an embed rebuilt from its events.
type State struct {
	ID          string
	Account     string
	ContentType string
	ContentHash string
	Size        int64
	Object      string
	Filename    string
	Created     time.Time
	Exists      bool
}

// Apply folds one event: the only fold of embed events.
func (e *State) Apply(env events.Envelope) {
	if d, ok := env.Event.(events.EmbedUploaded); ok && !e.Exists {
		*e = State{ID: env.AggregateID, Account: env.Account, ContentType: d.ContentType, ContentHash: d.ContentHash,
			Size: d.Size, Object: d.Object, Filename: d.Filename, Created: env.Time, Exists: true}
	}
}
