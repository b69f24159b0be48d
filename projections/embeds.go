package projections

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// Embeds is the read model of uploaded embeds, per account:
//
//	<account>.<embed id> -> EmbedView
type Embeds struct{}

// EmbedView is an uploaded embed.
type EmbedView struct {
	ID          string    `json:"id"`
	Account     string    `json:"account"`
	ContentType string    `json:"content_type"`
	ContentHash string    `json:"content_hash"`
	Size        int64     `json:"size"`
	Object      string    `json:"object"`
	Filename    string    `json:"filename,omitempty"`
	Created     time.Time `json:"created"`
}

// Name implements Projection.
func (Embeds) Name() string { return "embeds" }

// EventTypes implements Projection.
func (Embeds) EventTypes() []string { return []string{"embed.*"} }

// EmbedKey is where an account's embed is.
func EmbedKey(account, id string) string { return account + "." + id }

// Apply implements Projection.
func (Embeds) Apply(tx *Tx, e events.Envelope) error {
	if d, ok := e.Event.(events.EmbedUploaded); ok {
		return tx.Put(EmbedKey(e.Account, e.AggregateID), EmbedView{ID: e.AggregateID, Account: e.Account,
			ContentType: d.ContentType, ContentHash: d.ContentHash, Size: d.Size, Object: d.Object,
			Filename: d.Filename, Created: e.Time})
	}
	return nil
}
