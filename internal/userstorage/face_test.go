package userstorage_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/userstorage"
)

// sdkValue is what the Fixie SDK posts: "data" is a JSON document encoded as a JSON string.
func sdkValue(t *testing.T, v any) map[string]string {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"data": string(raw)}
}

func path(agent, key string) string {
	p := "/api/userstorage/" + url.PathEscape(agent)
	if key != "" {
		p += "/" + url.PathEscape(key)
	}
	return p
}

// registerAgent registers an agent of the account behind key (at a URL nothing answers: storage does not call it)
// and returns its ID. Storage is kept only for agents the caller may use.
func registerAgent(t *testing.T, n *platformtest.Node, p auth.Principal, handle string) string {
	t.Helper()
	u := "http://127.0.0.1:9/"
	a, err := n.RegisterAgent(context.Background(), p, commands.AgentInput{Handle: handle, QueryURL: &u})
	if err != nil {
		t.Fatalf("register agent %s: %v", handle, err)
	}
	return a.ID
}

func keysOf(t *testing.T, r platformtest.Response) []string {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var items []struct {
		Key string `json:"key"`
	}
	r.JSON(t, &items)
	out := []string{}
	for _, it := range items {
		out = append(out, it.Key)
	}
	return out
}

func TestUserStorageSpeaksTheFixieSDKShapes(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	alice, key := n.NewAccount(t, "alice")
	agent := registerAgent(t, n, alice, "notes")

	if got := keysOf(t, n.Do(t, key, "GET", path(agent, ""), nil)); len(got) != 0 {
		t.Fatalf("a fresh storage lists %v", got)
	}
	value := map[string]any{"key1": map[string]any{"key2": []any{12, false, nil, map[string]string{"type": "_bytes_ascii", "data": "YmluYXJ5"}}}}
	names := []string{"complex-key", "with space", "slash/inside", "ключ", "100%", "dots.and..more"}
	for _, k := range names {
		if r := n.Do(t, key, "POST", path(agent, k), sdkValue(t, value)); r.Status != 200 {
			t.Fatalf("POST %q: %d %s", k, r.Status, r.Body)
		}
	}
	for _, k := range names {
		r := n.Do(t, key, "GET", path(agent, k), nil)
		var got struct {
			Data string `json:"data"`
		}
		r.JSON(t, &got)
		if r.Status != 200 || got.Data != sdkValue(t, value)["data"] {
			t.Fatalf("GET %q: %d %s", k, r.Status, r.Body)
		}
		if r := n.Do(t, key, "HEAD", path(agent, k), nil); r.Status != 200 || len(r.Body) != 0 {
			t.Fatalf("HEAD %q: %d %q", k, r.Status, r.Body)
		}
	}
	listed := keysOf(t, n.Do(t, key, "GET", path(agent, ""), nil))
	if strings.Join(listed, "|") != "100%|complex-key|dots.and..more|slash/inside|with space|ключ" {
		t.Fatalf("list: %q", listed)
	}
	// Any JSON value may be stored; it comes back as it went in.
	if r := n.Do(t, key, "POST", path(agent, "raw"), `{"data": {"n": 1, "list": [1, 2]}}`); r.Status != 200 {
		t.Fatalf("POST a JSON object: %d %s", r.Status, r.Body)
	}
	var raw struct {
		Data struct {
			N    int   `json:"n"`
			List []int `json:"list"`
		} `json:"data"`
	}
	if r := n.Do(t, key, "GET", path(agent, "raw"), nil); json.Unmarshal(r.Body, &raw) != nil || raw.Data.N != 1 || len(raw.Data.List) != 2 {
		t.Fatalf("GET a JSON object: %s", r.Body)
	}

	if r := n.Do(t, key, "DELETE", path(agent, "with space"), nil); r.Status != 200 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	for _, m := range []string{"GET", "HEAD", "DELETE"} {
		if r := n.Do(t, key, m, path(agent, "with space"), nil); r.Status != 404 {
			t.Fatalf("%s of a deleted key: %d %s", m, r.Status, r.Body)
		}
	}
	// Storage belongs to (user, agent): another agent of the same user sees none of it.
	if got := keysOf(t, n.Do(t, key, "GET", path("fixie", ""), nil)); len(got) != 0 {
		t.Fatalf("another agent's storage lists %v", got)
	}
	// Another user cannot use alice's unpublished agent at all: its storage is not found, as the agent is not.
	_, bob := n.NewAccount(t, "bob")
	for _, m := range []string{"GET", "POST", "DELETE"} {
		for _, p := range []string{path(agent, ""), path(agent, "complex-key")} {
			if m != "GET" && p == path(agent, "") {
				continue
			}
			r := n.Do(t, bob, m, p, sdkValue(t, "planted"))
			if r.Status != 404 || bytes.Contains(r.Body, []byte("key1")) {
				t.Errorf("another user: %s %s on alice's unpublished agent: %d %s", m, p, r.Status, r.Body)
			}
		}
	}
	if r := n.Do(t, key, "GET", path(agent, "complex-key"), nil); r.Status != 200 || !bytes.Contains(r.Body, []byte("key1")) {
		t.Fatalf("alice's value after bob's requests: %d %s", r.Status, r.Body)
	}
	// Published, the agent is one bob may use: he keeps his own storage for it, and sees none of alice's.
	published := true
	n.UpdateAgent(t, alice, commands.AgentInput{Handle: "notes", Published: &published})
	if got := keysOf(t, n.Do(t, bob, "GET", path(agent, ""), nil)); len(got) != 0 {
		t.Fatalf("another user lists %v", got)
	}
	if r := n.Do(t, bob, "GET", path(agent, "complex-key"), nil); r.Status != 404 || bytes.Contains(r.Body, []byte("key1")) {
		t.Fatalf("another user reading alice's key: %d %s", r.Status, r.Body)
	}
}

