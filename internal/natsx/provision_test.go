package natsx_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestProvisionTurnsOnAtomicBatchesOfAnOlderLog starts from an event log made by a build that did not take atomic
// batches: provisioning turns them on, and keeps what the log holds.
func TestProvisionTurnsOnAtomicBatchesOfAnOlderLog(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1, DuplicateWindow: time.Minute}
	older := layout.EventsConfig()
	older.AllowAtomicPublish = false
	if _, err := srv.JS.CreateStream(ctx, older); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.JS.Publish(ctx, names.EventSubject("counter", "c1", "incremented"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := natsx.Provision(ctx, srv.JS, layout, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatalf("provision over the older log: %v", err)
	}
	s, err := srv.JS.Stream(ctx, names.EventsStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Config.AllowAtomicPublish {
		t.Fatal("the event log does not take atomic batches after provisioning")
	}
	if info.State.Msgs != 1 {
		t.Fatalf("the log holds %d events after provisioning, want the 1 it had", info.State.Msgs)
	}
}
