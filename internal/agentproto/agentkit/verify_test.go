package agentkit

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/contrailhq/contrail/internal/agentproto"
)

const audience = "http://platform.test"

type signingKey struct {
	kid  string
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

func newKey(t *testing.T, kid string) signingKey {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signingKey{kid: kid, priv: priv, pub: pub}
}

// sign makes a token as the platform would, with claims changed by edit.
func (k signingKey) sign(t *testing.T, edit func(jwt.MapClaims)) string {
	t.Helper()
	claims := jwt.MapClaims{"aid": "agt_echo", "sub": "alice", "aud": audience, "exp": time.Now().Add(time.Minute).Unix()}
	if edit != nil {
		edit(claims)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// jwks serves the public keys it holds and counts how often it is read.
type jwks struct {
	mu      sync.Mutex
	keys    []signingKey
	fetches atomic.Int32
}

func (j *jwks) set(keys ...signingKey) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys = keys
}

func (j *jwks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	j.fetches.Add(1)
	j.mu.Lock()
	defer j.mu.Unlock()
	type jwk struct {
		Kty string `json:"kty"`
		Crv string `json:"crv"`
		X   string `json:"x"`
		Kid string `json:"kid"`
		Alg string `json:"alg"`
		Use string `json:"use"`
	}
	set := struct {
		Keys []jwk `json:"keys"`
	}{}
	// A key of another type is skipped, not fatal.
	set.Keys = append(set.Keys, jwk{Kty: "RSA", Kid: "rsa-1", Use: "sig"})
	for _, k := range j.keys {
		set.Keys = append(set.Keys, jwk{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.pub), Kid: k.kid, Alg: "EdDSA", Use: "sig"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

func serveJWKS(t *testing.T, keys ...signingKey) (*jwks, string) {
	t.Helper()
	j := &jwks{}
	j.set(keys...)
	srv := httptest.NewServer(j)
	t.Cleanup(srv.Close)
	return j, srv.URL + "/.well-known/jwks.json"
}

func TestVerify(t *testing.T) {
	t.Parallel()
	k1 := newKey(t, "k1")
	stranger := newKey(t, "k1") // same key ID, another key
	_, jwksURL := serveJWKS(t, k1)
	v, err := NewVerifier(jwksURL, audience, WithAgentID("agt_echo"))
	if err != nil {
		t.Fatal(err)
	}

	tok, err := v.Verify(context.Background(), k1.sign(t, nil))
	if err != nil {
		t.Fatalf("Verify(valid token): %v", err)
	}
	if tok.AgentID != "agt_echo" || tok.User != "alice" || tok.Anonymous() {
		t.Errorf("Verify = %+v", tok)
	}
	anon, err := v.Verify(context.Background(), k1.sign(t, func(c jwt.MapClaims) { delete(c, "sub") }))
	if err != nil || !anon.Anonymous() {
		t.Errorf("Verify(token without sub) = %+v, %v; want an anonymous token", anon, err)
	}

	// The public key is public: a token "signed" with it as an HMAC secret must not pass.
	hs256, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"aid": "agt_echo", "aud": audience,
		"exp": time.Now().Add(time.Minute).Unix()}).SignedString([]byte(k1.pub))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		token string
		says  string
	}{
		{"expired", k1.sign(t, func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() }), "token is expired"},
		{"no expiry", k1.sign(t, func(c jwt.MapClaims) { delete(c, "exp") }), "exp claim is required"},
		{"wrong audience", k1.sign(t, func(c jwt.MapClaims) { c["aud"] = "http://elsewhere.test" }), "invalid audience"},
		{"no agent", k1.sign(t, func(c jwt.MapClaims) { delete(c, "aid") }), `names no agent (claim "aid")`},
		{"another agent", k1.sign(t, func(c jwt.MapClaims) { c["aid"] = "agt_other" }), `it is for agent "agt_other", not this agent ("agt_echo")`},
		{"another key", stranger.sign(t, nil), "signature is invalid"},
		{"HMAC with the public key", hs256, "signing method HS256 is invalid"},
		{"garbage", "not.a.token", "invalid token"},
	}
	for _, tt := range tests {
		_, err := v.Verify(context.Background(), tt.token)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s: Verify = %v, want an error saying %q", tt.name, err, tt.says)
		}
	}
}

