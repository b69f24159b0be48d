package main

import (
	"strings"
	"testing"
)

// A wrong key on the CLI says in words what was refused and what to check, on every face the CLI calls, rather
// than the face's JSON.
func TestCLIWrongKey(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	for _, args := range [][]string{
		{"agents", "list"},                   // GraphQL
		{"keys", "list"},                     // the admin API
		{"replay", "session", "ses_nothere"}, // the events endpoint
		{"executions", "get", "execution_x"}, // /julep
	} {
		_, errOut, code := n.run(t, "ctr_wrong", "", args...)
		if code == 0 || !strings.Contains(errOut, "refused the API key from CONTRAIL_API_KEY") ||
			!strings.Contains(errOut, "Check CONTRAIL_API_KEY") || !strings.Contains(errOut, "401") ||
			strings.Contains(errOut, "{") {
			t.Errorf("contrail %s with a wrong key: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
	}
	// A key that is good but not an admin's is refused for what it asked, not as a wrong key.
	key := lastLine(n.cli(t, n.adminKey(t), "accounts", "create", "ada"))
	_, errOut, code := n.run(t, key, "", "accounts", "list")
	if code == 0 || !strings.Contains(errOut, "may not do this") || !strings.Contains(errOut, "403") || strings.Contains(errOut, "Check CONTRAIL_API_KEY") {
		t.Errorf("a user's key listing accounts: exit %d\n%s", code, errOut)
	}
	// chat's websocket is refused in the same words.
	_, errOut, code = n.run(t, "ctr_wrong", "", "chat")
	if code == 0 || !strings.Contains(errOut, "refused the API key") {
		t.Errorf("chat with a wrong key: exit %d\n%s", code, errOut)
	}
}
