package eventstore_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
)

// Two repositories over one log stand for two nodes: each decides on the state it holds, and what the other
// appended in between surfaces as a conflict that is settled by reloading, never by overwriting.
func TestRepoTwoNodesNeverOverwriteEachOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, _ := twoNodesHoldingC1(t)
	// b holds c1 at version 1; a moves it to 3.
	if _, _, err := b.Get(ctx, "c1", eventstore.Fresh); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if _, err := a.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
			t.Fatal(err)
		}
	}
	// b decides on its stale state: the append expects version 1, conflicts, and b decides again on version 3.
	var sawTotals []int
	res, err := b.Update(ctx, "c1", 1, events.Meta{}, func(c *counter) ([]events.Event, error) {
		sawTotals = append(sawTotals, c.Total)
		return []events.Event{incremented{By: 10}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version.Count != 4 {
		t.Fatalf("b appended at version %d, want 4", res.Version.Count)
	}
	if len(sawTotals) != 2 || sawTotals[0] != 1 || sawTotals[1] != 3 {
		t.Fatalf("b's decide saw totals %v, want [1 3] (stale, then reloaded)", sawTotals)
	}
	c, v, err := a.Get(ctx, "c1", eventstore.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 13 || v.Count != 4 {
		t.Fatalf("a reads total %d at version %d, want 13 at 4", c.Total, v.Count)
	}
}

// Reading as of an event the caller holds returns a state that contains it, even when the event was appended by
// another writer the repository never saw; and a state is never advanced over a gap.
func TestRepoReadAtLeastAndGaps(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	r := eventstore.NewRepo[counter](st, "counter", 0)
	if _, _, err := r.Get(ctx, "c2", eventstore.Fresh); err != nil {
		t.Fatal(err)
	}
	// Written behind the repository's back.
	res, err := st.Append(ctx, events.Ref{Type: "counter", ID: "c2"}, events.Version{}, events.Meta{}, incremented{By: 2}, incremented{By: 3})
	if err != nil {
		t.Fatal(err)
	}
	c, v, err := r.Get(ctx, "c2", res.LastSeq())
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 5 || v != res.Version || len(c.Versions) != 2 || c.Versions[0] != 1 || c.Versions[1] != 2 {
		t.Fatalf("state %+v at %+v, want total 5 at %+v with versions [1 2]", c, v, res.Version)
	}
	// An invalid ID names no aggregate: an empty state, never a wildcard read.
	c, v, err = r.Get(ctx, "*", eventstore.Fresh)
	if err != nil || c.Total != 0 || v.Count != 0 {
		t.Fatalf("Get(*) = %+v, %+v, %v", c, v, err)
	}
	if _, err := r.Update(ctx, "a.b", eventstore.Fresh, events.Meta{}, func(*counter) ([]events.Event, error) {
		return []events.Event{incremented{By: 1}}, nil
	}); err == nil {
		t.Fatal("Update of an invalid id succeeded")
	}
}

// Concurrent updates of one aggregate through one repository are serialised on the node: none conflicts with
// another, and every one lands once.
func TestRepoSerialisesWritersOnANode(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	r := eventstore.NewRepo[counter](st, "counter", 0)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if _, err := r.Update(ctx, "c3", eventstore.Fresh, events.Meta{}, func(*counter) ([]events.Event, error) {
					return []events.Event{incremented{By: 1}}, nil
				}); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	r.Forget("c3")
	c, v, err := r.Get(ctx, "c3", eventstore.Fresh)
	if err != nil {
		t.Fatal(err)
	}
	if c.Total != 200 || v.Count != 200 {
		t.Fatalf("total %d at version %d, want 200", c.Total, v.Count)
	}
}

// A repository asked for an aggregate as the log holds it now reads nothing when nothing came after what it holds
// (it asks the index of subjects where the aggregate ends), and reads what another node appended when something did.
func TestARepoReadsTheLogOnlyWhenItHoldsLessThanIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, readsSoFar := twoNodesHoldingC1(t)
	before := readsSoFar()
	for range 3 {
		if _, err := a.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
			t.Fatal(err)
		}
	}
	if c, v, err := a.Get(ctx, "c1", eventstore.Fresh); err != nil || c.Total != 4 || v.Count != 4 {
		t.Fatalf("a reads total %d at version %d (%v), want 4 at 4", c.Total, v.Count, err)
	}
	if n := readsSoFar() - before; n != 0 {
		t.Fatalf("deciding and reading on what the repository appended itself read the log %d times", n)
	}
	if _, err := b.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
		t.Fatal(err)
	}
	if c, v, err := a.Get(ctx, "c1", eventstore.Fresh); err != nil || c.Total != 5 || v.Count != 5 {
		t.Fatalf("after another node's append a reads total %d at version %d (%v), want 5 at 5", c.Total, v.Count, err)
	}
}

// inc is a decision that adds one.
func inc(*counter) ([]events.Event, error) { return []events.Event{incremented{By: 1}}, nil }

// twoNodesHoldingC1 is two repositories over one log, standing for two nodes; a has appended c1's first event.
// readsSoFar counts the reads of events the server has been asked for since.
func twoNodesHoldingC1(t *testing.T) (a, b *eventstore.Repo[counter, *counter], readsSoFar func() int) {
	t.Helper()
	st, srv := newStore(t)
	a = eventstore.NewRepo[counter](st, "counter", 0)
	b = eventstore.NewRepo[counter](st, "counter", 0)
	if _, err := a.Update(context.Background(), "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
		t.Fatal(err)
	}
	return a, b, countReads(t, srv)
}

// A write asked of the log's now is decided on the state the repository holds, and the append's expected version
// checks it: deciding on a stale state meets a conflict and is decided again on the log's, and a refusal decided on
// a stale state is decided again too, so neither a stale yes nor a stale no is answered.
func TestARepoWritesOnWhatItHoldsAndTheLogChecksIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, readsSoFar := twoNodesHoldingC1(t)
	before := readsSoFar()
	if _, err := a.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
		t.Fatal(err)
	}
	if n := readsSoFar() - before; n != 0 {
		t.Fatalf("a write on a state the repository held read the log %d times", n)
	}
	// b moves c1 to 3 behind a's back.
	if _, err := b.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
		t.Fatal(err)
	}
	errFull := errors.New("full")
	var saw []int
	_, err := a.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, func(c *counter) ([]events.Event, error) {
		saw = append(saw, c.Total)
		if c.Total >= 3 {
			return nil, errFull
		}
		return []events.Event{incremented{By: 1}}, nil
	})
	if !errors.Is(err, errFull) || len(saw) != 2 || saw[0] != 2 || saw[1] != 3 {
		t.Fatalf("a stale yes: err %v after deciding on totals %v, want the refusal after [2 3]", err, saw)
	}
	// b moves c1 to 4; a holds 3 and would refuse below 4.
	if _, err := b.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, inc); err != nil {
		t.Fatal(err)
	}
	saw = nil
	res, err := a.Update(ctx, "c1", eventstore.Fresh, events.Meta{}, func(c *counter) ([]events.Event, error) {
		saw = append(saw, c.Total)
		if c.Total < 4 {
			return nil, errFull
		}
		return []events.Event{incremented{By: 1}}, nil
	})
	if err != nil || res.Version.Count != 5 || len(saw) != 2 || saw[0] != 3 || saw[1] != 4 {
		t.Fatalf("a stale no: err %v, version %d after deciding on totals %v, want version 5 after [3 4]", err, res.Version.Count, saw)
	}
}
