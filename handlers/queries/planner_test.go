package queries_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// lastLine is the last line of a Code Shot prompt: where the transcript is.
func lastLine(req llmtest.Request) string {
	c := req.LastMessage().Content
	return c[strings.LastIndex(c, "\n")+1:]
}

// TestFrontAgentPlansWithARealModel runs the front agent with an OpenAI-compatible model (a scripted server, so the
// real provider path runs): it thinks, asks the router, asks the agent the router named, and answers; the agent it
// asked runs its own Code Shot loop with its func. Every step of both agents is in the session's log.
func TestFrontAgentPlansWithARealModel(t *testing.T) {
	t.Parallel()
	model := llmtest.NewServer(t)
	model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		system := req.Messages[0].Content
		last := lastLine(req)
		switch {
		case strings.Contains(system, "I am Fixie, the front agent"):
			switch {
			case strings.HasPrefix(last, "Q: "):
				return llmtest.Text("Thought: I need an agent that makes random numbers.\nAsk Agent[router]: " + strings.TrimPrefix(last, "Q: "))
			case last == "Agent[router] says: genrand":
				return llmtest.Text("Ask Agent[genrand]: Generate a random number between 5 and 50")
			case strings.HasPrefix(last, "Agent[genrand] says: "):
				return llmtest.Text("A: " + strings.TrimPrefix(last, "Agent[genrand] says: "))
			}
		case strings.Contains(system, "generates a random number"):
			switch {
			case strings.HasPrefix(last, "Q: "):
				return llmtest.Text("Ask Func[genrand]: 5, 50")
			case strings.HasPrefix(last, "Func[genrand] says: "):
				return llmtest.Text("A: The random number is " + strings.TrimPrefix(last, "Func[genrand] says: ") + ".")
			}
		}
		return llmtest.Text("A: the script has no line for: " + last)
	})
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
		c.OpenAIBaseURL, c.OpenAIAPIKey, c.Model = model.URL, "sk-test", "gpt-test"
	}))
	_, adaKey := n.NewAccount(t, "ada")
	var log funcLog
	url := genrandServer(t, &log)
	var created struct {
		CreateAgent struct{ Agent struct{ AgentID string } }
	}
	gql(t, n, adaKey, `mutation($u: String!) { createAgent(agentData: {handle: "genrand", funcUrl: $u}) { agent { agentId } } }`, map[string]any{"u": url}, &created)
	waitRoutable(t, n, adaKey, "Generate a random number between 5 and 50", "genrand")

	var session struct {
		CreateSession struct{ Session struct{ Handle string } }
	}
	gql(t, n, adaKey, `mutation { createSession { session { handle } } }`, nil, &session)
	var sent struct {
		SendSessionMessage struct{ Response *struct{ Text string } }
	}
	gql(t, n, adaKey, `mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "Generate a random number between 5 and 50"}, wait: true) { response { text } } }`,
		map[string]any{"s": session.CreateSession.Session.Handle}, &sent)
	calls := log.all()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "5, 50 -> ") {
		t.Fatalf("func calls %v", calls)
	}
	number := strings.TrimPrefix(calls[0], "5, 50 -> ")
	want := "The random number is " + number + "."
	if r := sent.SendSessionMessage.Response; r == nil || r.Text != want {
		t.Fatalf("reply %+v, want %q", sent.SendSessionMessage.Response, want)
	}
	got := strings.Join(steps(t, n, session.CreateSession.Session.Handle), "\n")
	wantSteps := strings.Join([]string{
		"fixie: thought  Thought: I need an agent that makes random numbers.",
		"fixie: ask_agent router Generate a random number between 5 and 50",
		"fixie>router: routed genrand",
		"fixie: agent_says router genrand",
		"fixie: ask_agent genrand Generate a random number between 5 and 50",
		"fixie>genrand: ask_func genrand 5, 50",
		"fixie>genrand: func_says genrand " + number,
		"fixie>genrand: answer  " + want,
		"fixie: agent_says genrand " + want,
		"fixie: answer  " + want,
	}, "\n")
	if got != wantSteps {
		t.Fatalf("the log shows\n%s\nwant\n%s", got, wantSteps)
	}
	for _, r := range model.Requests() {
		if r.Model != "gpt-test" || r.Temperature == nil || *r.Temperature != 0 || len(r.Stop) == 0 {
			t.Fatalf("a model request without the Code Shot settings: model %q temperature %v stop %v", r.Model, r.Temperature, r.Stop)
		}
	}
}
