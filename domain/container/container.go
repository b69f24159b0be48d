// Package container is the container aggregate: where a response's code_interpreter runs, and the files it holds.
//
// It imports events and errs only.
package container

import (
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
)

// State is a container rebuilt from its events.
type State struct {
	ID         string
	Account    string
	Exists     bool
	Deleted    bool
	Name       string
	ResponseID string
	CreatedAt  time.Time
	Files      []File
	Seq        uint64
}

// File is a file of the container.
type File struct {
	events.ContainerFileAdded
	CreatedAt time.Time
}

// Clone copies the state.
func (s *State) Clone() State {
	out := *s
	out.Files = slices.Clip(s.Files)
	return out
}

// Apply folds one event.
func (s *State) Apply(e events.Envelope) {
	s.Seq = e.Sequence
	switch d := e.Event.(type) {
	case events.ContainerCreated:
		s.ID, s.Account, s.Exists, s.Name, s.ResponseID, s.CreatedAt = e.AggregateID, e.Account, true, d.Name, d.ResponseID, e.Time
	case events.ContainerFileAdded:
		s.Files = append(s.Files, File{ContainerFileAdded: d, CreatedAt: e.Time})
	case events.ContainerDeleted:
		s.Deleted = true
	}
}

// Owned reports whether the container exists, is not deleted and is account's.
func (s *State) Owned(account string) bool { return s.Exists && !s.Deleted && s.Account == account }

// File returns one of its files.
func (s *State) File(id string) (File, bool) {
	for _, f := range s.Files {
		if f.FileID == id {
			return f, true
		}
	}
	return File{}, false
}

// AddFiles is what recording files records: those it does not hold yet.
func AddFiles(s *State, files []events.ContainerFileAdded) []events.Event {
	var out []events.Event
	for _, f := range files {
		if _, ok := s.File(f.FileID); ok {
			continue
		}
		out = append(out, events.WithID(events.DeriveID(s.ID, "file-"+f.FileID), f))
	}
	return out
}
