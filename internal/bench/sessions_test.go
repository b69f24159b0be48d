package bench

import (
	"context"
	"strings"
	"testing"
)

// TestSessionsBenchMeasures runs the sessions benchmark small: every query is answered through the real path, and a
// query appends exactly its three events (posted, dispatched, replied).
func TestSessionsBenchMeasures(t *testing.T) {
	t.Parallel()
	rep, err := Sessions(context.Background(), SessionsOptions{Dir: t.TempDir(), Concurrency: []int{3}, Messages: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var events, p50 *Figure
	for i, f := range rep.Figures {
		switch {
		case strings.HasPrefix(f.Name, "events per query"):
			events = &rep.Figures[i]
		case strings.HasPrefix(f.Name, "post→reply p50"):
			p50 = &rep.Figures[i]
		}
	}
	// A query posted to an idle session carries its dispatch: the post and the reply.
	if events == nil || events.Value != 2 {
		t.Fatalf("events per query: %+v", events)
	}
	if p50 == nil || p50.Value <= 0 || p50.Baseline <= 0 {
		t.Fatalf("p50 figure: %+v", p50)
	}
}