func TestUserStorageRefusesBadInputByName(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "carol")
	cases := []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"anonymous", "GET", path("fixie", ""), nil, 401, "missing API key"},
		{"not JSON", "POST", path("fixie", "k"), "nope", 400, `"field":"data"`},
		{"no data", "POST", path("fixie", "k"), `{"other": 1}`, 400, "missing required parameter: 'data'"},
		{"key too long", "POST", path("fixie", strings.Repeat("k", userstorage.MaxKeyLength+1)), `{"data": 1}`, 400, `"field":"key"`},
		{"control character", "POST", "/api/userstorage/fixie/a%00b", `{"data": 1}`, 400, "control character"},
		{"value too large", "POST", path("fixie", "big"), `{"data": "` + strings.Repeat("x", userstorage.MaxValueSize) + `"}`, 413, "1 MiB"},
		{"body too large", "POST", path("fixie", "big"), strings.Repeat(" ", userstorage.MaxValueSize+8<<10), 413, "1 MiB"},
	}
	for _, c := range cases {
		k := key
		if c.name == "anonymous" {
			k = ""
		}
		r := n.Do(t, k, c.method, c.path, c.body)
		if r.Status != c.status || !strings.Contains(string(r.Body), c.want) {
			t.Errorf("%s: %d %.200s; want %d naming %q", c.name, r.Status, r.Body, c.status, c.want)
		}
	}
}

