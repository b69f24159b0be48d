package agentkit_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
)

func TestRepeatedCallWithTheSameKeyRunsTheFuncOnce(t *testing.T) {
	t.Parallel()
	var runs atomic.Int32
	srv, err := agentkit.New(agentkit.Agent{
		BasePrompt: "I count.",
		FewShots:   []string{"Q: count\nAsk Func[count]: x\nFunc[count] says: 1\nA: 1"},
		Funcs: map[string]agentkit.Func{"count": func(context.Context, agentkit.Call) (agentproto.Message, error) {
			return agentproto.Message{Text: strconv.Itoa(int(runs.Add(1)))}, nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	c := agentproto.NewClient()
	call := func(key string) string {
		ctx := context.Background()
		if key != "" {
			ctx = agentproto.WithIdempotencyKey(ctx, key)
		}
		m, err := c.CallFunc(ctx, ts.URL, "count", agentproto.Message{Text: "x"}, agentproto.Claims{})
		if err != nil {
			t.Fatal(err)
		}
		return m.Text
	}
	if a, b := call("q1/3"), call("q1/3"); a != "1" || b != "1" {
		t.Fatalf("repeated key: answers %s and %s, want 1 and 1 (one run)", a, b)
	}
	if got := call("q1/5"); got != "2" {
		t.Fatalf("another key: %s, want a second run", got)
	}
	if a, b := call(""), call(""); a == b {
		t.Fatalf("calls without a key were deduplicated: %s, %s", a, b)
	}
	if runs.Load() != 4 {
		t.Fatalf("func ran %d times, want 4", runs.Load())
	}
}
