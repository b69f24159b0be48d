package projections

import "github.com/contrailhq/contrail/events"

// VectorStores is the read model that lists an account's vector stores: "<account>.<store>" -> Listed[store ID],
// with the sequence of the store's creation for ordering. A list reads each store of its page from the log; the
// model holds no more than the list needs, because a store's files (up to 10,000) would not fit one document.
type VectorStores struct{}

// VectorStoresModel names the read model.
const VectorStoresModel = "vector_stores"

// Name implements Projection.
func (VectorStores) Name() string { return VectorStoresModel }

// EventTypes implements Projection.
func (VectorStores) EventTypes() []string { return []string{"vstore.created", "vstore.deleted"} }

// Apply implements Projection.
func (VectorStores) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch e.Event.(type) {
	case events.VectorStoreCreated:
		return tx.Put(key, Listed[string]{Seq: e.Sequence, Obj: e.AggregateID})
	case events.VectorStoreDeleted:
		return tx.Delete(key)
	}
	return nil
}
