package projections_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

// BenchmarkShowsLatest is the check every account-wide list makes (ListCaughtUp) on a read model that is current,
// against a log of many aggregates of the types it folds, with events of other types after them.
func BenchmarkShowsLatest(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("aggregates=%d", n), func(b *testing.B) {
			srv := natstest.Start(b)
			node := startNode(b, srv, "a", tallies{})
			ctx := context.Background()
			for i := range n {
				if _, err := node.store.Append(ctx, events.Ref{Type: "tally", ID: fmt.Sprintf("t%d", i)}, events.Version{}, events.Meta{}, added{N: 1}); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 100 {
				if _, err := node.store.Append(ctx, events.Ref{Type: "noise", ID: fmt.Sprintf("n%d", i)}, events.Version{}, events.Meta{}, noise{N: i}); err != nil {
					b.Fatal(err)
				}
			}
			for {
				ok, err := node.runner.ShowsLatest(ctx, tallies{})
				if err != nil {
					b.Fatal(err)
				}
				if ok {
					break
				}
			}
			b.ResetTimer()
			for b.Loop() {
				ok, err := node.runner.ShowsLatest(ctx, tallies{})
				if err != nil || !ok {
					b.Fatalf("shows: %v %v", ok, err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/check")
			if err := node.runner.ListCaughtUp(ctx, tallies{}); err != nil {
				b.Fatal(err)
			}
		})
	}
}
