package platformtest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"
)

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
	lost := func() int {
		c := 0
		for _, l := range strings.Split(n.Logs.String(), "\n") {
			if strings.Contains(l, `"msg":"lease lost"`) && strings.Contains(l, `"lease":"`+name+`"`) {
				c++
			}
		}
		return c
	}
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
