package sandbox

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BenchmarkPrint1 measures, in the same run, the cost of print(1): bare (/usr/bin/python3 -c 'print(1)', no
// sandbox), cold (Runner.Run: a fresh sandbox started, the cell run, the sandbox ended) and warm (Kernel.Exec in a
// sandbox already started), and reports the overhead of each over bare. One op is one of each, in turn, so that
// a busy machine slows them alike.
//
//	go test -run '^$' -bench Print1 -benchtime 50x ./internal/sandbox/
func BenchmarkPrint1(b *testing.B) {
	r := newRunner(b, Limits{})
	ctx := context.Background()
	k := startKernel(b, r)
	cell := Cell{Code: "print(1)"}
	check := func(res Result, err error) {
		if err != nil || res.Stdout != "1\n" {
			b.Fatalf("print(1): %q %v", res.Stdout, err)
		}
	}
	var bare, cold, warm time.Duration
	for b.Loop() {
		start := time.Now()
		out, err := exec.Command(DefaultPython, "-c", "print(1)").Output()
		if err != nil || string(out) != "1\n" {
			b.Fatalf("bare python: %q %v", out, err)
		}
		bare += time.Since(start)

		start = time.Now()
		check(r.Run(ctx, cell))
		cold += time.Since(start)

		start = time.Now()
		check(k.Exec(ctx, cell))
		warm += time.Since(start)
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(b.N) / float64(time.Millisecond) }
	b.ReportMetric(ms(bare), "bare-ms")
	b.ReportMetric(ms(cold), "cold-ms")
	b.ReportMetric(ms(warm), "warm-ms")
	b.ReportMetric(ms(cold-bare), "cold-overhead-ms")
	b.ReportMetric(ms(warm-bare), "warm-overhead-ms")
	b.ReportMetric(0, "ns/op") // the sum of the three, which says nothing
}
