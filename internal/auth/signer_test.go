package auth_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

const platformURL = "http://contrail.test"

// clock is a test clock that tests move by hand.
type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func signingKV(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	ctx := context.Background()
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1}
	if err := natsx.EnsureBucket(ctx, js, layout, auth.SigningBucketSpec()); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, names.Bucket(auth.SigningBucket))
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

func openSigner(t *testing.T, kv jetstream.KeyValue, now func() time.Time, secret string) *auth.Signer {
	t.Helper()
	s, err := auth.OpenSigner(context.Background(), auth.SignerConfig{KV: kv, Audience: platformURL, Now: now, Secret: secret})
	if err != nil {
		t.Fatalf("open signer: %v", err)
	}
	return s
}

// segments decodes a token's header and payload.
func segments(t *testing.T, token string) (header, payload map[string]any) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	for i, into := range []*map[string]any{&header, &payload} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatal(err)
		}
	}
	return header, payload
}

func TestAgentTokenCarriesTheClaimsAgentsRead(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	clk := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := openSigner(t, signingKV(t, srv.JS), clk.Now, "")
	ctx := context.Background()

	tok, err := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1", SessionID: "ses_1"})
	if err != nil {
		t.Fatal(err)
	}
	header, payload := segments(t, tok)
	jwks, err := s.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if header["alg"] != "EdDSA" || header["kid"] != jwks.Keys[0].Kid {
		t.Fatalf("header %v, want alg EdDSA and the current kid %s", header, jwks.Keys[0].Kid)
	}
	if payload["sub"] != "acct_1" || payload["aid"] != "agt_1" || payload["sid"] != "ses_1" {
		t.Fatalf("payload %v", payload)
	}
	if aud, _ := payload["aud"].([]any); len(aud) != 1 || aud[0] != platformURL {
		t.Fatalf("aud %v, want [%s]", payload["aud"], platformURL)
	}
	iat, exp := payload["iat"].(float64), payload["exp"].(float64)
	if int64(iat) != clk.Now().Unix() || int64(exp-iat) != int64(auth.DefaultTokenLifetime/time.Second) {
		t.Fatalf("iat %v exp %v: want now and now+15m", iat, exp)
	}
	if jti, _ := payload["jti"].(string); len(jti) < 16 {
		t.Fatalf("jti %q is not a unique ID", payload["jti"])
	}
	second, _ := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1"})
	if _, p2 := segments(t, second); p2["jti"] == payload["jti"] {
		t.Fatal("two tokens share a jti")
	}

	got, err := s.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	want := auth.AgentClaims{User: "acct_1", AgentID: "agt_1", AgentName: "agt_1", SessionID: "ses_1", Audience: platformURL}
	if got != want {
		t.Fatalf("verified %+v, want %+v", got, want)
	}

	// A Fixie SDK agent gets the audience it insists on, and the platform takes the token back.
	fixie, err := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_2", Audience: auth.FixieAudience})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(ctx, fixie); err == nil {
		t.Fatal("a token for the Fixie audience verified against the platform's own audience only")
	}
	if c, err := s.Verify(ctx, fixie, platformURL, auth.FixieAudience); err != nil || c.Audience != auth.FixieAudience {
		t.Fatalf("Fixie-audience token: %+v %v", c, err)
	}

	if _, err := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1"}); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("a token without an agent: %v, want invalid", err)
	}
}

// TestTokensNameTheAgentAsFixieDid: "aid" is the agent's "<username>/<handle>", which the Fixie SDK checks against
// FIXIE_ALLOWED_AGENT_ID, "agt" its Contrail ID; "aud" lists the Fixie SDK's audience next to the platform's URL, so
// that an SDK agent accepts the token with no audience set for it, and the platform takes the token back.
func TestTokensNameTheAgentAsFixieDid(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	s, err := auth.OpenSigner(ctx, auth.SignerConfig{KV: signingKV(t, srv.JS), Audience: platformURL,
		Audiences: []string{auth.FixieAudience}})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1", AgentName: "ada/dice"})
	if err != nil {
		t.Fatal(err)
	}
	_, payload := segments(t, tok)
	if payload["aid"] != "ada/dice" || payload["agt"] != "agt_1" {
		t.Fatalf("payload %v: want aid ada/dice and agt agt_1", payload)
	}
	if aud, _ := payload["aud"].([]any); len(aud) != 2 || aud[0] != platformURL || aud[1] != auth.FixieAudience {
		t.Fatalf("aud %v, want [%s %s]", payload["aud"], platformURL, auth.FixieAudience)
	}
	for _, audiences := range [][]string{nil, {auth.FixieAudience}} {
		c, err := s.Verify(ctx, tok, audiences...)
		if err != nil || c.AgentID != "agt_1" || c.AgentName != "ada/dice" || c.User != "acct_1" {
			t.Fatalf("verify for %v: %+v %v", audiences, c, err)
		}
	}
	// An agent registered with an audience of its own gets it, and the Fixie SDK's beside it, once.
	own, _ := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1", Audience: "https://agent.example/api"})
	if _, p := segments(t, own); fmt.Sprint(p["aud"]) != "[https://agent.example/api "+auth.FixieAudience+"]" {
		t.Fatalf("aud %v", p["aud"])
	}
	fixie, _ := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1", Audience: auth.FixieAudience})
	if _, p := segments(t, fixie); fmt.Sprint(p["aud"]) != "["+auth.FixieAudience+"]" {
		t.Fatalf("aud %v", p["aud"])
	}
	if _, err := s.Verify(ctx, tok, "https://elsewhere.test"); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("a token verified for an audience it does not name: %v", err)
	}
}

