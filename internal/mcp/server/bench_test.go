package server_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// BenchmarkAskAgent is one tools/call of ask_fixie through /mcp with the Go SDK's client, on the offline model: a
// new session, the query posted, the front agent's answer waited for on a watch. It reports p50 and p99, and the
// same for tools/list (the account's tools built from the read models).
func BenchmarkAskAgent(b *testing.B) {
	n := platformtest.Start(b)
	_, key := n.NewAccount(b, "bench")
	s := connect(b, n.URL, key)
	defer s.Close()
	ctx := context.Background()
	lists := make([]time.Duration, 0, 50)
	for range 50 {
		start := time.Now()
		if _, err := s.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		lists = append(lists, time.Since(start))
	}
	took := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask_fixie", Arguments: map[string]any{"query": "What can you do?"}})
		if err != nil || r.IsError {
			b.Fatalf("ask_fixie: %v %v", err, r)
		}
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	report(b, took, "ask")
	report(b, lists, "list")
}

func report(b *testing.B, d []time.Duration, what string) {
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, what+"-p50-ms")
	b.ReportMetric(float64(d[len(d)*99/100].Microseconds())/1000, what+"-p99-ms")
}
