package platform_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAnAgentCallsBackWithTheTokenItWasGiven is seed 000's user storage story end to end: the platform calls an
// agent's func with a token for the user; the agent verifies it against the platform's JWKS and, with the same
// token, stores something for that user in user storage; the user finds it with their own key.
func TestAnAgentCallsBackWithTheTokenItWasGiven(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	alice, aliceKey := n.NewAccount(t, "alice")
	// Alice's agent: user storage keeps values only for agents their user may use. The platform is not asked to
	// call it here (the test calls its func directly), so its registered URL answers nothing.
	nowhere := "http://127.0.0.1:9/"
	registered, err := n.RegisterAgent(context.Background(), alice, commands.AgentInput{Handle: "prefs", QueryURL: &nowhere})
	if err != nil {
		t.Fatal(err)
	}
	agentID := registered.ID

	verifier, err := agentkit.NewVerifier(n.URL+"/.well-known/jwks.json", n.Config.Public(), agentkit.WithAgentID(agentID))
	if err != nil {
		t.Fatal(err)
	}
	remember := func(ctx context.Context, call agentkit.Call) (agentproto.Message, error) {
		value, _ := json.Marshal(map[string]string{"data": `"` + call.Message.Text + `"`})
		req, _ := http.NewRequestWithContext(ctx, "POST", n.URL+"/api/userstorage/"+agentID+"/color", bytes.NewReader(value))
		req.Header.Set("Authorization", "Bearer "+call.Token.Raw)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return agentproto.Message{}, err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return agentproto.Message{}, fmt.Errorf("user storage answered %d", resp.StatusCode)
		}
		return agentproto.Message{Text: "remembered for " + call.Token.User}, nil
	}
	agent, err := agentkit.New(agentkit.Agent{
		BasePrompt: "I remember colors.",
		FewShots:   []string{"Q: Remember blue\nAsk Func[remember]: blue\nFunc[remember] says: remembered\nA: I will remember blue."},
		Funcs:      map[string]agentkit.Func{"remember": remember},
	}, agentkit.WithVerifier(verifier))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(agent)
	t.Cleanup(srv.Close)

	client := agentproto.NewClient(agentproto.WithTokenSource(n.AgentTokens()), agentproto.WithAudience(n.Config.Public()))
	ctx := context.Background()
	reply, err := client.CallFunc(ctx, srv.URL, "remember", agentproto.Message{Text: "teal"},
		agentproto.Claims{User: alice.AccountID, AgentID: agentID, SessionID: "ses_1"})
	if err != nil {
		t.Fatalf("call the agent: %v", err)
	}
	if reply.Text != "remembered for "+alice.AccountID {
		t.Fatalf("reply %q", reply.Text)
	}
	r := n.Do(t, aliceKey, "GET", "/api/userstorage/"+agentID+"/color", nil)
	if r.Status != 200 || string(r.Body) != `{"data":"\"teal\""}`+"\n" {
		t.Fatalf("what the agent stored, read by its user: %d %s", r.Status, r.Body)
	}

	// A token made for another agent is refused by this one.
	if _, err := client.CallFunc(ctx, srv.URL, "remember", agentproto.Message{Text: "red"},
		agentproto.Claims{User: alice.AccountID, AgentID: "agt_other"}); err == nil {
		t.Fatal("the agent accepted a token issued for another agent")
	}
}
