package eventstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestClusterLosesNoAcknowledgedEventWhenTheStreamLeaderDies runs the log on a three-node cluster with an R3
// stream, shuts down the stream's leader in the middle of a run of appends, and checks that every append that was
// acknowledged is in the log afterwards and that appends resumed.
func TestClusterLosesNoAcknowledgedEventWhenTheStreamLeaderDies(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c, js, names := clusterLog(t, ctx)
	st := counterStore(js, names)

	acked := map[string]bool{}
	var afterKill, failures int
	killed := false
	for i := 0; i < 600; i++ {
		if i == 200 {
			leader := streamLeader(t, ctx, js, names.EventsStream())
			for _, ns := range c.Servers {
				if ns.Name() == leader {
					ns.Shutdown()
				}
			}
			killed = true
		}
		ref := events.Ref{Type: "counter", ID: fmt.Sprintf("c%d", i)}
		id := events.NewID()
		// A real client retries a failed append with the same event ID; the store makes that safe.
		for attempt := 0; attempt < 100; attempt++ {
			actx, acancel := context.WithTimeout(ctx, 2*time.Second)
			_, err := st.Append(actx, ref, events.Version{}, events.Meta{}, events.WithID(id, incremented{By: 1}))
			acancel()
			if err == nil {
				acked[id] = true
				if killed {
					afterKill++
				}
				break
			}
			failures++
			time.Sleep(50 * time.Millisecond)
		}
	}
	if afterKill == 0 {
		t.Fatal("no append succeeded after the leader went down")
	}
	seen := map[string]int{}
	if _, err := st.Read(ctx, 0, func(e events.Envelope) error { seen[e.ID]++; return nil }); err != nil {
		t.Fatal(err)
	}
	for id := range acked {
		if seen[id] != 1 {
			t.Fatalf("acknowledged event %s is in the log %d times", id, seen[id])
		}
	}
	t.Logf("%d appends acknowledged (%d after the leader died), %d attempts failed during the election", len(acked), afterKill, failures)
}

