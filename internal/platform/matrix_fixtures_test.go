package platform_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The route matrix's registry (see routematrix_test.go). A face with routes adds here:
//   - a fixture for each URL parameter that names one of its objects (or every parameter of a route at once);
//   - its admin-only routes to adminRoutes, any route that must answer without a key to openRoutes (rare: say why);
//   - its error shape to errorShapes when it is not Contrail's own;
//   - its prefix to agentTokenPrefixes if agents may call it with their token.

// openRoutes answer without a key. The issue allows exactly these (and signed blob URLs).
func openRoutes() []string {
	return []string{
		"GET /healthz",
		"GET /readyz",
		"GET /.well-known/jwks.json",
		// A signed embed URL: its signature is the permission (403 unsigned, tampered or expired).
		"GET /api/embeds/{id}/content",
		// The web console: a page with no data of anyone's; it calls the faces with the key its user types.
		"GET /",
		"GET /assets/{name}",
	}
}

// adminRoutes need an admin key.
func adminRoutes() []string {
	return []string{
		"GET /metrics",
		"GET /admin/accounts",
		"GET /admin/usage",
		"POST /admin/accounts",
		"GET /admin/accounts/{accountID}/limits",
		"POST /admin/accounts/{accountID}/limits",
		"GET /admin/projections",
		"POST /admin/projections/{name}/rebuild",
		"GET /admin/dlq",
		"POST /admin/dlq/{seq}/redrive",
		"POST /admin/signing-keys/rotate",
	}
}

// agentTokenPrefixes are the faces that accept the tokens the platform gives agents.
func agentTokenPrefixes() []string {
	return []string{"/api/userstorage", "/api/openai-proxy"}
}

// errorShapes maps a face's prefix to the shape of its errors; faces not listed answer in Contrail's own shape.
func errorShapes() map[string]errorShape {
	return map[string]errorShape{"/graphql": graphqlErrorShape, "/v1": openAIErrorShape, "/api/openai-proxy": openAIErrorShape,
		"/mcp": mcpErrorShape}
}

