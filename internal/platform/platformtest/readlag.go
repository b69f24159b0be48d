package platformtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
)

// WithShortReadWait makes the node's reads wait only a moment for a read model before they answer from the log
// (or say the model is behind), so that a test whose model stands still (HoldLease) sees those answers soon.
func WithShortReadWait() Option {
	return WithConfig(func(c *config.Config) { c.ReadWait = 200 * time.Millisecond })
}

// HoldLease makes a read model stand still, as it does on a loaded node whose renewal of the model's lease came
// late: another holder takes the lease (name as the log says it, "projection.messages_v2"), and keeps it until
// the returned release. It returns once the node has let the model go (its log says the lease was lost).
func (n *Node) HoldLease(t testing.TB, name string) (release func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	kv, err := n.JS.KeyValue(ctx, n.Layout.Names.Bucket("projection_leases"))
	if err != nil {
		t.Fatalf("open the projection leases: %v", err)
	}
	lost := func() int { return n.Logs.Count(`"msg":"lease lost"`, `"lease":"`+name+`"`) }
	before := lost()
	hctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// The bucket's keys expire after the lease TTL: the other holder renews, as a holder does.
		for hctx.Err() == nil {
			_, _ = kv.Put(hctx, name, []byte("another-node"))
			select {
			case <-hctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	for lost() <= before {
		select {
		case <-ctx.Done():
			stop()
			wg.Wait()
			t.Fatalf("the node did not let %s go", name)
		case <-time.After(10 * time.Millisecond):
		}
	}
	return func() {
		stop()
		wg.Wait()
		if err := kv.Delete(ctx, name); err != nil {
			t.Errorf("release the lease: %v", err)
		}
	}
}

// AppendUndecodable appends to an aggregate's history an event this build cannot decode, so that its log cannot be
// folded either: a read past the wait of a model that stands still then has nothing to answer from.
func (n *Node) AppendUndecodable(t testing.TB, aggregate, id, event string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.JS.Publish(ctx, n.Layout.Names.EventSubject(aggregate, id, event), []byte("not an event")); err != nil {
		t.Fatalf("append an undecodable event: %v", err)
	}
}
