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
