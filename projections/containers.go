package projections

import (
	"time"

	"github.com/contrailhq/contrail/events"
)

// ContainerView is a container as its listing needs it: which it is, its name (a listing's filter) and when it was
// made. Its status and last activity move with each use, and are read from the container itself (domain/container)
// for the page shown.
type ContainerView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Containers is the index of each account's containers: "<account>.<container_id>" -> Listed[ContainerView], Seq
// the creation's, so that a listing pages through one account's keys and never reads the log.
type Containers struct{}

// Name implements Projection.
func (Containers) Name() string { return "containers" }

// EventTypes implements Projection.
func (Containers) EventTypes() []string {
	return []string{"container.created", "container.deleted"}
}

// Apply implements Projection.
func (Containers) Apply(tx *Tx, e events.Envelope) error {
	key := OwnedKey(e.Account, e.AggregateID)
	switch d := e.Event.(type) {
	case events.ContainerCreated:
		return tx.Put(key, Listed[ContainerView]{Seq: e.Sequence, Obj: ContainerView{ID: e.AggregateID, Name: d.Name, CreatedAt: e.Time}})
	case events.ContainerDeleted:
		return tx.Delete(key)
	}
	return nil
}
