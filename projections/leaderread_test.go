package projections_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/projections"
)

// ownedTallies keeps each tally as an object of its account's, as the faces' read models of owned objects do.
type ownedTallies struct{}

func (ownedTallies) Name() string         { return "owned_tallies" }
func (ownedTallies) EventTypes() []string { return []string{"tally.*"} }
func (ownedTallies) Apply(tx *projections.Tx, e events.Envelope) error {
	if d, ok := e.Event.(renamed); ok {
		return tx.Put(projections.OwnedKey(e.Account, e.AggregateID),
			projections.Listed[tallyView]{Seq: e.Sequence, Obj: tallyView{ID: e.AggregateID, Name: d.Name}})
	}
	return nil
}

// TestAnOwnedReadAfterItsWaitAsksTheBucketsLeaderOnACluster reads an object of an account's, just written, on a
// three-server cluster whose buckets keep three replicas and allow direct gets, which any replica may answer,
// including one that lags the leader. Once the model shows the write, the read must go to the leader
// (STREAM.MSG.GET), not to any replica (DIRECT.GET): a lagging replica would answer the object as it was before.
func TestAnOwnedReadAfterItsWaitAsksTheBucketsLeaderOnACluster(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	c := natstest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := nats.Connect(c.Servers[1].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	names, _ := natsx.NewNames("")
	l := natsx.Layout{Names: names, Replicas: 3, DuplicateWindow: time.Minute}
	if err := natsx.Provision(ctx, js, l, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(added{}, renamed{}, removed{})
	st := eventstore.NewStore(js, names, reg)
	p := ownedTallies{}
	r := projections.NewRunner(projections.Config{JS: js, Store: st, Layout: l, Holder: "n1",
		LeaseTTL: 2 * time.Second, ReadWait: 20 * time.Second, Logger: slog.New(slog.DiscardHandler)}, p)
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)

	// Every read of the tally's documents in the model's bucket, as the JetStream API is asked it (a subscriber of
	// the same account sees the requests the API serves). The runner's own reads (its checkpoint) are not counted.
	spy, err := nats.Connect(c.Servers[2].ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(spy.Close)
	var mu sync.Mutex
	var reads []string
	for _, subj := range []string{"$JS.API.DIRECT.GET.>", "$JS.API.STREAM.MSG.GET.>"} {
		if _, err := spy.Subscribe(subj, func(m *nats.Msg) {
			// A direct get names the key in its subject; a get of the leader, in its request.
			if strings.Contains(m.Subject, "owned_tallies") && strings.Contains(m.Subject+" "+string(m.Data), ".t1") {
				mu.Lock()
				reads = append(reads, m.Subject)
				mu.Unlock()
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}

	ref := events.Ref{Type: "tally", ID: "t1"}
	if _, err := st.Append(ctx, ref, events.Version{}, events.Meta{Account: "acct_a"}, renamed{Name: "first"}); err != nil {
		t.Fatal(err)
	}
	if shown, err := r.ShowsAggregate(ctx, p, ref.ID); err != nil || !shown {
		t.Fatalf("the model does not show the write: shown %v, %v", shown, err)
	}
	got, ok, err := projections.OwnedShownOrFolded[tallyView](ctx, r, p, ref, "acct_a")
	if err != nil || !ok || got.Name != "first" {
		t.Fatalf("read: %+v, %v, %v; want the tally named first", got, ok, err)
	}
	if _, ok, err := projections.OwnedShownOrFolded[tallyView](ctx, r, p, ref, "acct_b"); err != nil || ok {
		t.Fatalf("another account's read: %v, %v; want nothing", ok, err)
	}
	if err := spy.Flush(); err != nil {
		t.Fatal(err)
	}
	// The spy's server has the requests once the read's server forwarded them: wait for them to arrive.
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(reads)
		mu.Unlock()
		if n >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reads) == 0 {
		t.Fatal("no read of the tally's documents was seen")
	}
	for _, s := range reads {
		if !strings.HasPrefix(s, "$JS.API.STREAM.MSG.GET.") {
			t.Errorf("read %s: want every read past the wait asked of the bucket's leader ($JS.API.STREAM.MSG.GET)", s)
		}
	}
}