func TestVerifierFollowsKeyRotation(t *testing.T) {
	t.Parallel()
	k1, k2 := newKey(t, "k1"), newKey(t, "k2")
	set, jwksURL := serveJWKS(t, k1)

	lazy, _ := NewVerifier(jwksURL, audience, WithRefreshInterval(time.Hour))
	eager, _ := NewVerifier(jwksURL, audience, WithRefreshInterval(0))
	for _, v := range []*Verifier{lazy, eager} {
		if _, err := v.Verify(context.Background(), k1.sign(t, nil)); err != nil {
			t.Fatalf("Verify(k1): %v", err)
		}
	}
	if n := set.fetches.Load(); n != 2 {
		t.Fatalf("JWKS fetched %d times, want once per verifier", n)
	}
	// Verifying again uses the cached keys.
	if _, err := eager.Verify(context.Background(), k1.sign(t, nil)); err != nil || set.fetches.Load() != 2 {
		t.Fatalf("Verify(k1) again = %v after %d fetches, want the cached key", err, set.fetches.Load())
	}

	set.set(k2) // the platform rotates its key
	if _, err := eager.Verify(context.Background(), k2.sign(t, nil)); err != nil {
		t.Errorf("Verify(k2) after rotation: %v", err)
	}
	_, err := lazy.Verify(context.Background(), k2.sign(t, nil))
	if err == nil || !strings.Contains(err.Error(), `no key "k2"`) {
		t.Errorf("Verify(k2) within the refresh interval = %v, want it refused without a fetch", err)
	}
	if n := set.fetches.Load(); n != 3 {
		t.Errorf("JWKS fetched %d times, want 3 (one refetch, by the eager verifier only)", n)
	}
}

func TestNewVerifierNeedsAudience(t *testing.T) {
	t.Parallel()
	if _, err := NewVerifier("http://platform.test/.well-known/jwks.json", ""); err == nil {
		t.Error("NewVerifier without an audience succeeded")
	}
}

func TestVerifierUnreachableJWKS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	v, _ := NewVerifier(srv.URL+"/jwks.json", audience)
	_, err := v.Verify(context.Background(), newKey(t, "k1").sign(t, nil))
	if err == nil || !strings.Contains(err.Error(), "HTTP 404") {
		t.Errorf("Verify with a missing JWKS = %v, want it to say the JWKS answered 404", err)
	}
}

// platformTokens signs tokens for the agent client as the platform does.
type platformTokens struct {
	t   *testing.T
	key signingKey
}

func (p platformTokens) AgentToken(_ context.Context, c agentproto.Claims) (string, error) {
	return p.key.sign(p.t, func(m jwt.MapClaims) {
		m["aid"], m["sub"], m["aud"] = c.AgentID, c.User, c.Audience
	}), nil
}

func TestAgentVerifiesPlatformTokens(t *testing.T) {
	t.Parallel()
	key := newKey(t, "k1")
	_, jwksURL := serveJWKS(t, key)
	v, err := NewVerifier(jwksURL, audience, WithAgentID("agt_echo"))
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, echoAgent(), WithVerifier(v))
	platform := agentproto.NewClient(agentproto.WithTokenSource(platformTokens{t, key}), agentproto.WithAudience(audience))
	ctx := context.Background()
	alice := agentproto.Claims{User: "alice", AgentID: "agt_echo"}

	if _, err := platform.Metadata(ctx, srv.URL, alice); err != nil {
		t.Errorf("Metadata with a valid token: %v", err)
	}
	got, err := platform.CallFunc(ctx, srv.URL, "echo", agentproto.Message{Text: "hi"}, alice)
	if err != nil || got.Text != "hi (for alice)" {
		t.Errorf("CallFunc with a valid token = %+v, %v", got, err)
	}

	_, err = platform.CallFunc(ctx, srv.URL, "echo", agentproto.Message{Text: "hi"}, agentproto.Claims{User: "alice", AgentID: "agt_other"})
	if !errors.Is(err, agentproto.ErrUnauthorized) || !strings.Contains(err.Error(), `it is for agent "agt_other"`) {
		t.Errorf("CallFunc with another agent's token = %v, want ErrUnauthorized saying why", err)
	}
	_, err = agentproto.NewClient().CallFunc(ctx, srv.URL, "echo", agentproto.Message{Text: "hi"}, alice)
	if !errors.Is(err, agentproto.ErrUnauthorized) || !strings.Contains(err.Error(), "no bearer token") {
		t.Errorf("CallFunc without a token = %v, want ErrUnauthorized", err)
	}
}
