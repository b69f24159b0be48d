package auth

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/internal/errs"
)

// Authenticator turns a bearer credential into a principal: an API key (it starts with KeyPrefix), or a token the
// platform issued to an agent, which the agent sends back when it calls the platform for its user.
//
// An agent token is accepted when it verifies with the Signer for one of the platform's own audiences — its
// public URL, and FixieAudience, which every token carries for agents built with the Fixie SDK — and names a user
// ("sub") whose account exists. Anonymous tokens (no "sub") are refused: an
// agent can only act for a user. The principal carries the user's account and the agent's ID, never the admin
// flag; the HTTP layer lets it through only to faces that accept agent tokens (httpapi.AgentFace).
type Authenticator struct {
	keys      *Keys
	signer    *Signer
	audiences []string
}

// NewAuthenticator accepts API keys, and agent tokens meant for one of audiences when signer is not nil.
func NewAuthenticator(keys *Keys, signer *Signer, audiences ...string) *Authenticator {
	return &Authenticator{keys: keys, signer: signer, audiences: audiences}
}

// Authenticate implements httpapi.Authenticator.
func (a *Authenticator) Authenticate(ctx context.Context, bearer string) (Principal, error) {
	if a.signer == nil || strings.HasPrefix(bearer, KeyPrefix) || strings.Count(bearer, ".") != 2 {
		return a.keys.Authenticate(ctx, bearer)
	}
	c, err := a.signer.Verify(ctx, bearer, a.audiences...)
	if err != nil {
		return Principal{}, err
	}
	if c.User == "" {
		return Principal{}, errs.E(errs.Unauthorized, "this agent token is anonymous (no user): anonymous callers cannot use the platform's API")
	}
	acct, ok, err := a.keys.account(ctx, c.User)
	if err != nil {
		return Principal{}, err
	}
	if !ok {
		return Principal{}, errs.E(errs.Unauthorized, "invalid agent token: its user does not exist")
	}
	return Principal{AccountID: acct.ID, Username: acct.Name, AgentID: c.AgentID, AgentName: c.AgentName,
		RequestsPerMinute: acct.RequestsPerMinute, DailyQueryLimit: acct.DailyQueryLimit, LimitsFound: true}, nil
}

// account reads an account of the directory.
func (k *Keys) account(ctx context.Context, id string) (Account, bool, error) {
	acct, ok, err := k.dir.Account(ctx, id)
	if err != nil {
		return acct, false, fmt.Errorf("look up account %s: %w", id, err)
	}
	return acct, ok, nil
}
