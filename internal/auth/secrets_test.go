package auth_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// TestNoSecretLeavesItsPlace uses keys and agent tokens the way clients and agents do, then reads everything the
// platform wrote — its logs and every message of every stream, which holds the event log and every KV bucket with
// its history — and finds no raw API key, no agent token and no private signing key. Without a signing secret
// the private keys are, by design, in the signing bucket and nowhere else.
func TestNoSecretLeavesItsPlace(t *testing.T) {
	t.Parallel()
	for _, sealed := range []bool{true, false} {
		name := "unsealed signing keys"
		if sealed {
			name = "sealed signing keys"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			adminKey := auth.NewKey()
			n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) {
				c.AdminKey = adminKey // the CONTRAIL_ADMIN_KEY path
				if sealed {
					c.SigningSecret = "operator secret " + adminKey[:8]
				}
			}))
			raw := useSecrets(t, n, adminKey)
			seeds, err := auth.PrivateSeeds(context.Background(), n.Signer)
			if err != nil {
				t.Fatal(err)
			}
			if len(seeds) < 3 {
				t.Fatalf("%d signing keys after a rotation, want at least 3", len(seeds))
			}

			if s := firstFound(n.Logs.String(), raw); s != "" {
				t.Errorf("the logs hold a secret (%s…)", s[:10])
			}
			if leaked([]byte(n.Logs.String()), seeds) {
				t.Error("the logs hold a private signing key")
			}
			signingStream := "KV_" + n.Layout.Names.Bucket(auth.SigningBucket)
			messages := 0
			forEachMessage(t, n.JS, func(stream string, data []byte) {
				messages++
				if s := firstFound(string(data), raw); s != "" {
					t.Errorf("stream %s holds a secret (%s…)", stream, s[:10])
				}
				if leaked(data, seeds) && (sealed || stream != signingStream) {
					t.Errorf("stream %s holds a private signing key", stream)
				}
			})
			if messages < 20 {
				t.Fatalf("read only %d messages: the scan proves nothing", messages)
			}
		})
	}
}

// useSecrets creates accounts and keys, uses and revokes them, issues and uses agent tokens, rotates the signing
// key and tries bad credentials. It returns every raw secret that went by.
func useSecrets(t *testing.T, n *platformtest.Node, adminKey string) []string {
	t.Helper()
	ctx := context.Background()
	secrets := []string{adminKey}
	var created struct {
		AccountID string `json:"account_id"`
		KeyID     string `json:"key_id"`
		Key       string `json:"key"`
	}
	r := n.Do(t, adminKey, "POST", "/admin/accounts", map[string]any{"name": "erin", "daily_query_limit": 10})
	r.JSON(t, &created)
	if r.Status != 201 {
		t.Fatalf("create account: %d %s", r.Status, r.Body)
	}
	user := created.Key
	secrets = append(secrets, user)
	r = n.Do(t, user, "POST", "/admin/keys", map[string]string{"name": "second"})
	var second struct {
		KeyID string `json:"key_id"`
		Key   string `json:"key"`
	}
	r.JSON(t, &second)
	secrets = append(secrets, second.Key)
	if r := n.Do(t, second.Key, "DELETE", "/admin/keys/"+second.KeyID, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	for _, k := range []string{user, second.Key, auth.NewKey(), "not-even-a-key"} {
		n.Do(t, k, "GET", "/admin/whoami", nil)
		n.Do(t, k, "POST", "/api/userstorage/agt_1/pref", map[string]string{"data": `"x"`})
	}
	chosen := auth.NewKey() // a key given by its owner, as CONTRAIL_ADMIN_KEY is
	if r := n.Do(t, adminKey, "POST", "/admin/keys?account="+created.AccountID, map[string]string{"name": "chosen"}); r.Status != 201 {
		t.Fatalf("issue: %d", r.Status)
	}
	issued, err := n.Commands.Accounts.IssueKey(ctx, auth.Principal{AccountID: created.AccountID}, created.AccountID, "chosen", chosen)
	n.Shown(t, "issue a chosen key", issued.Appended, err, projections.Accounts{})
	secrets = append(secrets, chosen)
	for range 2 {
		tok, err := n.Signer.AgentToken(ctx, auth.AgentClaims{User: created.AccountID, AgentID: "agt_1", SessionID: "ses_1"})
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, tok)
		if r := n.Do(t, tok, "POST", "/api/userstorage/agt_1/pref", map[string]string{"data": `"dark"`}); r.Status != 200 {
			t.Fatalf("agent storing: %d %s", r.Status, r.Body)
		}
		n.Do(t, tok, "GET", "/admin/whoami", nil)
		n.Do(t, tok[:len(tok)-2]+"xx", "GET", "/api/userstorage/agt_1/pref", nil)
		if r := n.Do(t, adminKey, "POST", "/admin/signing-keys/rotate", nil); r.Status != 200 {
			t.Fatalf("rotate: %d", r.Status)
		}
	}
	if err := n.Limits.CountQuery(ctx, auth.Principal{AccountID: created.AccountID, KeyID: created.KeyID}); err != nil {
		t.Fatal(err)
	}
	// A raw key is also recognisable by what follows its hint: that part must not appear either.
	out := secrets
	for _, s := range secrets {
		if strings.HasPrefix(s, auth.KeyPrefix) {
			out = append(out, s[len(auth.KeyPrefix)+6:])
		}
	}
	return out
}

func firstFound(haystack string, secrets []string) string {
	for _, s := range secrets {
		if strings.Contains(haystack, s) {
			return s
		}
	}
	return ""
}

// forEachMessage calls fn with the headers and body of every message of every stream.
func forEachMessage(t *testing.T, js jetstream.JetStream, fn func(stream string, data []byte)) {
	t.Helper()
	ctx := context.Background()
	names := js.StreamNames(ctx)
	var streams []string
	for s := range names.Name() {
		streams = append(streams, s)
	}
	if err := names.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range streams {
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		info := s.CachedInfo().State
		for seq := info.FirstSeq; seq <= info.LastSeq && info.Msgs > 0; seq++ {
			m, err := s.GetMsg(ctx, seq)
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				continue
			}
			if err != nil {
				t.Fatalf("read %s #%d: %v", name, seq, err)
			}
			var all bytes.Buffer
			all.WriteString(m.Subject)
			for k, vs := range m.Header {
				all.WriteString(k + ": " + strings.Join(vs, ",") + "\n")
			}
			all.Write(m.Data)
			fn(name, all.Bytes())
		}
	}
}
