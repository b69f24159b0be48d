package bench

import (
	"context"
	"testing"
	"time"
)

func BenchmarkProjectionApply(b *testing.B) {
	ctx := context.Background()
	rig, err := NewRig(ctx, b.TempDir(), 200, false)
	if err != nil {
		b.Fatal(err)
	}
	defer rig.Close()
	if _, err := rig.StoreAppendBatch(ctx, 20000, 1000); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		n, d, err := rig.ProjectionApply(ctx)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/d.Seconds(), "events/s")
	}
}

func BenchmarkRunsConcurrent(b *testing.B) {
	ctx := context.Background()
	node, err := startNode(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer node.stop()
	asst, err := node.post(ctx, "/v1/assistants", `{"model":"offline/bench"}`)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		n, d, err := node.concurrentRuns(ctx, asst, 100, 5*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(n)/d.Seconds(), "runs/s")
	}
}
