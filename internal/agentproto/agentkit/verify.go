package agentkit

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Token is a verified platform token.
type Token struct {
	// AgentID is the agent the token was issued for, as Fixie named it (claim "aid", "<username>/<handle>").
	AgentID string
	// User is the user the request is made for (claim "sub"); empty means anonymous.
	User string
	// Raw is the token itself: an agent passes it on when it calls the platform back (user storage, other agents).
	Raw string
	// Claims are all the token's claims.
	Claims map[string]any
}

// Anonymous reports whether the request is made for no user.
func (t *Token) Anonymous() bool { return t.User == "" }

// Verifier checks the platform's tokens: EdDSA (Ed25519) JWTs signed by a key in the platform's JWKS, meant for the
// configured audience, not expired, carrying an agent ID ("aid") that matches the agent's own when it is
// configured. Keys are fetched when first needed and again when a token names a key not seen yet (the platform
// rotated its keys), at most once per refresh interval. It is safe for concurrent use.
type Verifier struct {
	jwksURL    string
	audience   string
	agentID    string
	http       *http.Client
	minRefresh time.Duration
	leeway     time.Duration

	mu          sync.Mutex
	keys        map[string]ed25519.PublicKey
	lastAttempt time.Time
}

// VerifierOption configures a Verifier.
type VerifierOption func(*Verifier)

// WithAgentID makes the Verifier refuse tokens issued for another agent, as the SDK's FIXIE_ALLOWED_AGENT_ID did:
// id is the agent's "<username>/<handle>" (claim "aid") or its Contrail ID (claim "agt"). Without it, a token for
// any agent of the platform is accepted.
func WithAgentID(id string) VerifierOption { return func(v *Verifier) { v.agentID = id } }

// WithJWKSClient sets the HTTP client that fetches the JWKS.
func WithJWKSClient(h *http.Client) VerifierOption { return func(v *Verifier) { v.http = h } }

// WithRefreshInterval sets the least time between two JWKS fetches (default 30s), so that tokens naming unknown
// keys cannot make the agent hammer the platform.
func WithRefreshInterval(d time.Duration) VerifierOption {
	return func(v *Verifier) { v.minRefresh = d }
}

// NewVerifier returns a Verifier of tokens for audience, signed by keys from the JWKS at jwksURL.
func NewVerifier(jwksURL, audience string, opts ...VerifierOption) (*Verifier, error) {
	if jwksURL == "" || audience == "" {
		return nil, errors.New("verifying tokens needs both the JWKS URL and the audience (the platform's API URL)")
	}
	v := &Verifier{jwksURL: jwksURL, audience: audience, minRefresh: 30 * time.Second, leeway: 30 * time.Second}
	for _, o := range opts {
		o(v)
	}
	if v.http == nil {
		v.http = &http.Client{Timeout: 10 * time.Second}
	}
	return v, nil
}

// Verify checks a token and returns its claims, or an error saying why it is refused.
func (v *Verifier) Verify(ctx context.Context, token string) (*Token, error) {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.key(ctx, kid)
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(v.audience),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(v.leeway),
	)
	if err != nil {
		return nil, fmt.Errorf("invalid token: %w", err)
	}
	aid, _ := claims["aid"].(string)
	if aid == "" {
		return nil, errors.New(`invalid token: it names no agent (claim "aid")`)
	}
	if agt, _ := claims["agt"].(string); v.agentID != "" && aid != v.agentID && agt != v.agentID {
		return nil, fmt.Errorf("invalid token: it is for agent %q, not this agent (%q)", aid, v.agentID)
	}
	sub, _ := claims["sub"].(string)
	return &Token{AgentID: aid, User: sub, Raw: token, Claims: claims}, nil
}

// key returns the public key named kid (or the only key, when the token names none), fetching the JWKS if needed.
func (v *Verifier) key(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if k, ok := v.lookup(kid); ok {
		return k, nil
	}
	if !v.lastAttempt.IsZero() && time.Since(v.lastAttempt) < v.minRefresh {
		return nil, fmt.Errorf("no key %q in the platform's JWKS", kid)
	}
	v.lastAttempt = time.Now()
	keys, err := v.fetch(ctx)
	if err != nil {
		return nil, err
	}
	v.keys = keys
	if k, ok := v.lookup(kid); ok {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q in the platform's JWKS", kid)
}

func (v *Verifier) lookup(kid string) (ed25519.PublicKey, bool) {
	if kid == "" && len(v.keys) == 1 {
		for _, k := range v.keys {
			return k, true
		}
	}
	k, ok := v.keys[kid]
	return k, ok
}

// fetch reads the Ed25519 keys of the JWKS; keys of other types are skipped.
func (v *Verifier) fetch(ctx context.Context) (map[string]ed25519.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.jwksURL, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	resp, err := v.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch JWKS: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch JWKS from %s: HTTP %d", v.jwksURL, resp.StatusCode)
	}
	var set struct {
		Keys []struct {
			Kty string `json:"kty"`
			Crv string `json:"crv"`
			X   string `json:"x"`
			Kid string `json:"kid"`
			Use string `json:"use"`
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, fmt.Errorf("read JWKS from %s: %w", v.jwksURL, err)
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" || (k.Use != "" && k.Use != "sig") {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("read JWKS from %s: key %q is not an Ed25519 public key", v.jwksURL, k.Kid)
		}
		keys[k.Kid] = ed25519.PublicKey(x)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("read JWKS from %s: no Ed25519 signing keys", v.jwksURL)
	}
	return keys, nil
}
