package client_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/mcp/client"
)

// BenchmarkRoundTrip is one tools/call of add on a Go MCP server of the SDK on loopback, as the mcp tool makes it
// (a session each: initialize, the call, close). add takes no time of its own, so the whole is the overhead of a
// call beyond the tool's time. It reports p50 and p99.
func BenchmarkRoundTrip(b *testing.B) {
	srv := serveToolsB(b)
	h, _ := client.ParseHosts([]string{hostOf(srv.URL)})
	c := client.New(h)
	server := client.Server{URL: srv.URL}
	args := json.RawMessage(`{"a":1,"b":2}`)
	ctx := context.Background()
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := c.CallTool(ctx, server, "add", args); err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
}
