package platform_test

import (
	"context"
	"strings"
	"testing"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// TestAgentTokensVerifyWithAStandardJWKSClient is what an agent does: fetch the platform's JWKS over HTTP with a
// common client library and verify a token with it, as the Fixie SDK did with PyJWKClient.
func TestAgentTokensVerifyWithAStandardJWKSClient(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	alice, _ := n.NewAccount(t, "alice")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	r := n.Do(t, "", "GET", "/.well-known/jwks.json", nil)
	var set auth.JWKS
	r.JSON(t, &set)
	if r.Status != 200 || len(set.Keys) != 2 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("JWKS without a key: %d %s", r.Status, r.Body)
	}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || k.Use != "sig" || k.Kid == "" || k.Alg != "EdDSA" || len(k.X) != 43 {
			t.Fatalf("JWK %+v is not an Ed25519 signing key with a kid", k)
		}
	}

	jwks, err := keyfunc.NewDefaultCtx(ctx, []string{n.URL + "/.well-known/jwks.json"})
	if err != nil {
		t.Fatal(err)
	}
	verify := func(token, audience string) (jwt.MapClaims, error) {
		claims := jwt.MapClaims{}
		_, err := jwt.ParseWithClaims(token, claims, jwks.Keyfunc, jwt.WithValidMethods([]string{"EdDSA"}),
			jwt.WithAudience(audience), jwt.WithExpirationRequired())
		return claims, err
	}
	tok, err := n.Signer.AgentToken(ctx, auth.AgentClaims{User: alice.AccountID, AgentID: "agt_1", SessionID: "ses_1"})
	if err != nil {
		t.Fatal(err)
	}
	claims, err := verify(tok, n.Config.Public())
	if err != nil {
		t.Fatalf("keyfunc refused the platform's token: %v", err)
	}
	if claims["sub"] != alice.AccountID || claims["aid"] != "agt_1" || claims["sid"] != "ses_1" || claims["jti"] == nil || claims["iat"] == nil {
		t.Fatalf("claims %v", claims)
	}
	// Every token also carries the audience the Fixie SDK insists on, so an SDK agent needs no setting for it.
	if _, err := verify(tok, auth.FixieAudience); err != nil {
		t.Fatalf("a token, verified as a Fixie SDK agent does: %v", err)
	}
	if _, err := verify(tok, "https://elsewhere.test"); err == nil {
		t.Fatal("the client accepted a token meant for other audiences")
	}
	if _, err := verify(tok[:len(tok)-4]+"AAAA", n.Config.Public()); err == nil {
		t.Fatal("the client accepted a tampered token")
	}

	// After a rotation the client, which fetched the JWKS once, already knows the new signing key: it was
	// published as the next key. Tokens signed before the rotation still verify.
	if r := n.Do(t, n.AdminKey, "POST", "/admin/signing-keys/rotate", nil); r.Status != 200 {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	rotated, _ := n.Signer.AgentToken(ctx, auth.AgentClaims{User: alice.AccountID, AgentID: "agt_1"})
	if _, err := verify(rotated, n.Config.Public()); err != nil {
		t.Fatalf("a token of the new key, with the JWKS fetched before the rotation: %v", err)
	}
	if _, err := verify(tok, n.Config.Public()); err != nil {
		t.Fatalf("a token of the previous key after the rotation: %v", err)
	}
	_, alicesKey := n.NewAccount(t, "not-an-admin")
	if r := n.Do(t, alicesKey, "POST", "/admin/signing-keys/rotate", nil); r.Status != 403 {
		t.Fatalf("a non-admin rotating: %d", r.Status)
	}
}
