package queries_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/cmd/agents/samples/chart"
	"github.com/contrailhq/contrail/cmd/agents/samples/genrand"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// genrandServer serves seed 001's genrand agent, logging what its func really received and answered.
func genrandServer(t *testing.T, log *funcLog) string {
	t.Helper()
	a := genrand.Agent(genrand.WithSeed(3, 4))
	inner := a.Funcs["genrand"]
	a.Funcs["genrand"] = func(ctx context.Context, c agentkit.Call) (agentproto.Message, error) {
		m, err := inner(ctx, c)
		log.add(c.Message.Text + " -> " + m.Text)
		return m, err
	}
	return serveAgent(t, a).URL
}

// TestRandomNumberThroughTheFrontAgentWithTheOfflineModel is the story: a Code Shot agent registered by its
// URL, a session with the default front agent, "Generate a random number between 5 and 50" → routed to genrand →
// Func[genrand] called with "5, 50" → the answer carries the number the func really returned.
func TestRandomNumberThroughTheFrontAgentWithTheOfflineModel(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	var log funcLog
	url := genrandServer(t, &log)

	var created struct {
		CreateAgent struct {
			Agent struct {
				AgentID, Kind string
				Queries       []string
				FewShots      []string
			}
		}
	}
	gql(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "genrand", funcUrl: $u}) { agent { agentId kind queries fewShots } } }`,
		map[string]any{"u": url}, &created)
	a := created.CreateAgent.Agent
	if a.Kind != "codeshot" || len(a.FewShots) != 2 || !slices.Contains(a.Queries, "Generate a random number between 0 and 19.") {
		t.Fatalf("registered agent %+v: the description was not read from its URL", a)
	}

	var sent struct {
		SendSessionMessage struct {
			Response *struct{ Text string }
		}
	}
	var session struct {
		CreateSession struct{ Session struct{ Handle string } }
	}
	gql(t, n, key, `mutation { createSession { session { handle } } }`, nil, &session)
	waitRoutable(t, n, key, "Generate a random number between 5 and 50", "genrand")
	gql(t, n, key, `mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "Generate a random number between 5 and 50"}, wait: true) { response { text } } }`,
		map[string]any{"s": session.CreateSession.Session.Handle}, &sent)
	if sent.SendSessionMessage.Response == nil {
		t.Fatal("no reply")
	}
	calls := log.all()
	if len(calls) != 1 || !strings.HasPrefix(calls[0], "5, 50 -> ") {
		t.Fatalf("genrand's func received %v, want one call with \"5, 50\"", calls)
	}
	number := strings.TrimPrefix(calls[0], "5, 50 -> ")
	if want := "The random number is " + number + "."; sent.SendSessionMessage.Response.Text != want {
		t.Fatalf("reply %q, want %q (the number the func returned)", sent.SendSessionMessage.Response.Text, want)
	}
	got := steps(t, n, session.CreateSession.Session.Handle)
	want := []string{"fixie>router: routed genrand", "fixie>genrand: ask_func genrand 5, 50",
		"fixie>genrand: func_says genrand " + number, "fixie>genrand: answer  The random number is " + number + "."}
	if !slices.Equal(got, want) {
		t.Fatalf("the log shows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// waitRoutable waits until the routing index, which follows agent events, routes the query to the handle.
func waitRoutable(t *testing.T, n *platformtest.Node, key, query, handle string) {
	t.Helper()
	for range 2000 {
		var r struct {
			Route []struct {
				Agent struct{ Handle string }
				Fits  bool
			}
		}
		gql(t, n, key, `query($q: String!) { route(query: $q) { agent { handle } fits } }`, map[string]any{"q": query}, &r)
		if len(r.Route) > 0 && r.Route[0].Agent.Handle == handle && r.Route[0].Fits {
			return
		}
		sleepMS(5)
	}
	t.Fatalf("%q never routed to %s", query, handle)
}

func TestStockQuoteAgentAsksItsQuoteFunc(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, _ := n.NewAccount(t, "ada")
	var log funcLog
	url := serveAgent(t, agentkit.Agent{
		BasePrompt: "I am an agent that answers questions about stock prices.",
		FewShots:   codeshot.Split(stockFewShots(t)),
		Funcs: map[string]agentkit.Func{"quote": func(_ context.Context, c agentkit.Call) (agentproto.Message, error) {
			log.add(c.Message.Text)
			return text("$105.22"), nil
		}},
	}).URL
	if _, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: "stock", FuncURL: &url}); err != nil {
		t.Fatal(err)
	}
	session, reply := ask(t, n, p, "stock", "What is the stock price for GOOG?")
	if calls := log.all(); len(calls) != 1 || calls[0] != "GOOG" {
		t.Fatalf("quote received %v, want [GOOG]", calls)
	}
	if !strings.Contains(reply.Text, "GOOG") || !strings.Contains(reply.Text, "$105.22") {
		t.Fatalf("reply %q", reply.Text)
	}
	if got := steps(t, n, session)[0]; got != "stock: ask_func quote GOOG" {
		t.Fatalf("first step %q, want the model's Ask Func[quote]: GOOG", got)
	}
}

func TestInvalidFewShotsAreRefusedNamingExampleLineAndRule(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "ada")
	// agentkit refuses bad few-shots itself, so this agent serves its description by hand.
	srv := serveRaw(t, `{"type":"code_shot","base_prompt":"I quote.","few_shots":["Q: price of X?\nAsk Func[quote]: X\nFunc[quote] says: $1\nA: $1","Q: price of Y?\nAsk Func[quote]: Y\nA: forgot to wait for the func"]}`)
	errs := gqlErrors(t, n, key, `mutation($u: String!) { createAgent(agentData: {handle: "quotes", funcUrl: $u}) { agent { agentId } } }`,
		map[string]any{"u": srv}, nil)
	if len(errs) != 1 || !strings.HasPrefix(errs[0], "BAD_USER_INPUT") ||
		!regexp.MustCompile(`few-shot 2, line 2: .*Ask Func\[quote\].* must be followed by .*Func\[quote\] says`).MatchString(errs[0]) {
		t.Fatalf("errors %v", errs)
	}
	var all struct{ AllAgents []struct{ Handle string } }
	gql(t, n, key, `{ allAgents { handle } }`, nil, &all)
	for _, a := range all.AllAgents {
		if a.Handle == "quotes" {
			t.Fatal("the refused agent was registered anyway")
		}
	}
}

// stockFewShots are the few-shots of seed 000's stock quote agent, as its authors wrote them (a Python
// triple-quoted string: it starts and ends with a newline).
func stockFewShots(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "internal", "codeshot", "testdata", "stockquote.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEmbedsAFuncAnswersWithGoWithTheReply: the chart agent's func answers with a PNG (a data: URI); the platform
// keeps it as an embed of the account, the step records it, and the reply — routed through the front agent —
// carries it under the key its text refers to, readable at its signed URL.
func TestEmbedsAFuncAnswersWithGoWithTheReply(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, key := n.NewAccount(t, "ada")
	url := serveAgent(t, chart.Agent()).URL
	if _, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: "chart", FuncURL: &url}); err != nil {
		t.Fatal(err)
	}
	waitRoutable(t, n, key, "Draw a bar chart of 4, 9 and 1.", "chart")
	sessionID, reply := ask(t, n, p, "", "Draw a bar chart of 4, 9 and 1.")
	if reply.Type != events.MessageResponse || !strings.Contains(reply.Text, "#"+chart.EmbedKey) {
		t.Fatalf("reply %+v", reply)
	}
	em, ok := reply.Embeds[chart.EmbedKey]
	if !ok || em.EmbedID == "" || em.ContentType != "image/png" {
		t.Fatalf("the reply carries embeds %+v, want the chart as a stored PNG", reply.Embeds)
	}
	var got struct {
		SessionByHandle struct {
			Messages []struct {
				Embeds []struct{ Key, URI string }
			}
		}
	}
	gql(t, n, key, `query($h: String!) { sessionByHandle(handle: $h) { messages { embeds { key uri } } } }`, map[string]any{"h": sessionID}, &got)
	msgs := got.SessionByHandle.Messages
	if len(msgs) != 2 || len(msgs[1].Embeds) != 1 || msgs[1].Embeds[0].Key != chart.EmbedKey {
		t.Fatalf("messages %+v", msgs)
	}
	resp, err := http.Get(msgs[1].Embeds[0].URI)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	head := make([]byte, 8)
	if _, err := io.ReadFull(resp.Body, head); err != nil || resp.StatusCode != 200 || string(head[1:4]) != "PNG" {
		t.Fatalf("the embed's URL answered %d %q (%v)", resp.StatusCode, head, err)
	}
}
