package agentrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/router"
)

// RouterID is the ID (and handle) of the built-in router agent.
const RouterID = "router"

// fixieFewShots are the front agent's few-shots when a real model plans: think, ask the router who can answer,
// ask that agent, answer (seed 000's flow).
var fixieFewShots = []string{
	"Q: Generate a random number between 1 and 10\n" +
		"Thought: I need an agent that generates random numbers.\n" +
		"Ask Agent[router]: Generate a random number between 1 and 10\n" +
		"Agent[router] says: genrand\n" +
		"Ask Agent[genrand]: Generate a random number between 1 and 10\n" +
		"Agent[genrand] says: The random number is 7.\n" +
		"A: The random number is 7.",
	"Q: What is 12 times 7, and what is the current price of GOOG?\n" +
		"Thought: This has two parts. First the arithmetic.\n" +
		"Ask Agent[router]: What is 12 times 7?\n" +
		"Agent[router] says: calc\n" +
		"Ask Agent[calc]: What is 12 times 7?\n" +
		"Agent[calc] says: 12 times 7 is 84.\n" +
		"Thought: Now the stock price.\n" +
		"Ask Agent[router]: What is the current price of GOOG?\n" +
		"Agent[router] says: stock\n" +
		"Ask Agent[stock]: What is the current price of GOOG?\n" +
		"Agent[stock] says: The current price for GOOG is $105.22.\n" +
		"A: 12 times 7 is 84, and GOOG trades at $105.22.",
	"Q: Hello! Who are you?\n" +
		"Thought: This is small talk; no agent is needed.\n" +
		"A: Hello! I am Fixie, the front agent of this platform. Ask me anything: I find the agent that can answer.",
}

const fixieBasePrompt = "I am Fixie, the front agent of the platform. I break the user's query into steps, ask the " +
	"router which agent can do each step, ask that agent, and compose the answer. When the router says none, I " +
	"answer myself."

// Builtins are the built-in agents: the front agent (fixie) and the router. plain is the agent fixie answers with
// when no agent fits a query (the platform's general model).
func (d *Dispatch) Builtins(plain agents.Builtin) []agents.Builtin {
	front := plain
	front.Info.Description = "The front agent: it finds the agent that can answer a query (by the router) and asks it; " +
		"when none fits, it answers itself."
	front.Agent = agents.AgentFunc(func(ctx context.Context, q agents.Query) (agents.Reply, error) {
		if d.cfg.Offline {
			return d.routeWhole(ctx, front.Info, plain.Agent, q)
		}
		return d.plan(ctx, front.Info, q)
	})
	routerAgent := agents.Builtin{
		Info: agents.Info{ID: RouterID, Handle: RouterID, Name: "Router", Kind: agents.KindBuiltin, Published: true,
			Description: "Finds the agents that can answer a query, by comparing it with every agent's sample queries.",
			Queries:     []string{"Which agent can tell me the weather?"}},
		Agent: agents.AgentFunc(func(ctx context.Context, q agents.Query) (agents.Reply, error) {
			ms, chosen, err := d.route(ctx, q, q.Message.Text)
			if err != nil {
				return agents.Reply{}, err
			}
			if chosen == "" {
				return agents.Reply{Text: "none"}, nil
			}
			parts := make([]string, 0, len(ms))
			for _, m := range ms {
				parts = append(parts, fmt.Sprintf("%s (%.2f)", m.Handle, m.Score))
			}
			return agents.Reply{Text: chosen + "\nCandidates: " + strings.Join(parts, ", ")}, nil
		}),
	}
	return []agents.Builtin{front, routerAgent}
}

// route ranks the agents for a query, records what it found in the session, and returns the matches and the chosen
// handle ("" when none is close enough).
func (d *Dispatch) route(ctx context.Context, q agents.Query, text string) ([]router.Match, string, error) {
	if d.cfg.Index == nil {
		return nil, "", nil
	}
	all, err := d.cfg.Index.Rank(ctx, q.Caller.AccountID, text, 3)
	if err != nil {
		return nil, "", err
	}
	fitting, err := d.cfg.Index.Route(ctx, q.Caller.AccountID, text, 3)
	if err != nil {
		return nil, "", err
	}
	chosen := ""
	if len(fitting) > 0 {
		chosen = fitting[0].Handle
	}
	// With no agent to choose from there is nothing worth recording.
	if q.Record != nil && len(all) > 0 {
		path := pathString(withPath(ctx, RouterID))
		ev := events.SessionRouted{ReplyID: q.ReplyID, Path: path, Query: text, Chosen: chosen}
		for _, m := range all {
			ev.Matches = append(ev.Matches, events.RouteMatch{AgentID: m.AgentID, Handle: m.Handle, Score: m.Score})
		}
		// One routing per query and path, whatever the number of attempts.
		if err := q.Record(ctx, "route:"+path+":"+text, ev); err != nil {
			return nil, "", err
		}
	}
	return all, chosen, nil
}

// routeWhole is the front agent with the offline model: the whole query goes to the best-routed agent; when no
// agent fits, the general agent answers.
func (d *Dispatch) routeWhole(ctx context.Context, info agents.Info, plain agents.Agent, q agents.Query) (agents.Reply, error) {
	ctx = withPath(ctx, info.Handle)
	_, chosen, err := d.route(ctx, q, q.Message.Text)
	if err != nil {
		return agents.Reply{}, err
	}
	if chosen == "" {
		return plain.Reply(ctx, q)
	}
	return d.delegate(ctx, q, chosen, q.Message.Text, q.Stream)
}

// plan is the front agent with a real model: Fixie's planning few-shots, with the router as an agent to ask.
func (d *Dispatch) plan(ctx context.Context, info agents.Info, q agents.Query) (agents.Reply, error) {
	spec := loop.Spec{Handle: info.Handle, BasePrompt: fixieBasePrompt, Examples: fixieFewShots, Model: d.cfg.DefaultModel}
	extra := map[string]func(context.Context, string) (string, error){
		RouterID: func(ctx context.Context, text string) (string, error) {
			_, chosen, err := d.route(ctx, q, text)
			if chosen == "" {
				chosen = "none"
			}
			return chosen, err
		},
	}
	return d.runCodeShot(ctx, spec, info, "", q, extra)
}
