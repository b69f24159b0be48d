package graph_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAnAgentPublishedWhileTheAgentsReadModelStandsStillIsNeverAnsweredMissing: an agent another account
// publishes while the agents read model applies nothing is, by its handle, an error saying the model is behind
// (published agents by handle span every account's and cannot be folded from the log), never "not found"; one
// published before is found all the same; once the model goes on, the new one is found, and no answer meanwhile
// says it does not exist.
func TestAnAgentPublishedWhileTheAgentsReadModelStandsStillIsNeverAnsweredMissing(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, bobKey := n.NewAccount(t, "bob")
	_, adaKey := n.NewAccount(t, "ada")
	bob, ada := client{t: t, n: n, key: bobKey}, client{t: t, n: n, key: adaKey}

	bob.do(`mutation { createAgent(agentData: {handle: "coin", funcUrl: "http://127.0.0.1:9/coin", published: true}) {
		agent { agentId } } }`, nil, nil)

	release := n.HoldLease(t, "projection.agents")
	var before struct{ AgentByHandle struct{ Handle string } }
	ada.do(`{ agentByHandle(handle: "coin") { handle } }`, nil, &before)
	if before.AgentByHandle.Handle != "coin" {
		t.Fatalf("bob's agent published before, by handle: %+v", before)
	}
	var made struct {
		CreateAgent struct{ Agent struct{ AgentID string } }
	}
	bob.do(`mutation { createAgent(agentData: {handle: "dice", funcUrl: "http://127.0.0.1:9/dice", published: true}) {
		agent { agentId } } }`, nil, &made)
	const byHandle = `{ agentByHandle(handle: "dice") { agentId owner { username } } }`
	if e := ada.fail(byHandle, nil, "SERVICE_UNAVAILABLE"); !strings.Contains(e.Message, "read model is behind") {
		t.Fatalf("bob's agent published meanwhile, by handle: %q", e.Message)
	}

	release()
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, _ := ada.post(byHandle, nil)
		if len(out.Errors) == 0 {
			var got struct {
				AgentByHandle struct {
					AgentID string
					Owner   struct{ Username string }
				}
			}
			if err := json.Unmarshal(out.Data, &got); err != nil {
				t.Fatal(err)
			}
			if got.AgentByHandle.AgentID != made.CreateAgent.Agent.AgentID || got.AgentByHandle.Owner.Username != "bob" {
				t.Fatalf("bob's agent by handle: %+v, want %s of bob's", got, made.CreateAgent.Agent.AgentID)
			}
			return
		}
		if code := out.Errors[0].code(); code != "SERVICE_UNAVAILABLE" {
			t.Fatalf("bob's agent by handle while the model catches up: %+v", out.Errors)
		}
		if time.Now().After(deadline) {
			t.Fatal("the agents read model did not go on")
		}
	}
}

// TestRefreshAgentAnswersTheRefreshedAgentWhileTheAgentsReadModelStandsStill: refreshAgent, while the agents read
// model applies nothing, is answered once its wait for the model runs out with the agent as its URL now describes it
// and its owner (folded from the log), not a timeout a client would retry nor the agent as it was.
func TestRefreshAgentAnswersTheRefreshedAgentWhileTheAgentsReadModelStandsStill(t *testing.T) {
	t.Parallel()
	n := startShortReadWait(t)
	_, key := n.NewAccount(t, "ada")
	c := client{t: t, n: n, key: key}
	var mu sync.Mutex
	queries := []string{"roll a die"}
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "standalone", "sample_queries": queries})
	}))
	t.Cleanup(agent.Close)
	type agentOut struct {
		AgentID string
		Queries []string
		Owner   struct{ Username string }
	}
	const fields = `agentId queries owner { username }`
	var made struct{ CreateAgent struct{ Agent agentOut } }
	c.do(`mutation($u: String!) { createAgent(agentData: {handle: "dice", queryUrl: $u}) { agent { `+fields+` } } }`,
		map[string]any{"u": agent.URL}, &made)
	if got := made.CreateAgent.Agent; !slices.Equal(got.Queries, []string{"roll a die"}) {
		t.Fatalf("createAgent answered %+v", got)
	}

	release := n.HoldLease(t, "projection.agents")
	defer release()
	mu.Lock()
	queries = []string{"roll two dice"}
	mu.Unlock()
	var refreshed struct{ RefreshAgent struct{ Agent agentOut } }
	c.do(`mutation { refreshAgent(handle: "dice") { agent { `+fields+` } } }`, nil, &refreshed)
	if got := refreshed.RefreshAgent.Agent; got.AgentID != made.CreateAgent.Agent.AgentID ||
		!slices.Equal(got.Queries, []string{"roll two dice"}) || got.Owner.Username != "ada" {
		t.Fatalf("refreshAgent answered %+v, want %s of ada's as its URL now describes it", got, made.CreateAgent.Agent.AgentID)
	}
}

// startShortReadWait starts a node whose reads wait 200 ms for their read models rather than 5 s, so that a test
// that holds a model's lease reaches the reads past the wait soon.
func startShortReadWait(t *testing.T) *platformtest.Node {
	t.Helper()
	return platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) { c.ReadWait = 200 * time.Millisecond }))
}
