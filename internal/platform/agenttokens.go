package platform

import (
	"context"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/auth"
)

// AgentTokens is the TokenSource of the agent protocol client: every call to an agent carries a token signed with
// the deployment's current key, which the agent verifies against the JWKS and passes back to call the platform.
func (p *Platform) AgentTokens() agentproto.TokenSource { return agentTokens{p} }

type agentTokens struct{ p *Platform }

func (t agentTokens) AgentToken(ctx context.Context, c agentproto.Claims) (string, error) {
	return t.p.Signer.AgentToken(ctx, auth.AgentClaims(c))
}
