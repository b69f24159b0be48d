package openaiapi_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The endpoints the Assistants API v2 and the Files API define (reference/assistants-api.md), as chi patterns.
var assistantsEndpoints = []string{
	"GET /v1/assistants", "POST /v1/assistants",
	"GET /v1/assistants/{assistant_id}", "POST /v1/assistants/{assistant_id}", "DELETE /v1/assistants/{assistant_id}",
	"POST /v1/threads", "GET /v1/threads/{thread_id}", "POST /v1/threads/{thread_id}", "DELETE /v1/threads/{thread_id}",
	"GET /v1/threads/{thread_id}/messages", "POST /v1/threads/{thread_id}/messages",
	"GET /v1/threads/{thread_id}/messages/{message_id}", "POST /v1/threads/{thread_id}/messages/{message_id}",
	"DELETE /v1/threads/{thread_id}/messages/{message_id}",
	"POST /v1/threads/runs", "GET /v1/threads/{thread_id}/runs", "POST /v1/threads/{thread_id}/runs",
	"GET /v1/threads/{thread_id}/runs/{run_id}", "POST /v1/threads/{thread_id}/runs/{run_id}",
	"POST /v1/threads/{thread_id}/runs/{run_id}/cancel", "POST /v1/threads/{thread_id}/runs/{run_id}/submit_tool_outputs",
	"GET /v1/threads/{thread_id}/runs/{run_id}/steps", "GET /v1/threads/{thread_id}/runs/{run_id}/steps/{step_id}",
	"GET /v1/files", "POST /v1/files", "GET /v1/files/{file_id}", "DELETE /v1/files/{file_id}", "GET /v1/files/{file_id}/content",
	// The Responses and Conversations APIs (reference/responses-and-mcp.md 1a).
	"POST /v1/responses", "GET /v1/responses/{response_id}", "DELETE /v1/responses/{response_id}",
	"POST /v1/responses/{response_id}/cancel", "GET /v1/responses/{response_id}/input_items", "POST /v1/responses/input_tokens",
	"POST /v1/responses/compact",
	"GET /v1/responses", // the WebSocket mode: an upgrade, else 405
	"POST /v1/conversations", "GET /v1/conversations/{conversation_id}", "POST /v1/conversations/{conversation_id}",
	"DELETE /v1/conversations/{conversation_id}", "GET /v1/conversations/{conversation_id}/items",
	"POST /v1/conversations/{conversation_id}/items", "GET /v1/conversations/{conversation_id}/items/{item_id}",
	"DELETE /v1/conversations/{conversation_id}/items/{item_id}",
	"POST /v1/containers", "GET /v1/containers", "GET /v1/containers/{container_id}", "DELETE /v1/containers/{container_id}",
	"GET /v1/containers/{container_id}/files", "POST /v1/containers/{container_id}/files", "GET /v1/containers/{container_id}/files/{file_id}",
	"DELETE /v1/containers/{container_id}/files/{file_id}", "GET /v1/containers/{container_id}/files/{file_id}/content",
}

// TestEveryRouteAnswersInShape walks the node's router: every endpoint of the reference is there, as the reference
// names it and with no method the API lacks, and every /v1 route refuses a request without a key, and answers one
// with a key for objects that do not exist, with OpenAI's error object and never a 5xx.
func TestEveryRouteAnswersInShape(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "walker")
	var routes []string
	err := chi.Walk(n.Router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		if !strings.HasPrefix(route, "/v1/") {
			return nil
		}
		routes = append(routes, method+" "+route)
		// The API has GET, POST and DELETE; a route registered for every method (chi's Handle) or with a
		// trailing slash is not one of its routes.
		if !slices.Contains([]string{http.MethodGet, http.MethodPost, http.MethodDelete}, method) {
			t.Errorf("%s %s: the API has no such method", method, route)
		}
		if strings.HasSuffix(route, "/") {
			t.Errorf("%s %s: the API's paths have no trailing slash", method, route)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range assistantsEndpoints {
		if !slices.Contains(routes, want) {
			t.Errorf("endpoint %s is not routed (have %v)", want, routes)
		}
	}
	param := regexp.MustCompile(`\{[a-z_]+\}`)
	for _, r := range routes {
		method, pattern, _ := strings.Cut(r, " ")
		path := strings.ReplaceAll(param.ReplaceAllString(pattern, "x_missing"), "*", "x_missing")
		resp := do(t, n, "", method, path, nil)
		if resp.Status != http.StatusUnauthorized {
			t.Errorf("%s %s without a key: %d %s", method, path, resp.Status, resp.Body)
			continue
		}
		checkErrorBody(t, resp.Status, resp.Body)
		resp = do(t, n, key, method, path, `{}`)
		if resp.Status >= 500 {
			t.Errorf("%s %s: %d %s", method, path, resp.Status, resp.Body)
		}
		if resp.Status >= 400 {
			checkErrorBody(t, resp.Status, resp.Body)
		}
	}
}
