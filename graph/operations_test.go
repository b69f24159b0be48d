package graph_test

import (
	"sort"
	"testing"

	"github.com/contrailhq/contrail/graph"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// operationSamples holds one request per root field of the schema; TestEveryOperation fails when the schema gains
// an operation this table does not cover.
var operationSamples = map[string]string{
	"allAgents":          `{ allAgents { agentId } }`,
	"agentById":          `{ agentById(agentId: "agt_nope") { agentId } }`,
	"agentByHandle":      `{ agentByHandle(handle: "fixie") { agentId } }`,
	"user":               `{ user { username dailyQueryLimit dailyUsedQueries } }`,
	"allSessions":        `{ allSessions { handle } }`,
	"sessionByHandle":    `{ sessionByHandle(handle: "ses_nope") { handle } }`,
	"createAgent":        `mutation { createAgent(agentData: {handle: "matrix"}) { agent { agentId } } }`,
	"updateAgent":        `mutation { updateAgent(agentData: {handle: "matrix", name: "M"}) { agent { agentId } } }`,
	"deleteAgent":        `mutation { deleteAgent(handle: "nope") { agent { handle } } }`,
	"refreshAgent":       `mutation { refreshAgent(handle: "nope") { agent { handle } } }`,
	"route":              `{ route(query: "weather in Paris") { agent { handle } score fits } }`,
	"createSession":      `mutation { createSession { session { handle } } }`,
	"deleteSession":      `mutation { deleteSession(handle: "ses_nope") { session { handle } } }`,
	"sendSessionMessage": `mutation { sendSessionMessage(messageData: {session: "ses_nope", text: "hi"}) { message { id } } }`,
	"sessionMessages":    `subscription { sessionMessages(handle: "ses_nope") { kind } }`,
	"sessionEvents":      `subscription { sessionEvents(handle: "ses_nope") { id } }`,
}

// TestEveryOperation: every query, mutation and subscription refuses a request without a key (401,
// UNAUTHENTICATED), and with a key answers data or a coded error, never an internal one.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	var names []string
	for kind, ops := range graph.Operations() {
		for _, op := range ops {
			if _, ok := operationSamples[op]; !ok {
				t.Errorf("%s %s has no sample in operationSamples", kind, op)
			}
			names = append(names, op)
		}
	}
	if t.Failed() {
		return
	}
	sort.Strings(names)
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "matrix")
	for _, op := range names {
		query := operationSamples[op]
		resp := n.Do(t, "", "POST", "/graphql", map[string]any{"query": query})
		var out gqlResponse
		resp.JSON(t, &out)
		if resp.Status != 401 || len(out.Errors) != 1 || out.Errors[0].code() != "UNAUTHENTICATED" {
			t.Errorf("%s without a key: %d %s", op, resp.Status, resp.Body)
		}
		c := client{t: t, n: n, key: key}
		out, status := c.post(query, nil)
		for _, e := range out.Errors {
			if e.code() == "" || e.code() == "INTERNAL_SERVER_ERROR" {
				t.Errorf("%s with a key: %d %+v", op, status, out.Errors)
			}
		}
	}
}
