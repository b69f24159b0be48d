package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// agentFields are what the agents commands show of an agent.
const agentFields = `agentId handle name kind published queryUrl funcUrl queries fewShots owner { username }`

type cliAgent struct {
	AgentID   string   `json:"agentId"`
	Handle    string   `json:"handle"`
	Name      *string  `json:"name"`
	Kind      string   `json:"kind"`
	Published bool     `json:"published"`
	QueryURL  *string  `json:"queryUrl"`
	FuncURL   *string  `json:"funcUrl"`
	Queries   []string `json:"queries"`
	FewShots  []string `json:"fewShots"`
	Owner     *struct {
		Username string `json:"username"`
	} `json:"owner"`
}

// graphql sends an operation to the node's GraphQL face and decodes its data; GraphQL errors become an error that
// carries their messages.
func (c *client) graphql(ctx context.Context, query string, vars map[string]any, out any) error {
	_, err := c.graphqlWarnings(ctx, query, vars, out)
	return err
}

// graphqlWarnings is graphql, returning also the warnings the node put in the response's extensions (an agent
// registered while its URL did not answer, say).
func (c *client) graphqlWarnings(ctx context.Context, query string, vars map[string]any, out any) ([]string, error) {
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
		Extensions struct {
			Warnings []string `json:"warnings"`
		} `json:"extensions"`
	}
	if err := c.do(ctx, "POST", "/graphql", map[string]any{"query": query, "variables": vars}, &resp); err != nil {
		return nil, err
	}
	if len(resp.Errors) > 0 {
		msgs := make([]string, len(resp.Errors))
		for i, e := range resp.Errors {
			msgs[i] = e.Message
		}
		return resp.Extensions.Warnings, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	return resp.Extensions.Warnings, json.Unmarshal(resp.Data, out)
}

// graphqlPartial sends an operation and decodes whatever data came back, also beside errors: a query's failed
// answer comes as the reply (a message of type error) and as an error entry. It returns the errors' messages.
func (c *client) graphqlPartial(ctx context.Context, query string, vars map[string]any, out any) ([]string, error) {
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := c.do(ctx, "POST", "/graphql", map[string]any{"query": query, "variables": vars}, &resp); err != nil {
		return nil, err
	}
	var msgs []string
	for _, e := range resp.Errors {
		msgs = append(msgs, e.Message)
	}
	if len(resp.Data) == 0 || string(resp.Data) == "null" {
		if len(msgs) > 0 {
			return msgs, fmt.Errorf("%s", strings.Join(msgs, "; "))
		}
		return nil, errors.New("the node answered no data")
	}
	return msgs, json.Unmarshal(resp.Data, out)
}

// agentStatus says what a listed agent can do. A Code Shot agent without few-shots has not had its description
// read (its URL did not answer when it was registered): it cannot answer until a refresh reads it.
func agentStatus(a cliAgent) string {
	if a.Kind == "codeshot" && len(a.FewShots) == 0 {
		return "not yet reachable: refresh it"
	}
	return "-"
}

func newAgentsCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "agents", Short: "The agent registry: list, register by URL, refresh, delete"}
	cmd.AddCommand(newAgentsListCmd(), newAgentsRegisterCmd(), newAgentsRefreshCmd(), newAgentsDeleteCmd(), newAgentsRouteCmd())
	return cmd
}

// newAgentsListCmd the agents a key may use, one line each.
func newAgentsListCmd() *cobra.Command {
	list := &cobra.Command{Use: "list", Short: "Agents you may use: built-ins, yours, published ones", Args: cobra.NoArgs}
	listClient := clientFlags(list)
	list.RunE = func(cmd *cobra.Command, _ []string) error {
		c, err := listClient()
		if err != nil {
			return err
		}
		var out struct{ AllAgents []cliAgent }
		if err := c.graphql(cmd.Context(), `{ allAgents(first: 500) { `+agentFields+` } }`, nil, &out); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "HANDLE\tKIND\tPUBLISHED\tOWNER\tSAMPLE QUERIES\tURL\tSTATUS")
		for _, a := range out.AllAgents {
			owner, url := "-", ""
			if a.Owner != nil {
				owner = a.Owner.Username
			}
			if a.FuncURL != nil {
				url = *a.FuncURL
			} else if a.QueryURL != nil {
				url = *a.QueryURL
			}
			if url == "" {
				url = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%d\t%s\t%s\n", a.Handle, a.Kind, a.Published, owner, len(a.Queries), url, agentStatus(a))
		}
		return tw.Flush()
	}
	return list
}