// mcpErrorShape is /mcp's: a JSON-RPC error, what an MCP client reads, with Contrail's code in its data.
func mcpErrorShape(body []byte) error {
	var e struct {
		JSONRPC string `json:"jsonrpc"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Code string `json:"code"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.JSONRPC != "2.0" || e.Error.Code != -32001 || e.Error.Message == "" ||
		e.Error.Data.Code != "unauthorized" {
		return fmt.Errorf(`want {"jsonrpc":"2.0","error":{"code":-32001,"message":...,"data":{"code":"unauthorized"}}}, got %.200s`, body)
	}
	return nil
}

// graphqlErrorShape is GraphQL's: {"errors":[{"message":...,"extensions":{"code":"UNAUTHENTICATED"}}]}.
func graphqlErrorShape(body []byte) error {
	var e struct {
		Errors []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &e); err != nil || len(e.Errors) != 1 || e.Errors[0].Message == "" ||
		e.Errors[0].Extensions.Code != "UNAUTHENTICATED" {
		return fmt.Errorf(`want {"errors":[{"message":...,"extensions":{"code":"UNAUTHENTICATED"}}]}, got %.200s`, body)
	}
	return nil
}

// matrixFixtures are every face's fixtures.
func matrixFixtures() []fixture {
	return []fixture{
		adminKeyFixture(),
		adminOnlyParams(),
		userStorageFixture(),
		fixieFixture(),
		// The /v1 face's, in matrix_openai_test.go.
		v1Assistant(),
		v1Thread(),
		v1File(),
		v1VectorStore(),
		v1Response(),
		// The /julep face's, in matrix_julep_test.go.
		julepFixture(),
	}
}

// graphqlProbe is a GraphQL request of the other account; "{param}" in the query takes the value.
func graphqlProbe(query string) probe {
	body, _ := json.Marshal(map[string]string{"query": query})
	return probe{Method: "POST", Path: "/graphql", Body: string(body)}
}

// fixieFixture is the owner's Fixie objects: an unpublished agent, a session with a message, and an embed. Another
// account reaches none of them, by REST route or by any GraphQL query, mutation or subscription.
func fixieFixture() fixture {
	gql := func(t *testing.T, n *platformtest.Node, key, query string, vars map[string]any) map[string]any {
		t.Helper()
		r := n.Do(t, key, "POST", "/graphql", map[string]any{"query": query, "variables": vars})
		var out struct {
			Data   map[string]any `json:"data"`
			Errors []any          `json:"errors"`
		}
		r.JSON(t, &out)
		if r.Status != 200 || len(out.Errors) > 0 {
			t.Fatalf("matrix fixture: %s: %d %s", query, r.Status, r.Body)
		}
		return out.Data
	}
	field := func(v any, path ...string) string {
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v.(string)
	}
	return fixture{
		Name:   "fixie: agent, session, embed",
		Params: []string{"id", "handle"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			agentName, text, bytes := "agent-"+events.RandomToken(6), "message-"+events.RandomToken(8), "embed-"+events.RandomToken(8)
			agent := gql(t, n, o.Key, `mutation($n: String) { createAgent(agentData: {handle: "private", name: $n, queryUrl: "http://127.0.0.1:9/"}) { agent { agentId } } }`,
				map[string]any{"n": agentName})
			session := gql(t, n, o.Key, `mutation { createSession { session { handle } } }`, nil)
			handle := field(session, "createSession", "session", "handle")
			r := n.Do(t, o.Key, "POST", "/api/embeds", bytes)
			var e struct {
				ID string `json:"id"`
			}
			r.JSON(t, &e)
			if r.Status != 201 {
				t.Fatalf("matrix fixture: upload an embed: %d %s", r.Status, r.Body)
			}
			gql(t, n, o.Key, `mutation($s: String!, $t: String!, $e: String) { sendSessionMessage(messageData: {session: $s, text: $t, embeds: [{key: "k", embedId: $e}]}) { message { id } } }`,
				map[string]any{"s": handle, "t": text + " #k", "e": e.ID})
			return objects{
				Params:  map[string]string{"id": e.ID, "handle": handle, "agentId": field(agent, "createAgent", "agent", "agentId")},
				Secrets: []string{agentName, text, bytes},
			}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			out := gql(t, n, o.Key, `query($h: String!) { sessionByHandle(handle: $h) { messages { text } } }`, map[string]any{"h": objs.Params["handle"]})
			msgs := out["sessionByHandle"].(map[string]any)["messages"].([]any)
			if len(msgs) == 0 || field(msgs[0], "text") != objs.Secrets[1]+" #k" {
				t.Errorf("account A's session after account B's requests: %v", out)
			}
			gql(t, n, o.Key, `{ agentByHandle(handle: "private") { agentId } }`, nil)
			if r := n.Do(t, o.Key, "GET", "/api/embeds/"+objs.Params["id"], nil); r.Status != 200 {
				t.Errorf("account A's embed after account B's requests: %d", r.Status)
			}
		},
		Probes: []probe{
			graphqlProbe(`{ sessionByHandle(handle: "{handle}") { handle messages { text } } }`),
			graphqlProbe(`{ agentById(agentId: "{agentId}") { name } }`),
			graphqlProbe(`{ allAgents { name } allSessions { handle } }`),
			graphqlProbe(`subscription { sessionEvents(handle: "{handle}") { data } }`),
			graphqlProbe(`subscription { sessionMessages(handle: "{handle}") { kind } }`),
			graphqlProbe(`mutation { sendSessionMessage(messageData: {session: "{handle}", text: "planted"}) { message { id } } }`),
			graphqlProbe(`mutation { sendSessionMessage(messageData: {session: "{handle}", text: "#k", embeds: [{key: "k", embedId: "{id}"}]}) { message { id } } }`),
			graphqlProbe(`mutation { deleteSession(handle: "{handle}") { session { handle } } }`),
			graphqlProbe(`mutation { updateAgent(agentData: {handle: "private", published: true}) { agent { name } } }`),
			graphqlProbe(`mutation { deleteAgent(handle: "private") { agent { name } } }`),
			graphqlProbe(`mutation { createSession(sessionData: {frontendAgentId: "{agentId}"}) { session { handle } } }`),
		},
	}
}

// adminKeyFixture is an API key of the owner: another account must not revoke it, list it or learn its name.
func adminKeyFixture() fixture {
	return fixture{
		Name:   "admin: API key",
		Params: []string{"keyID"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			name := "laptop-" + events.RandomToken(6)
			r := n.Do(t, o.Key, "POST", "/admin/keys", map[string]string{"name": name})
			var k struct {
				KeyID string `json:"key_id"`
				Key   string `json:"key"`
			}
			r.JSON(t, &k)
			if r.Status != 201 {
				t.Fatalf("matrix fixture: issue a key: %d %s", r.Status, r.Body)
			}
			return objects{Params: map[string]string{"keyID": k.KeyID, "key_secret": k.Key}, Secrets: []string{name, k.Key}}
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			if r := n.Do(t, objs.Params["key_secret"], "GET", "/admin/whoami", nil); r.Status != 200 {
				t.Errorf("account A's key stopped working after account B's requests: %d", r.Status)
			}
		},
		Probes: []probe{
			{Method: "GET", Path: "/admin/keys?account={accountID}"},
			{Method: "DELETE", Path: "/admin/keys/{keyID}?account={accountID}"},
			{Method: "POST", Path: "/admin/keys?account={accountID}", Body: map[string]string{"name": "planted"}},
		},
	}
}

// adminOnlyParams fill the parameters of admin routes, which another account must not reach at all.
func adminOnlyParams() fixture {
	return fixture{
		Name:   "admin: admin-only routes",
		Params: []string{"accountID", "name", "seq"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			return objects{Params: map[string]string{"accountID": o.AccountID, "name": "accounts", "seq": "1"}}
		},
		Bodies: map[string]any{
			"POST /admin/accounts/{accountID}/limits": map[string]int{"daily_query_limit": 1},
			"POST /admin/accounts":                    map[string]string{"name": "planted"},
		},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			limit, _, err := n.Limits.DailyUsage(t.Context(), o.AccountID)
			if err != nil || limit == 1 {
				t.Errorf("account B changed account A's limits: %d %v", limit, err)
			}
		},
	}
}

