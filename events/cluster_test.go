package events_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
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
	c := natstest.StartCluster(t)
	nc, err := nats.Connect(c.URLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	names, _ := natsx.NewNames("")
	replicas := natsx.AutoReplicas(nc)
	if replicas != 3 {
		t.Fatalf("auto replicas on a 3-node cluster = %d", replicas)
	}
	layout := natsx.Layout{Names: names, Replicas: replicas, DuplicateWindow: time.Minute}
	if err := natsx.Provision(ctx, js, layout, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	reg := events.NewRegistry()
	reg.Register(incremented{})
	st := events.NewStore(js, names, reg)

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
