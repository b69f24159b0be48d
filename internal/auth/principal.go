package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/contrailhq/contrail/events"
)

// Principal is who a request acts for.
type Principal struct {
	AccountID string `json:"account_id"`
	// KeyID is the API key used, or "" for a platform-internal actor.
	KeyID string `json:"key_id,omitempty"`
	Admin bool   `json:"admin,omitempty"`
	// Username is the account's name, what Fixie's `user { username }` shows.
	Username string `json:"username,omitempty"`
	// AgentID is set when an agent calls back with the token the platform gave it. Such a principal acts for the
	// user (AccountID) but only where a face accepts agent tokens (httpapi.AgentFace), and never as an admin.
	AgentID string `json:"agent_id,omitempty"`
	// AgentName is that agent as Fixie named it, "<username>/<handle>": the ID the Fixie SDK uses in the paths
	// it calls (user storage).
	AgentName string `json:"agent_name,omitempty"`
	// RequestsPerMinute is the account's per-key request limit as authentication found it (0 = the platform
	// default). It travels with the principal so that the rate limiter, which runs on every request, needs no
	// second read of the account.
	RequestsPerMinute int `json:"-"`
	// DailyQueryLimit is the account's daily query quota as authentication found it (0 = the platform default),
	// so that counting a query needs no second read of the account either. It is only meaningful when
	// LimitsFound is set: a principal that authentication did not make (a handler acting for an account) has
	// its account's limits read when they are needed.
	DailyQueryLimit int  `json:"-"`
	LimitsFound     bool `json:"-"`
}

// System reports whether p is the platform itself (the admin bootstrap, handlers): no key and no agent token.
// Commands let it do what no caller may.
func (p Principal) System() bool { return p.KeyID == "" && p.AgentID == "" }

// Actor is how the principal is recorded in events.
func (p Principal) Actor() string {
	switch {
	case p.AgentID != "":
		return "agent:" + p.AgentID
	case p.KeyID != "":
		return p.KeyID
	default:
		return "system"
	}
}

// Meta is the event metadata of a command issued by this principal.
func (p Principal) Meta() events.Meta {
	return events.Meta{Account: p.AccountID, Actor: p.Actor()}
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal in ctx.
func From(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok && p.AccountID != ""
}

// KeyPrefix starts every API key, so a leaked key is recognisable (secret scanners, logs).
const KeyPrefix = "ctr_"

// NewKey returns a fresh API key: the prefix and 32 random bytes.
func NewKey() string { return KeyPrefix + events.RandomToken(32) }

// HashKey is how a key is stored and looked up. Keys are 256-bit random strings, so a plain SHA-256 is not a
// weakness (there is nothing to brute-force), and it keeps the lookup on every request cheap.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// KeyID derives a key's public ID from its hash, so issuing the same key twice (an admin key given by env on every
// node) records it once.
func KeyID(hash string) string { return "key_" + hash[:20] }

// KeyHint is the part of a key shown in listings.
func KeyHint(key string) string {
	if len(key) <= len(KeyPrefix)+6 {
		return KeyPrefix + "…"
	}
	return key[:len(KeyPrefix)+6] + "…"
}

// BearerToken extracts the token of an "Authorization: Bearer <token>" value.
func BearerToken(header string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
