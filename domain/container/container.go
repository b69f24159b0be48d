// Package container is the container aggregate: where a response's code_interpreter runs, and the files it holds.
//
// It imports events and errs only.
package container

import (
	"fmt"
	"slices"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// DefaultExpiresAfter is how many minutes a container lives after its last activity when its creator does not say,
// OpenAI's default; MaxExpiresAfter is the most a creator may ask (a day: a container holds a warm sandbox's worth
// of promise, not storage).
const (
	DefaultExpiresAfter = 20
	MaxExpiresAfter     = 24 * 60
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
	// LastActiveAt is its last activity: made, a code_interpreter call run in it, a file added.
	LastActiveAt time.Time
	// ExpiresAfter is the minutes it lives after LastActiveAt.
	ExpiresAfter int
	Files        []File
	// Removed are the files removed from it, in order (a file removed, added again and removed again is there
	// twice): a warm sandbox of the container still holds them on its disk until they are removed there.
	Removed []events.ContainerFileDeleted
	Seq     uint64
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
	out.Removed = slices.Clip(s.Removed)
	return out
}

// Apply folds one event.
func (s *State) Apply(e events.Envelope) {
	s.Seq = e.Sequence
	switch d := e.Event.(type) {
	case events.ContainerCreated:
		s.ID, s.Account, s.Exists, s.Name, s.ResponseID, s.CreatedAt = e.AggregateID, e.Account, true, d.Name, d.ResponseID, e.Time
		s.LastActiveAt, s.ExpiresAfter = e.Time, d.ExpiresAfterMinutes
		if s.ExpiresAfter <= 0 {
			s.ExpiresAfter = DefaultExpiresAfter
		}
	case events.ContainerFileAdded:
		s.Files = append(s.Files, File{ContainerFileAdded: d, CreatedAt: e.Time})
		s.active(e.Time)
	case events.ContainerUsed:
		s.active(e.Time)
	case events.ContainerFileDeleted:
		// A new slice: a clone shares the old one's array.
		s.Files = slices.DeleteFunc(slices.Clone(s.Files), func(f File) bool { return f.FileID == d.FileID })
		s.Removed = append(s.Removed, d)
	case events.ContainerDeleted:
		s.Deleted = true
	}
}

// active moves LastActiveAt forward only: a clock that steps back does not make a container younger than it was.
func (s *State) active(at time.Time) {
	if at.After(s.LastActiveAt) {
		s.LastActiveAt = at
	}
}

// Expired reports whether it has been idle for its ExpiresAfter minutes at now: it can no longer be used.
func (s *State) Expired(now time.Time) bool {
	return now.Sub(s.LastActiveAt) >= time.Duration(s.ExpiresAfter)*time.Minute
}

// Status is what OpenAI calls it at now: "running", or "expired".
func (s *State) Status(now time.Time) string {
	if s.Expired(now) {
		return "expired"
	}
	return "running"
}

// CheckExpiresAfter checks the minutes a creator asks a container to live after its last activity.
func CheckExpiresAfter(param string, minutes int) error {
	if minutes < 1 || minutes > MaxExpiresAfter {
		return errs.InvalidField(param, "Invalid '%s': expected an integer between 1 and %d, got %d.", param, MaxExpiresAfter, minutes)
	}
	return nil
}

// ErrExpired is what using an expired container says.
func ErrExpired(param string) error {
	return errs.InvalidField(param, "Container is expired.")
}

// Use is what running a code_interpreter call (item itemID) in the container at now records: its use, once per
// call (the event's ID derives from the call, so a call run again records nothing new); an expired container is
// refused.
func Use(s *State, now time.Time, itemID string) ([]events.Event, error) {
	if s.Expired(now) {
		return nil, ErrExpired("container")
	}
	return []events.Event{events.WithID(events.DeriveID(s.ID, "used-"+itemID), events.ContainerUsed{ItemID: itemID})}, nil
}

// Add is what a client adding files to the container at now records: those it does not hold yet; an expired
// container is refused.
func Add(s *State, now time.Time, files []events.ContainerFileAdded) ([]events.Event, error) {
	if s.Expired(now) {
		return nil, ErrExpired("container_id")
	}
	return AddFiles(s, files), nil
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

// AddFiles is what recording files records: those it does not hold yet. The event's ID derives from the file (a
// turn done again records it once), and from how often it was removed before: a file added again after its removal
// is a new event, not the first one repeated.
func AddFiles(s *State, files []events.ContainerFileAdded) []events.Event {
	var out []events.Event
	for _, f := range files {
		if _, ok := s.File(f.FileID); ok {
			continue
		}
		key := "file-" + f.FileID
		if n := s.removals(f.FileID); n > 0 {
			key = fmt.Sprintf("%s-%d", key, n)
		}
		out = append(out, events.WithID(events.DeriveID(s.ID, key), f))
	}
	return out
}

// removals counts the times a file was removed from the container.
func (s *State) removals(fileID string) int {
	n := 0
	for _, r := range s.Removed {
		if r.FileID == fileID {
			n++
		}
	}
	return n
}

// ErrNoFile is what asking a container for a file it does not hold says.
func ErrNoFile(id string) error {
	return errs.E(errs.NotFound, "Container file with id '%s' not found.", id)
}

// DeleteFile is what a client removing a file from the container records; a file it does not hold is not found.
// An expired container's files may be removed too: removing takes nothing from a sandbox that is gone.
func DeleteFile(s *State, fileID string) ([]events.Event, error) {
	f, ok := s.File(fileID)
	if !ok {
		return nil, ErrNoFile(fileID)
	}
	return []events.Event{events.ContainerFileDeleted{FileID: fileID, Path: f.Path}}, nil
}

// Stale are the paths of files removed from the container that a warm sandbox of it may still hold: those removed,
// less those it holds now (a file added again, or another at the same path).
func (s *State) Stale() []string {
	held := map[string]bool{}
	for _, f := range s.Files {
		held[f.Path] = true
	}
	var out []string
	for _, r := range s.Removed {
		if !held[r.Path] && !slices.Contains(out, r.Path) {
			out = append(out, r.Path)
		}
	}
	return out
}
