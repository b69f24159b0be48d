package container

import (
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// TestExpiryCountsFromTheLastActivity: a container expires once idle for exactly its minutes; a use or a file
// moves its last activity, a clock stepped back does not move it back, and a log written before expires_after
// was asked gives the default.
func TestExpiryCountsFromTheLastActivity(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var s State
	s.Apply(events.Envelope{AggregateID: "cntr_a", Account: "acct", Time: t0, Event: events.ContainerCreated{Name: "x", ExpiresAfterMinutes: 5}})
	if s.Expired(t0.Add(5*time.Minute-time.Second)) || !s.Expired(t0.Add(5*time.Minute)) {
		t.Fatalf("a container made at %v with 5 minutes: expired at 4:59 %v, at 5:00 %v", t0,
			s.Expired(t0.Add(5*time.Minute-time.Second)), s.Expired(t0.Add(5*time.Minute)))
	}
	s.Apply(events.Envelope{Time: t0.Add(3 * time.Minute), Event: events.ContainerUsed{ItemID: "ci_1"}})
	s.Apply(events.Envelope{Time: t0.Add(time.Minute), Event: events.ContainerFileAdded{FileID: "file-1"}})
	if !s.LastActiveAt.Equal(t0.Add(3*time.Minute)) || s.Status(t0.Add(7*time.Minute)) != "running" ||
		s.Status(t0.Add(8*time.Minute)) != "expired" {
		t.Fatalf("last active %v, status at +7m %s, at +8m %s", s.LastActiveAt, s.Status(t0.Add(7*time.Minute)), s.Status(t0.Add(8*time.Minute)))
	}
	if _, err := Use(&s, t0.Add(8*time.Minute), "ci_2"); errs.CodeOf(err) != errs.Invalid || errs.MessageOf(err) != "Container is expired." {
		t.Fatalf("using it expired: %v", err)
	}
	if _, err := Add(&s, t0.Add(8*time.Minute), []events.ContainerFileAdded{{FileID: "file-2"}}); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("adding to it expired: %v", err)
	}
	if evs, err := Use(&s, t0.Add(7*time.Minute), "ci_2"); err != nil || len(evs) != 1 {
		t.Fatalf("using it in time: %v %v", evs, err)
	}

	var old State
	old.Apply(events.Envelope{AggregateID: "cntr_b", Time: t0, Event: events.ContainerCreated{Name: "old"}})
	if old.ExpiresAfter != DefaultExpiresAfter {
		t.Fatalf("a container of an older log lives %d minutes", old.ExpiresAfter)
	}
}

// TestRemovedFilesLeaveAndAreStale: a removed file leaves Files without changing a copy taken before; its path is
// stale (a warm sandbox may hold it) until a file is at that path again.
func TestRemovedFilesLeaveAndAreStale(t *testing.T) {
	var s State
	s.Apply(events.Envelope{AggregateID: "cntr_a", Account: "acct", Event: events.ContainerCreated{Name: "x"}})
	for _, id := range []string{"file-1", "file-2", "file-3"} {
		s.Apply(events.Envelope{Event: events.ContainerFileAdded{FileID: id, Path: "/mnt/data/" + id + ".csv"}})
	}
	before := s.Clone()
	evs, err := DeleteFile(&s, "file-1")
	if err != nil || len(evs) != 1 {
		t.Fatalf("delete: %v %v", evs, err)
	}
	s.Apply(events.Envelope{Event: evs[0]})
	if len(s.Files) != 2 || s.Files[0].FileID != "file-2" || len(before.Files) != 3 || before.Files[0].FileID != "file-1" ||
		before.Files[2].FileID != "file-3" {
		t.Fatalf("after a removal: %+v; the copy taken before: %+v", s.Files, before.Files)
	}
	if stale := s.Stale(); len(stale) != 1 || stale[0] != "/mnt/data/file-1.csv" {
		t.Fatalf("stale: %v", stale)
	}
	if _, err := DeleteFile(&s, "file-1"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("removing it again: %v", err)
	}
	again := AddFiles(&s, []events.ContainerFileAdded{{FileID: "file-1", Path: "/mnt/data/file-1.csv"}})
	if len(again) != 1 {
		t.Fatalf("added again: %v", again)
	}
	id, e := events.Unwrap(again[0])
	if id == "" || id == events.DeriveID("cntr_a", "file-file-1") {
		t.Fatalf("added again with the first add's ID %q", id)
	}
	s.Apply(events.Envelope{Event: e})
	if stale := s.Stale(); len(stale) != 0 {
		t.Fatalf("stale once added again: %v", stale)
	}
}