// newAgentsRegisterCmd registers an agent by its URL and says whether it is reachable yet.
func newAgentsRegisterCmd() *cobra.Command {
	register := &cobra.Command{Use: "register HANDLE URL", Short: "Register an agent by its URL (its description is read from GET /)",
		Args: cobra.ExactArgs(2)}
	registerClient := clientFlags(register)
	published := register.Flags().Bool("published", false, "let every account use it")
	standalone := register.Flags().Bool("standalone", false, "an agent that answers queries itself at URL (default: a Code Shot agent whose funcs are at URL, or what GET / says)")
	audience := register.Flags().String("audience", "", "audience of the tokens it gets (agents built with the Fixie SDK need https://app.fixie.ai/api)")
	model := register.Flags().String("model", "", "model for its language processing (provider/name or a bare name)")
	register.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := registerClient()
		if err != nil {
			return err
		}
		data := map[string]any{"handle": args[0], "published": *published}
		if *standalone {
			data["queryUrl"] = args[1]
		} else {
			data["funcUrl"] = args[1]
		}
		if *audience != "" {
			data["audience"] = *audience
		}
		if *model != "" {
			data["model"] = *model
		}
		var out struct{ CreateAgent struct{ Agent cliAgent } }
		warnings, err := c.graphqlWarnings(cmd.Context(), `mutation($d: AgentInput!) { createAgent(agentData: $d) { agent { `+agentFields+` } } }`,
			map[string]any{"d": data}, &out)
		if err != nil {
			return err
		}
		a := out.CreateAgent.Agent
		state := ""
		if len(warnings) > 0 {
			state = ", not yet reachable"
		}
		fmt.Fprintf(cmd.OutOrStdout(), "registered %s (%s, %s agent, %d sample queries%s)\n", a.Handle, a.AgentID, a.Kind, len(a.Queries), state)
		for _, w := range warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
		}
		return nil
	}
	return register
}

// newAgentsRefreshCmd reads an agent's description again.
func newAgentsRefreshCmd() *cobra.Command {
	refresh := &cobra.Command{Use: "refresh HANDLE", Short: "Read an agent's description again from its URL", Args: cobra.ExactArgs(1)}
	refreshClient := clientFlags(refresh)
	refresh.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := refreshClient()
		if err != nil {
			return err
		}
		var out struct{ RefreshAgent struct{ Agent cliAgent } }
		if err := c.graphql(cmd.Context(), `mutation($h: String!) { refreshAgent(handle: $h) { agent { `+agentFields+` } } }`,
			map[string]any{"h": args[0]}, &out); err != nil {
			return err
		}
		a := out.RefreshAgent.Agent
		fmt.Fprintf(cmd.OutOrStdout(), "refreshed %s (%s agent, %d sample queries)\n", a.Handle, a.Kind, len(a.Queries))
		return nil
	}
	return refresh
}

// newAgentsDeleteCmd removes one of the caller's agents.
func newAgentsDeleteCmd() *cobra.Command {
	del := &cobra.Command{Use: "delete HANDLE", Short: "Remove one of your agents", Args: cobra.ExactArgs(1)}
	delClient := clientFlags(del)
	del.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := delClient()
		if err != nil {
			return err
		}
		var out struct{ DeleteAgent struct{ Agent cliAgent } }
		if err := c.graphql(cmd.Context(), `mutation($h: String!) { deleteAgent(handle: $h) { agent { handle } } }`,
			map[string]any{"h": args[0]}, &out); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "deleted %s\n", args[0])
		return nil
	}
	return del
}

// newAgentsRouteCmd shows which agents the router picks for a query.
func newAgentsRouteCmd() *cobra.Command {
	route := &cobra.Command{Use: "route QUERY", Short: "Show which agents the router picks for a query, with their scores", Args: cobra.ExactArgs(1)}
	routeClient := clientFlags(route)
	route.RunE = func(cmd *cobra.Command, args []string) error {
		c, err := routeClient()
		if err != nil {
			return err
		}
		var out struct {
			Route []struct {
				Agent struct{ Handle string }
				Score float64
				Fits  bool
			}
		}
		if err := c.graphql(cmd.Context(), `query($q: String!) { route(query: $q, first: 5) { agent { handle } score fits } }`,
			map[string]any{"q": args[0]}, &out); err != nil {
			return err
		}
		// The router sends a query to the best agent above its threshold; the others above it are only candidates.
		tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tSCORE\tROUTER")
		picked := ""
		for _, m := range out.Route {
			verdict := "below the threshold"
			switch {
			case m.Fits && picked == "":
				picked, verdict = m.Agent.Handle, "picks this one"
			case m.Fits:
				verdict = "above the threshold, not the best"
			}
			fmt.Fprintf(tw, "%s\t%.3f\t%s\n", m.Agent.Handle, m.Score, verdict)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if picked == "" {
			fmt.Fprintln(cmd.OutOrStdout(), "no agent is above the router's threshold: the front agent answers this query itself")
		}
		return nil
	}
	return route
}