// userStorageFixture is a value the owner stored for an agent, and the owner's unpublished agent named the way
// Fixie named agents ("<username>/<handle>"), which another account cannot reach storage through.
func userStorageFixture() fixture {
	// The built-in fixie agent: every account may keep storage for it.
	const agent = "fixie"
	return fixture{
		Name:   "user storage: value",
		Params: []string{"agentId", "key", "username", "agentHandle"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			key, secret := "note-"+events.RandomToken(6), "secret-"+events.RandomToken(8)
			if r := n.Do(t, o.Key, "POST", "/api/userstorage/"+agent+"/"+key, map[string]string{"data": `"` + secret + `"`}); r.Status != 200 {
				t.Fatalf("matrix fixture: store a value: %d %s", r.Status, r.Body)
			}
			unreachable := "http://127.0.0.1:9/"
			if _, err := n.RegisterAgent(t.Context(), o.Principal, commands.AgentInput{Handle: "notes", QueryURL: &unreachable}); err != nil {
				t.Fatalf("matrix fixture: register an agent: %v", err)
			}
			return objects{Params: map[string]string{"agentId": agent, "key": key, "username": o.Username, "agentHandle": "notes"},
				Secrets: []string{key, secret}}
		},
		// Storage is per (user, agent): another account naming the same agent and key reaches its own.
		OwnScope: []string{"GET /api/userstorage/{agentId}", "POST /api/userstorage/{agentId}/{key}"},
		Bodies:   map[string]any{"POST /api/userstorage/{agentId}/{key}": map[string]string{"data": `"planted"`}},
		Intact: func(t *testing.T, n *platformtest.Node, o owner, objs objects) {
			r := n.Do(t, o.Key, "GET", "/api/userstorage/"+agent+"/"+objs.Params["key"], nil)
			var got struct {
				Data string `json:"data"`
			}
			_ = json.Unmarshal(r.Body, &got)
			if r.Status != 200 || got.Data != `"`+objs.Secrets[1]+`"` {
				t.Errorf("account A's stored value after account B's requests: %d %s", r.Status, r.Body)
			}
		},
	}
}