// clusterLog starts a 3-node cluster and provisions the log on it, as R3 (what AutoReplicas picks there). The
// connection reconnects to another node when one goes down.
func clusterLog(t testing.TB, ctx context.Context) (*natstest.Cluster, jetstream.JetStream, natsx.Names) {
	t.Helper()
	c := natstest.StartCluster(t)
	js := connectTo(t, c.URLs())
	names, _ := natsx.NewNames("")
	replicas := natsx.AutoReplicas(js.Conn())
	if replicas != 3 {
		t.Fatalf("auto replicas on a 3-node cluster = %d", replicas)
	}
	layout := natsx.Layout{Names: names, Replicas: replicas, DuplicateWindow: time.Minute}
	if err := natsx.Provision(ctx, js, layout, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return c, js, names
}

// connectTo connects to the cluster at url, reconnecting to another node when one goes down.
func connectTo(t testing.TB, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// counterStore is a store of the counter events the tests append.
func counterStore(js jetstream.JetStream, names natsx.Names, opts ...eventstore.Option) *eventstore.Store {
	reg := events.NewRegistry()
	reg.Register(incremented{})
	return eventstore.NewStore(js, names, reg, opts...)
}

func streamLeader(t *testing.T, ctx context.Context, js jetstream.JetStream, stream string) string {
	t.Helper()
	s, err := js.Stream(ctx, stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
		t.Fatalf("stream is not R3 with a leader: %+v", info.Cluster)
	}
	return info.Cluster.Leader
}

// TestClusterLoadAtSeesTheEventItWasGiven appends on one server and loads on the others right away, where a
// follower replica may not yet have applied the append: LoadAt must return a history holding the event (from the
// leader if the replica is behind), and a retried append after a conflict must see what the other writer stored.
func TestClusterLoadAtSeesTheEventItWasGiven(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	c := natstest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	names, _ := natsx.NewNames("")
	stores := make([]*eventstore.Store, len(c.Servers))
	for i, ns := range c.Servers {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			layout := natsx.Layout{Names: names, Replicas: 3, DuplicateWindow: time.Minute}
			if err := natsx.Provision(ctx, js, layout, discard()); err != nil {
				t.Fatal(err)
			}
		}
		reg := events.NewRegistry()
		reg.Register(incremented{})
		stores[i] = eventstore.NewStore(js, names, reg)
	}
	stale := 0
	const rounds = 300
	for i := 0; i < rounds; i++ {
		ref := events.Ref{Type: "counter", ID: fmt.Sprintf("c%d", i)}
		w := stores[i%3]
		res, err := w.Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1})
		if err != nil {
			t.Fatal(err)
		}
		seq := res.LastSeq()
		for j := 1; j <= 2; j++ {
			r := stores[(i+j)%3]
			if _, v, err := r.Load(ctx, ref); err != nil {
				t.Fatal(err)
			} else if v.Seq < seq {
				stale++
			}
			history, v, err := r.LoadAt(ctx, ref, seq)
			if err != nil {
				t.Fatal(err)
			}
			if v.Seq < seq || len(history) != 1 || history[0].Sequence != seq {
				t.Fatalf("round %d: LoadAt(%d) on another server returned version %+v, %d events", i, seq, v, len(history))
			}
		}
	}
	// A command on another server right after a create: Update must not refuse on a replica's lag (a 404 for what was
	// just made), however often the replica that answers is behind.
	for i := 0; i < rounds; i++ {
		ref := events.Ref{Type: "counter", ID: fmt.Sprintf("made%d", i)}
		if _, err := stores[i%3].Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1}); err != nil {
			t.Fatal(err)
		}
		_, err := eventstore.Update(ctx, stores[(i+1)%3], ref, events.Meta{}, func(c *counter) ([]events.Event, error) {
			if c.Total == 0 {
				return nil, errs.NotFoundf("counter", ref.ID)
			}
			return []events.Event{incremented{By: 1}}, nil
		})
		if err != nil {
			t.Fatalf("round %d: an update on another server right after the create: %v", i, err)
		}
	}
	// Two writers on different servers race on one aggregate: every Update lands once, whatever replica answers.
	ref := events.Ref{Type: "counter", ID: "contended"}
	var wg sync.WaitGroup
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 30; k++ {
				if _, err := eventstore.Update(ctx, stores[w], ref, events.Meta{}, func(c *counter) ([]events.Event, error) {
					return []events.Event{incremented{By: 1}}, nil
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	history, _, err := stores[0].LoadLatest(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(history) != 90 {
		t.Fatalf("contended aggregate holds %d events, want 90", len(history))
	}
	t.Logf("plain direct loads on another server were behind the append %d times in %d", stale, 2*rounds)
}

// TestClusterFollowGoesOnWhenTheStreamLeaderDies follows the log through a server that stays up while the stream's
// leader (which holds the follower's consumer) is killed: the follower must receive every event appended after the
// election, by replacing its consumer, rather than stay parked on the dead one.
func TestClusterFollowGoesOnWhenTheStreamLeaderDies(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	c := natstest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	names, _ := natsx.NewNames("")
	connect := func(url string) (*eventstore.Store, jetstream.JetStream) {
		js := connectTo(t, url)
		return counterStore(js, names), js
	}
	writer, js := connect(c.URLs())
	if err := natsx.Provision(ctx, js, natsx.Layout{Names: names, Replicas: 3, DuplicateWindow: time.Minute}, discard()); err != nil {
		t.Fatal(err)
	}
	leader := streamLeader(t, ctx, js, names.EventsStream())
	var survivor string
	for _, ns := range c.Servers {
		if ns.Name() != leader {
			survivor = ns.ClientURL()
			break
		}
	}
	reader, _ := connect(survivor)

	const before, after = 20, 20
	got := make(chan string, before+after)
	fctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		for e, err := range reader.Follow(fctx, 0, names.TypeFilter("counter.incremented")) {
			if err != nil {
				return
			}
			got <- e.ID
		}
	}()
	appendOne := func(i int) string {
		ref := events.Ref{Type: "counter", ID: fmt.Sprintf("f%d", i)}
		res, err := writer.Append(ctx, ref, events.Version{}, events.Meta{}, incremented{By: 1})
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		return res.Events[0].ID
	}
	want := map[string]bool{}
	for i := 0; i < before; i++ {
		want[appendOne(i)] = true
	}
	for i := 0; i < before; i++ {
		<-got
	}
	// Kill the server that holds the follower's consumer if it is not the one the follower is connected to, else
	// the stream's leader.
	victim := leader
	stream, err := js.Stream(ctx, names.EventsStream())
	if err != nil {
		t.Fatal(err)
	}
	for info := range stream.ListConsumers(ctx).Info() {
		if info.Cluster != nil && info.Cluster.Leader != "" {
			for _, ns := range c.Servers {
				if ns.Name() == info.Cluster.Leader && ns.ClientURL() != survivor {
					victim = ns.Name()
				}
			}
		}
	}
	t.Logf("stream leader %s; killing %s", leader, victim)
	for _, ns := range c.Servers {
		if ns.Name() == victim {
			ns.Shutdown()
		}
	}
	for i := before; i < before+after; i++ {
		want[appendOne(i)] = true // Append retries through the election
	}
	seen := 0
	for seen < after {
		select {
		case id := <-got:
			if want[id] {
				seen++
			}
		case <-ctx.Done():
			t.Fatalf("the follower received %d of the %d events appended after the leader died", seen, after)
		}
	}
}