func TestUserStorageKeepsValuesUpToOneMiB(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "dave")
	// A JSON string of exactly 1 MiB: too big for one NATS message under the default max_payload.
	big := `"` + strings.Repeat("0123456789abcdef", (userstorage.MaxValueSize-2)/16) + strings.Repeat("z", (userstorage.MaxValueSize-2)%16) + `"`
	if len(big) != userstorage.MaxValueSize {
		t.Fatalf("test value is %d bytes", len(big))
	}
	if r := n.Do(t, key, "POST", path("fixie", "big"), `{"data":`+big+`}`); r.Status != 200 {
		t.Fatalf("POST 1 MiB: %d %s", r.Status, r.Body)
	}
	r := n.Do(t, key, "GET", path("fixie", "big"), nil)
	if r.Status != 200 || string(r.Body) != `{"data":`+big+"}\n" {
		t.Fatalf("GET 1 MiB: %d, %d bytes", r.Status, len(r.Body))
	}

	// Writers racing on one key leave one whole value, never a mix of chunks, and no chunks behind.
	values := make([]string, 4)
	for i := range values {
		values[i] = `"` + strings.Repeat(string(rune('a'+i)), 600<<10) + `"`
	}
	var wg sync.WaitGroup
	for _, v := range values {
		wg.Go(func() {
			if r := n.Do(t, key, "POST", path("fixie", "race"), `{"data":`+v+`}`); r.Status != 200 {
				t.Errorf("racing POST: %d %s", r.Status, r.Body)
			}
		})
	}
	wg.Wait()
	r = n.Do(t, key, "GET", path("fixie", "race"), nil)
	whole := false
	for _, v := range values {
		whole = whole || string(r.Body) == `{"data":`+v+"}\n"
	}
	if !whole {
		t.Fatalf("after racing writes the value is none of those written (%d bytes)", len(r.Body))
	}
	for _, k := range []string{"race", "big"} {
		if r := n.Do(t, key, "DELETE", path("fixie", k), nil); r.Status != 200 {
			t.Fatalf("DELETE %s: %d", k, r.Status)
		}
	}
	kv, err := n.JS.KeyValue(context.Background(), n.Layout.Names.Bucket(userstorage.Bucket))
	if err != nil {
		t.Fatal(err)
	}
	lister, err := kv.ListKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k := range lister.Keys() {
		t.Errorf("key %s is left in the bucket after every value was deleted", k)
	}
}

