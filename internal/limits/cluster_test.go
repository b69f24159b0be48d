package limits_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// TestCountsAreExactOnAClusterOfThree runs three limiters, each connected to a different server of a three-node
// cluster with replicated buckets, against one quota and one rate at once: exactly the limit is granted.
func TestCountsAreExactOnAClusterOfThree(t *testing.T) {
	if testing.Short() {
		t.Skip("cluster test skipped in -short mode")
	}
	t.Parallel()
	c := natstest.StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	names, _ := natsx.NewNames("")
	clk := newClock(time.Date(2026, 3, 3, 10, 0, 0, 0, time.UTC))
	var nodes []*limits.Limits
	for i, ns := range c.Servers {
		nc, err := nats.Connect(ns.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		js, _ := jetstream.New(nc)
		if i == 0 {
			layout := natsx.Layout{Names: names, Replicas: 3}
			for _, b := range limits.Buckets() {
				if err := natsx.EnsureBucket(ctx, js, layout, b); err != nil {
					t.Fatal(err)
				}
			}
		}
		l, err := limits.Open(ctx, limits.Config{JS: js, Names: names, Now: clk.Now, DailyQueries: 50, RequestsPerMinute: 30})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, l)
	}
	p := auth.Principal{AccountID: "acct_c", KeyID: "key_c"}
	var queries, requests atomic.Int64
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() {
			l := nodes[i%3]
			for range 10 {
				if err := l.CountQuery(ctx, p); err == nil {
					queries.Add(1)
				} else if errs.CodeOf(err) != errs.RateLimited {
					t.Errorf("count query: %v", err)
				}
				if err := l.AllowRequest(ctx, p); err == nil {
					requests.Add(1)
				} else if errs.CodeOf(err) != errs.RateLimited {
					t.Errorf("allow request: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if queries.Load() != 50 || requests.Load() != 30 {
		t.Fatalf("90 attempts on 3 nodes: %d queries granted (quota 50), %d requests (rate 30)", queries.Load(), requests.Load())
	}
	if _, used, err := nodes[2].DailyUsage(ctx, "acct_c"); err != nil || used != 50 {
		t.Fatalf("usage seen from another node: %d %v", used, err)
	}
}
