package bench

import (
	"context"
	"testing"
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
