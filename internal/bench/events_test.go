package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The Go benchmarks of the log, each beside its raw JetStream twin. Compare them within one run:
//
//	go test -run '^$' -bench . ./internal/bench/

func newRig(b *testing.B) *Rig {
	b.Helper()
	rig, err := NewRig(context.Background(), b.TempDir(), 200, false)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(rig.Close)
	return rig
}

func reportRate(b *testing.B, n int, d time.Duration) {
	b.ReportMetric(float64(n)/d.Seconds(), "events/s")
}

func BenchmarkRawSyncPublish(b *testing.B) {
	rig := newRig(b)
	round := 0
	for b.Loop() {
		round++
		d, err := rig.RawSyncPublish(context.Background(), 1000, fmt.Sprintf("r%d-", round))
		if err != nil {
			b.Fatal(err)
		}
		reportRate(b, 1000, d)
	}
}

func BenchmarkStoreAppend(b *testing.B) {
	rig := newRig(b)
	round := 0
	for b.Loop() {
		round++
		d, err := rig.StoreAppend(context.Background(), 1000, fmt.Sprintf("s%d-", round))
		if err != nil {
			b.Fatal(err)
		}
		reportRate(b, 1000, d)
	}
}

func BenchmarkRawAsyncPublish(b *testing.B) {
	rig := newRig(b)
	for b.Loop() {
		d, err := rig.RawAsyncPublish(context.Background(), 5000, 1000)
		if err != nil {
			b.Fatal(err)
		}
		reportRate(b, 5000, d)
	}
}

func BenchmarkStoreAppendBatch(b *testing.B) {
	rig := newRig(b)
	for b.Loop() {
		d, err := rig.StoreAppendBatch(context.Background(), 5000, 1000)
		if err != nil {
			b.Fatal(err)
		}
		reportRate(b, 5000, d)
	}
}

func BenchmarkProjectionApply(b *testing.B) {
	ctx := context.Background()
	rig := newRig(b)
	if _, err := rig.StoreAppend(ctx, 20000, "p"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		n, d, err := rig.ProjectionApply(ctx)
		if err != nil {
			b.Fatal(err)
		}
		reportRate(b, int(n), d)
	}
}

func BenchmarkLoad10(b *testing.B) {
	ctx := context.Background()
	rig := newRig(b)
	if _, err := rig.StoreAppend(ctx, 10000, "l"); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		store, raw, err := rig.LoadLatency(ctx, "l", 1000, 200)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(Percentile(store, 50)), "store-p50-ms")
		b.ReportMetric(ms(Percentile(raw, 50)), "raw-p50-ms")
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
