package queries_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/embedding/uselite/uselitetest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestFixieSDKShapedAgent registers an agent that behaves as one built with the Fixie Python SDK: it answers GET /
// in YAML, and it verifies every request's token against the platform's JWKS, with the audience the SDK accepts and
// the agent-id claim checked against its Fixie name, "<username>/<handle>" (FIXIE_ALLOWED_AGENT_ID). It is
// registered with no audience given: every token carries the SDK's.
func TestFixieSDKShapedAgent(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	verifier, err := agentkit.NewVerifier(n.URL+"/.well-known/jwks.json", auth.FixieAudience, agentkit.WithAgentID("ada/randint"))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string // "METHOD path aid" of every request that passed verification
	agent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, token, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		tok, err := verifier.Verify(r.Context(), token)
		if scheme != "Bearer" || err != nil {
			http.Error(w, fmt.Sprintf("unauthorized: %v", err), http.StatusForbidden)
			return
		}
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+tok.AgentID)
		mu.Unlock()
		switch {
		case r.Method == "GET" && r.URL.Path == "/":
			w.Header().Set("Content-Type", "application/yaml")
			_, _ = w.Write([]byte(sdkYAML(t)))
		case r.Method == "POST" && r.URL.Path == "/genrand":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"message":{"text":"23"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer agent.Close()

	var created struct {
		CreateAgent struct {
			Agent struct{ AgentID, Kind string }
		}
	}
	gql(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "randint", funcUrl: $u}) { agent { agentId kind } } }`,
		map[string]any{"u": agent.URL}, &created)
	id := created.CreateAgent.Agent.AgentID
	if created.CreateAgent.Agent.Kind != "codeshot" {
		t.Fatalf("the YAML description was not read: %+v", created.CreateAgent.Agent)
	}
	var session struct {
		CreateSession struct{ Session struct{ Handle string } }
	}
	gql(t, n, key, `mutation { createSession(sessionData: {frontendAgentId: "randint"}) { session { handle } } }`, nil, &session)
	var sent struct {
		SendSessionMessage struct{ Response *struct{ Text string } }
	}
	gql(t, n, key, `mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "Generate a random number between 5 and 50"}, wait: true) { response { text } } }`,
		map[string]any{"s": session.CreateSession.Session.Handle}, &sent)
	if r := sent.SendSessionMessage.Response; r == nil || r.Text != "The random number is 23." {
		t.Fatalf("reply %+v", sent.SendSessionMessage.Response)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"GET / ada/randint", "POST /genrand ada/randint"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("the agent accepted %v, want %v (tokens with aud %s and aid = the agent's Fixie name)", seen, want, auth.FixieAudience)
	}
	// GraphQL finds the agent by that name as by its ID.
	for _, ref := range []string{id, "ada/randint"} {
		var got struct {
			AgentByID struct{ AgentID, Handle string }
		}
		gql(t, n, key, `query($id: String!) { agentById(agentId: $id) { agentId handle } }`, map[string]any{"id": ref}, &got)
		if got.AgentByID.AgentID != id || got.AgentByID.Handle != "randint" {
			t.Fatalf("agentById(%q) = %+v", ref, got.AgentByID)
		}
	}
}

// TestRoutingAmongManyAgents registers the routing set's agents (31, with Fixie-style sample queries) as one
// account's published agents and routes the set's paraphrased queries (none reuses a sample's wording) for another
// account through the platform's router, with the neural embedder.
func TestRoutingAmongManyAgents(t *testing.T) {
	t.Parallel()
	models := filepath.Dir(uselitetest.Dir(t)) // skips, saying why, without the weights (make models)
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) { c.ModelsPath = models }))
	if n.Embedder.Name() != "use-lite" {
		t.Fatalf("the platform runs on the %s embedder with weights in %s", n.Embedder.Name(), models)
	}
	owner, _ := n.NewAccount(t, "owner")
	_, key := n.NewAccount(t, "user")
	var set struct {
		Agents []struct {
			Handle, Name, Description string
			SampleQueries             []string `json:"sample_queries"`
		}
		Queries []struct{ Text, Agent string }
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "embedding", "testdata", "routing", "routing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	published := true
	for _, a := range set.Agents {
		qs := a.SampleQueries
		name, desc := a.Name, a.Description
		if _, err := n.RegisterAgent(ctx, owner, commands.AgentInput{Handle: a.Handle, Name: &name, Description: &desc,
			Queries: &qs, Published: &published}); err != nil {
			t.Fatal(err)
		}
	}
	last := set.Agents[len(set.Agents)-1]
	waitRoutable(t, n, key, last.SampleQueries[0], last.Handle)
	right := 0
	for _, q := range set.Queries {
		var r struct {
			Route []struct{ Agent struct{ Handle string } }
		}
		gql(t, n, key, `query($q: String!) { route(query: $q, first: 1) { agent { handle } } }`, map[string]any{"q": q.Text}, &r)
		if len(r.Route) == 1 && r.Route[0].Agent.Handle == q.Agent {
			right++
		}
	}
	acc := float64(right) / float64(len(set.Queries))
	t.Logf("routing through the platform: %d agents, %d paraphrased queries, top-1 %.1f%%", len(set.Agents), len(set.Queries), 100*acc)
	if len(set.Agents) < 20 || len(set.Queries) < 100 || acc < 0.6 {
		t.Fatalf("top-1 %.1f%% over %d agents and %d queries: below the 60%% floor", 100*acc, len(set.Agents), len(set.Queries))
	}
}

// sdkYAML is what the Fixie Python SDK (fixieai 1.0.4) answers at GET / for its randint example: PyYAML's dump
// of its metadata, served as application/yaml.
func sdkYAML(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "agentproto", "testdata", "fixie-sdk-randint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
