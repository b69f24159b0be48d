package julepapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAListWhoseReadModelStandsStillIsA503: a list spans many aggregates and cannot be folded from the log, so
// past the read wait a list whose read model stands still is a 503 saying the model is behind, not the list
// without the agent just made; the agent itself is read from the log meanwhile, and the list has it once the
// model goes on.
func TestAListWhoseReadModelStandsStillIsA503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	release := e.node.HoldLease(t, "projection.julep_agents")
	a := e.must(t, http.StatusCreated, "POST", "/agents", map[string]any{"name": "Ada", "model": "gpt-4o-mini"})
	id := a["id"].(string)
	if got := e.must(t, http.StatusOK, "GET", "/agents/"+id, nil); got["name"] != "Ada" {
		t.Fatalf("the agent: %v", got)
	}
	r := e.do(t, "GET", "/agents", nil)
	if r.status != http.StatusServiceUnavailable || !strings.Contains(string(r.body), "read model is behind") {
		t.Fatalf("the list while its model stands still: %d %s", r.status, r.body)
	}

	release()
	waitList := time.Now().Add(30 * time.Second)
	for {
		r := e.do(t, "GET", "/agents", nil)
		if r.status == http.StatusOK {
			if list := items(t, r.obj(t)); len(list) != 1 || list[0]["id"] != id {
				t.Fatalf("the list once the model goes on: %v", list)
			}
			break
		}
		if time.Now().After(waitList) {
			t.Fatalf("the list once the model goes on: %d %s", r.status, r.body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
