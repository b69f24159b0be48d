package queries_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestRegistryChangesReachRoutingAtOnce registers, changes and deletes an agent and follows the router's answer:
// the index follows the log, so each change routes within moments (the test logs how long).
func TestRegistryChangesReachRoutingAtOnce(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, key := n.NewAccount(t, "ada")
	ctx := context.Background()
	top := func(q string) string {
		var r struct {
			Route []struct {
				Agent struct{ Handle string }
				Fits  bool
			}
		}
		gql(t, n, key, `query($q: String!) { route(query: $q) { agent { handle } fits } }`, map[string]any{"q": q}, &r)
		if len(r.Route) == 0 || !r.Route[0].Fits {
			return ""
		}
		return r.Route[0].Agent.Handle
	}
	until := func(what string, cond func() bool) {
		t.Helper()
		start := time.Now()
		for !cond() {
			if time.Since(start) > 10*time.Second {
				t.Fatalf("%s: not within 10s", what)
			}
			time.Sleep(2 * time.Millisecond)
		}
		t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
	}
	qs := []string{"What is the weather in Paris today?", "Will it rain in Oslo tomorrow?"}
	if _, err := n.RegisterAgent(ctx, p, commands.AgentInput{Handle: "weather", Queries: &qs}); err != nil {
		t.Fatal(err)
	}
	until("registered agent routable", func() bool { return top("weather in Paris") == "weather" })
	other := []string{"Translate hello into French", "How do you say thanks in German?"}
	n.UpdateAgent(t, p, commands.AgentInput{Handle: "weather", Queries: &other})
	until("changed sample queries routed", func() bool { return top("say hello in French") == "weather" && top("weather in Paris") == "" })
	n.DeleteAgent(t, p, "weather")
	until("deleted agent gone from routing", func() bool { return top("say hello in French") == "" })
}

// TestDelegationLoopsEndWithAClearFailure: two Code Shot agents that ask each other would never answer; the second
// ask of an agent already answering the query is refused, and the query fails saying why.
func TestDelegationLoopsEndWithAClearFailure(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if strings.Contains(req.Messages[0].Content, "I am ping") {
			return llmtest.Text("Ask Agent[pong]: hello")
		}
		return llmtest.Text("Ask Agent[ping]: hello")
	})
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = model.URL, "sk-test", "gpt-test"
	}))
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	for _, h := range []string{"ping", "pong"} {
		url := serveRaw(t, `{"type":"code_shot","base_prompt":"I am `+h+`.","few_shots":["Q: hi\nAsk Agent[x]: hi\nAgent[x] says: hi\nA: hi"]}`)
		if _, err := n.RegisterAgent(ctx, p, commands.AgentInput{Handle: h, FuncURL: &url}); err != nil {
			t.Fatal(err)
		}
	}
	_, reply := ask(t, n, p, "ping", "hello")
	if reply.Type != "error" || !strings.Contains(reply.Text, "agent ping is already answering this query (ping>pong): no loops") {
		t.Fatalf("reply %+v", reply)
	}
}