func TestVerifyRejectsForgedAndStaleTokens(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	clk := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s := openSigner(t, signingKV(t, srv.JS), clk.Now, "")
	ctx := context.Background()
	claims := auth.AgentClaims{User: "acct_1", AgentID: "agt_1"}
	jwks, err := s.JWKS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kid := jwks.Keys[0].Kid
	pub, _ := base64.RawURLEncoding.DecodeString(jwks.Keys[0].X)
	payload := func() jwt.MapClaims {
		now := clk.Now()
		return jwt.MapClaims{"sub": "acct_1", "aid": "agt_1", "aud": []string{platformURL},
			"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(), "jti": "x"}
	}
	sign := func(method jwt.SigningMethod, kid string, key any, claims jwt.MapClaims) string {
		tok := jwt.NewWithClaims(method, claims)
		if kid != "" {
			tok.Header["kid"] = kid
		}
		raw, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	_, stranger, _ := ed25519.GenerateKey(rand.Reader)

	expired, _ := s.AgentToken(ctx, claims)
	clk.Advance(auth.DefaultTokenLifetime + time.Minute)
	fresh, _ := s.AgentToken(ctx, claims)
	wrongAud, _ := s.AgentToken(ctx, auth.AgentClaims{User: "acct_1", AgentID: "agt_1", Audience: "https://elsewhere.test"})
	parts := strings.Split(fresh, ".")
	rawSig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	rawSig[10] ^= 0x01
	sig := base64.RawURLEncoding.EncodeToString(rawSig)
	ours := func(c jwt.MapClaims) string {
		raw, err := auth.SignWithCurrentKey(ctx, s, c)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	noAid := payload()
	delete(noAid, "aid")
	noExp := payload()
	delete(noExp, "exp")
	future := payload()
	future["iat"] = clk.Now().Add(time.Hour).Unix()
	if _, err := s.Verify(ctx, ours(payload())); err != nil {
		t.Fatalf("claims signed with our key: %v", err) // so that the cases below fail for their one flaw
	}

	// Each case is refused for its one flaw: the reason is part of the expectation.
	cases := []struct{ name, token, reason string }{
		{"tampered signature", parts[0] + "." + parts[1] + "." + sig, "verification error"},
		{"tampered payload", parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"acct_admin","aid":"agt_1","aud":["`+platformURL+`"],"exp":9999999999}`)) + "." + parts[2], "verification error"},
		{"alg none", sign(jwt.SigningMethodNone, kid, jwt.UnsafeAllowNoneSignatureType, payload()), "signing method none is invalid"},
		{"HS256 with the public key", sign(jwt.SigningMethodHS256, kid, pub, payload()), "signing method HS256 is invalid"},
		{"HS256 with the JWK's x", sign(jwt.SigningMethodHS256, kid, []byte(jwks.Keys[0].X), payload()), "signing method HS256 is invalid"},
		{"expired", expired, "expired"},
		{"wrong audience", wrongAud, "audience"},
		{"unknown kid", sign(jwt.SigningMethodEdDSA, "not-a-key-of-ours", stranger, payload()), `unknown signing key "not-a-key-of-ours"`},
		{"our kid, another key", sign(jwt.SigningMethodEdDSA, kid, stranger, payload()), "verification error"},
		{"no kid", sign(jwt.SigningMethodEdDSA, "", stranger, payload()), `names no key ("kid")`},
		{"no agent", ours(noAid), `names no agent ("aid")`},
		{"no expiry", ours(noExp), "exp claim is required"},
		{"issued in the future", ours(future), "used before issued"},
		{"not a JWT", "ctr_not.a.jwt", "malformed"},
		{"empty", "", "malformed"},
	}
	for _, c := range cases {
		_, err := s.Verify(ctx, c.token)
		switch {
		case errs.CodeOf(err) != errs.Unauthorized:
			t.Errorf("%s: verify gave %v, want unauthorized", c.name, err)
		case !strings.Contains(err.Error(), c.reason):
			t.Errorf("%s: refused with %q, want a reason containing %q", c.name, err, c.reason)
		case c.token != "" && strings.Contains(err.Error(), c.token):
			t.Errorf("%s: the error repeats the token", c.name)
		}
	}
	if _, err := s.Verify(ctx, fresh); err != nil {
		t.Fatalf("the untampered token of the same moment: %v", err)
	}
}

func TestKeySetIsSharedAndSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := natstest.StartIn(t, dir)
	kv := signingKV(t, srv.JS)

	// Several nodes starting at once on an empty bucket agree on one key set.
	const nodes = 6
	signers := make([]*auth.Signer, nodes)
	var wg sync.WaitGroup
	for i := range signers {
		wg.Go(func() { signers[i] = openSigner(t, kv, time.Now, "") })
	}
	wg.Wait()
	ctx := context.Background()
	first, _ := signers[0].JWKS(ctx)
	for i, s := range signers[1:] {
		other, _ := s.JWKS(ctx)
		if first.Keys[0].Kid != other.Keys[0].Kid || len(other.Keys) != 2 {
			t.Fatalf("node %d has key set %v, node 0 %v", i+1, other, first)
		}
	}
	tok, err := signers[3].AgentToken(ctx, auth.AgentClaims{User: "u", AgentID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signers[5].Verify(ctx, tok); err != nil {
		t.Fatalf("a token from one node on another: %v", err)
	}

	srv.Shutdown()
	again := natstest.StartIn(t, dir)
	s := openSigner(t, signingKV(t, again.JS), time.Now, "")
	if _, err := s.Verify(ctx, tok); err != nil {
		t.Fatalf("a token issued before a restart: %v", err)
	}
	after, _ := s.JWKS(ctx)
	if after.Keys[0].Kid != first.Keys[0].Kid {
		t.Fatalf("the key changed across a restart: %s then %s", first.Keys[0].Kid, after.Keys[0].Kid)
	}
}

func TestRotationKeepsThePreviousKeyUntilItsTokensExpire(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	kv := signingKV(t, srv.JS)
	clk := newClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	nodeA := openSigner(t, kv, clk.Now, "")
	nodeB := openSigner(t, kv, clk.Now, "")
	ctx := context.Background()

	before, _ := nodeA.JWKS(ctx)
	oldKid, nextKid := before.Keys[0].Kid, before.Keys[1].Kid
	old, _ := nodeB.AgentToken(ctx, auth.AgentClaims{User: "u", AgentID: "a"})

	rot, err := nodeA.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rot.Current != nextKid || rot.Retired != oldKid || rot.Next == nextKid || rot.Next == oldKid {
		t.Fatalf("rotation %+v: the published next key %s must become current, %s retire", rot, nextKid, oldKid)
	}
	// Node B follows at once: its next token is signed with the new key.
	tok, _ := nodeB.AgentToken(ctx, auth.AgentClaims{User: "u", AgentID: "a"})
	if h, _ := segments(t, tok); h["kid"] != rot.Current {
		t.Fatalf("node B signed with %v after the rotation on node A, want %s", h["kid"], rot.Current)
	}
	// The previous key is still published and its tokens still verify, on both nodes.
	jwks, _ := nodeB.JWKS(ctx)
	if kids := kidsOf(jwks); !contains(kids, oldKid) || !contains(kids, rot.Current) || !contains(kids, rot.Next) {
		t.Fatalf("JWKS after rotation: %v", kids)
	}
	for _, s := range []*auth.Signer{nodeA, nodeB} {
		if _, err := s.Verify(ctx, old); err != nil {
			t.Fatalf("a token of the previous key, just after rotation: %v", err)
		}
	}
	// Once its tokens have expired, the previous key leaves the JWKS, and the next rotation drops it.
	clk.Advance(auth.DefaultTokenLifetime + time.Minute)
	jwks, _ = nodeA.JWKS(ctx)
	if contains(kidsOf(jwks), oldKid) {
		t.Fatalf("the retired key is still published after its tokens expired: %v", kidsOf(jwks))
	}
	if _, err := nodeA.Verify(ctx, old); err == nil {
		t.Fatal("a token of the retired key verified after it expired")
	}
	second, err := nodeB.Rotate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ = nodeA.JWKS(ctx)
	if kids := kidsOf(jwks); len(kids) != 3 || contains(kids, oldKid) || !contains(kids, second.Retired) {
		t.Fatalf("JWKS after the second rotation: %v", kids)
	}
}

func kidsOf(j auth.JWKS) []string {
	var out []string
	for _, k := range j.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Use != "sig" || k.Alg != "EdDSA" {
			panic("a JWK that is not an Ed25519 signing key")
		}
		out = append(out, k.Kid)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
