package natsx_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestFollowKeyGivesTheLatestValueAndOutlivesItsConsumer: a follower starts from the key's latest value, sees each
// later put (not deletes, not other keys), and goes on after its consumer is gone (as when its server dies), from
// where it was.
func TestFollowKeyGivesTheLatestValueAndOutlivesItsConsumer(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	srv := natstest.Start(t)
	kv, err := srv.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	put := func(key, v string) {
		t.Helper()
		if _, err := kv.PutString(ctx, key, v); err != nil {
			t.Fatal(err)
		}
	}
	put("k", "1")
	put("k", "2")
	got := make(chan string, 16)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		natsx.FollowKey(fctx, srv.JS, "b", "k", func(v []byte) { got <- string(v) })
	}()
	next := func(want string) {
		t.Helper()
		select {
		case v := <-got:
			if v != want {
				t.Fatalf("followed %q, want %q", v, want)
			}
		case <-ctx.Done():
			t.Fatalf("no value; want %q", want)
		}
	}
	next("2")
	put("other", "x")
	if err := kv.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	put("k", "3")
	next("3")

	// The consumer goes, as with its server: the follower opens another and reads on from where it was.
	stream, err := srv.JS.Stream(ctx, "KV_b")
	if err != nil {
		t.Fatal(err)
	}
	consumers := stream.ConsumerNames(ctx)
	n := 0
	for name := range consumers.Name() {
		if err := srv.JS.DeleteConsumer(ctx, "KV_b", name); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d consumers on the bucket, want the follower's one", n)
	}
	put("k", "4")
	next("4")
	put("k", "5")
	next("5")

	stop()
	<-done
	select {
	case v := <-got:
		t.Fatalf("followed %q more than once", v)
	default:
	}
}
