package natsx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestTransientTellsAFailoverFromARefusal checks which errors a write sends again: those of a stream between
// leaders or a connection between servers, wrapped or not, and never a refusal the server meant.
func TestTransientTellsAFailoverFromARefusal(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nats.ErrTimeout, true},
		{nats.ErrNoResponders, true},
		{jetstream.ErrNoStreamResponse, true},
		{context.DeadlineExceeded, true},
		{nats.ErrConnectionReconnecting, true},
		{fmt.Errorf("append thread.created: %w", nats.ErrDisconnected), true},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008}, true},
		{&jetstream.APIError{Code: 400, ErrorCode: jetstream.JSErrCodeStreamWrongLastSequence}, false},
		{nats.ErrMaxPayload, false},
		{context.Canceled, false},
		{errors.New("bad input"), false},
	} {
		if got := natsx.Transient(c.err); got != c.want {
			t.Errorf("Transient(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// TestKVGetWaitsOutAMomentWithNoResponders reads a key while no server serves its bucket (its stream is gone, as
// the interest of a stopping server is for a moment) and the bucket comes back, empty: the read returns the bucket's
// answer ("key not found") rather than "no responders". A bucket that stays gone fails within noRespondersWait.
func TestKVGetWaitsOutAMomentWithNoResponders(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := jetstream.KeyValueConfig{Bucket: "flaky"}
	kv, err := srv.JS.CreateKeyValue(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.JS.DeleteKeyValue(ctx, cfg.Bucket); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, "k"); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("a read of the removed bucket: %v, want no responders (the test's premise)", err)
	}
	// Back empty, in one step: a value put after it came back could race the read, which answers "not found" at once.
	back := make(chan error, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		_, err := srv.JS.CreateKeyValue(ctx, cfg)
		back <- err
	}()
	_, err = natsx.KVGet(ctx, kv, "k")
	if err := <-back; err != nil {
		t.Fatal(err)
	}
	if !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("KVGet across the moment with no responders: %v, want the bucket's answer (key not found)", err)
	}

	if err := srv.JS.DeleteKeyValue(ctx, cfg.Bucket); err != nil {
		t.Fatal(err)
	}
	// Well under kvGetWait: a read that kept trying as long as for a failover would end with this context instead.
	gctx, gcancel := context.WithTimeout(ctx, 10*time.Second)
	defer gcancel()
	if _, err := natsx.KVGet(gctx, kv, "k"); !errors.Is(err, nats.ErrNoResponders) {
		t.Fatalf("KVGet of a bucket that stays gone: %v, want no responders", err)
	}
}