func TestAgentsReachOnlyTheirOwnStorageWithTheirToken(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(time.Now().UnixNano())
	n := platformtest.Start(t, platformtest.WithClock(func() time.Time { return time.Unix(0, now.Load()) }))
	alice, key := n.NewAccount(t, "alice")
	ctx := context.Background()
	agent := registerAgent(t, n, alice, "prefs")
	token := func(c auth.AgentClaims) string {
		tok, err := n.Signer.AgentToken(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	tok := token(auth.AgentClaims{User: alice.AccountID, AgentID: agent, SessionID: "ses_1"})
	if r := n.Do(t, tok, "POST", path(agent, "prefs"), sdkValue(t, "dark mode")); r.Status != 200 {
		t.Fatalf("the agent storing for its user: %d %s", r.Status, r.Body)
	}
	// The user sees what the agent stored for them, and the Fixie SDK's audience works the same.
	if got := keysOf(t, n.Do(t, key, "GET", path(agent, ""), nil)); len(got) != 1 || got[0] != "prefs" {
		t.Fatalf("the user lists %v", got)
	}
	fixie := token(auth.AgentClaims{User: alice.AccountID, AgentID: agent, Audience: auth.FixieAudience})
	if r := n.Do(t, fixie, "GET", path(agent, "prefs"), nil); r.Status != 200 {
		t.Fatalf("a Fixie SDK agent's token: %d %s", r.Status, r.Body)
	}

	refused := []struct {
		name, token, path string
		status            int
		want              string
	}{
		{"another agent's storage", tok, path("agt_2", "prefs"), 403, "issued to another agent"},
		{"an anonymous token", token(auth.AgentClaims{AgentID: agent}), path(agent, "prefs"), 401, "anonymous"},
		{"a user that does not exist", token(auth.AgentClaims{User: "acct_nobody", AgentID: agent}), path(agent, "prefs"), 401, "its user does not exist"},
		{"another platform's audience", elsewhere(t, n, auth.AgentClaims{User: alice.AccountID, AgentID: agent}), path(agent, "prefs"), 401, "audience"},
		{"the admin face", tok, "/admin/whoami", 403, "agent token"},
		{"the admin face, keys", tok, "/admin/keys", 403, "agent token"},
	}
	for _, c := range refused {
		r := n.Do(t, c.token, "GET", c.path, nil)
		if r.Status != c.status || !strings.Contains(string(r.Body), c.want) || strings.Contains(string(r.Body), "dark mode") {
			t.Errorf("%s: %d %s; want %d naming %q", c.name, r.Status, r.Body, c.status, c.want)
		}
	}
	// The token lives as long as a query may: after that the agent needs the fresh one of its next call.
	now.Add(int64(auth.DefaultTokenLifetime + time.Minute))
	if r := n.Do(t, tok, "GET", path(agent, "prefs"), nil); r.Status != 401 || !strings.Contains(string(r.Body), "expired") {
		t.Fatalf("an expired token: %d %s", r.Status, r.Body)
	}
}

// elsewhere signs a token with the node's keys for another platform's audience only, as a deployment that shares the
// key set but not the URL would.
func elsewhere(t *testing.T, n *platformtest.Node, c auth.AgentClaims) string {
	t.Helper()
	kv, err := n.JS.KeyValue(t.Context(), n.Layout.Names.Bucket(auth.SigningBucket))
	if err != nil {
		t.Fatal(err)
	}
	s, err := auth.OpenSigner(t.Context(), auth.SignerConfig{KV: kv, Audience: "https://elsewhere.test"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.AgentToken(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestTheFixieSDKNamesTheAgentInThePath is user storage as the Fixie SDK calls it: the agent's "aid",
// "<username>/<handle>", written into the path as it is. Its values are the ones its ID reaches; another account
// cannot reach them by either name.
func TestTheFixieSDKNamesTheAgentInThePath(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	alice, key := n.NewAccount(t, "alice")
	_, bobKey := n.NewAccount(t, "bob")
	unreachable := "http://127.0.0.1:9/"
	agent, err := n.RegisterAgent(ctx, alice, commands.AgentInput{Handle: "notes", QueryURL: &unreachable})
	if err != nil {
		t.Fatal(err)
	}
	name, err := n.Commands.Agents.FixieName(ctx, alice.AccountID, "notes")
	if err != nil || name != "alice/notes" {
		t.Fatalf("the agent's Fixie name: %q %v", name, err)
	}
	tok, err := n.Signer.AgentToken(ctx, auth.AgentClaims{User: alice.AccountID, AgentID: agent.ID, AgentName: name})
	if err != nil {
		t.Fatal(err)
	}
	if r := n.Do(t, tok, "POST", "/api/userstorage/alice/notes/color", sdkValue(t, "teal")); r.Status != 200 {
		t.Fatalf("the agent storing under its Fixie name: %d %s", r.Status, r.Body)
	}
	if got := keysOf(t, n.Do(t, tok, "GET", "/api/userstorage/alice/notes", nil)); len(got) != 1 || got[0] != "color" {
		t.Fatalf("the agent lists %v under its Fixie name", got)
	}
	for _, p := range []string{path(agent.ID, "color"), "/api/userstorage/alice/notes/color"} {
		var got struct{ Data string }
		r := n.Do(t, key, "GET", p, nil)
		r.JSON(t, &got)
		if r.Status != 200 || got.Data != `"teal"` {
			t.Fatalf("alice reads %s: %d %s", p, r.Status, r.Body)
		}
	}
	if r := n.Do(t, bobKey, "GET", "/api/userstorage/alice/notes/color", nil); r.Status != 404 || strings.Contains(string(r.Body), "teal") {
		t.Fatalf("bob on alice's unpublished agent by its name: %d %s", r.Status, r.Body)
	}
	// From anyone but the agent, /{a}/{b} is key b of agent a.
	if r := n.Do(t, key, "GET", "/api/userstorage/alice/notes", nil); r.Status != 404 {
		t.Fatalf("alice's key on /alice/notes: %d %s, want 404 (no key notes of an agent alice)", r.Status, r.Body)
	}
	other, _ := n.Signer.AgentToken(ctx, auth.AgentClaims{User: alice.AccountID, AgentID: "agt_other", AgentName: "alice/other"})
	if r := n.Do(t, other, "GET", "/api/userstorage/alice/notes/color", nil); r.Status != 403 {
		t.Fatalf("another agent's token on this agent's name: %d %s", r.Status, r.Body)
	}
	for _, bad := range []string{"/api/userstorage/ali%20ce/notes/color", "/api/userstorage/alice/No*tes/color"} {
		if r := n.Do(t, key, "GET", bad, nil); r.Status != 400 || !strings.Contains(string(r.Body), "username") && !strings.Contains(string(r.Body), "handle") {
			t.Errorf("%s: %d %s, want 400 naming what is wrong", bad, r.Status, r.Body)
		}
	}
}
