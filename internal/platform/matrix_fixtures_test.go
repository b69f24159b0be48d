package platform_test

import (
	"encoding/json"
	"testing"

	"github.com/contrailhq/contrail/events"
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
	}
}

// adminRoutes need an admin key.
func adminRoutes() []string {
	return []string{
		"GET /metrics",
		"GET /admin/accounts",
		"POST /admin/accounts",
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
	return []string{"/api/userstorage"}
}

// errorShapes maps a face's prefix to the shape of its errors; faces not listed answer in Contrail's own shape.
func errorShapes() map[string]errorShape {
	return map[string]errorShape{"/v1": openAIErrorShape}
}

// matrixFixtures are every face's fixtures.
func matrixFixtures() []fixture {
	return []fixture{
		adminKeyFixture(),
		adminOnlyParams(),
		userStorageFixture(),
		// The /v1 face's, in matrix_openai_test.go.
		v1Assistant(),
		v1Thread(),
		v1File(),
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

// userStorageFixture is a value the owner stored for an agent.
func userStorageFixture() fixture {
	const agent = "agt_matrix"
	return fixture{
		Name:   "user storage: value",
		Params: []string{"agentId", "key"},
		Make: func(t *testing.T, n *platformtest.Node, o owner) objects {
			key, secret := "note-"+events.RandomToken(6), "secret-"+events.RandomToken(8)
			if r := n.Do(t, o.Key, "POST", "/api/userstorage/"+agent+"/"+key, map[string]string{"data": `"` + secret + `"`}); r.Status != 200 {
				t.Fatalf("matrix fixture: store a value: %d %s", r.Status, r.Body)
			}
			return objects{Params: map[string]string{"agentId": agent, "key": key}, Secrets: []string{key, secret}}
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
