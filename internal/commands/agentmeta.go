package commands

import (
	"context"
	"errors"
	"strings"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/codeshot"
	"github.com/contrailhq/contrail/internal/errs"
)

// AgentMetadata fetches what an agent says of itself at its URL (GET /: base prompt and few-shots, or sample
// queries). The agent protocol client is one.
type AgentMetadata interface {
	Metadata(ctx context.Context, agentURL string, claims agentproto.Claims) (agentproto.Metadata, error)
}

// unreachedError is an agent whose URL did not answer when its description was read.
type unreachedError struct {
	url string
	err error
}

func (e *unreachedError) Error() string {
	return "agent at " + e.url + " not reachable: " + e.err.Error()
}
func (e *unreachedError) Unwrap() error { return e.err }

// fetchMetadata completes an agent's registration from its URL: the agent's kind, base prompt, few-shots and
// sample queries, the few-shots validated with every rule of the Fixie SDK. It fills in only what the caller did not
// give. An agent that has no GET / (seed 000's simplest agent only answers POST /) is a standalone agent without
// sample queries.
func (c *Agents) fetchMetadata(ctx context.Context, actor auth.Principal, id string, in *AgentInput) error {
	u := value(in.FuncURL, "")
	if u == "" {
		u = value(in.QueryURL, "")
	}
	if u == "" || c.metadata == nil {
		return nil
	}
	name, err := c.FixieName(ctx, actor.AccountID, strings.TrimSpace(in.Handle))
	if err != nil {
		return err
	}
	md, err := c.metadata.Metadata(ctx, u, agentproto.Claims{User: actor.AccountID, AgentID: id, AgentName: name,
		Audience: value(in.Audience, "")})
	var perr *agentproto.Error
	if errors.As(err, &perr) && (perr.Status == 404 || perr.Status == 405) && in.Kind == nil {
		standalone := agents.KindStandalone
		in.Kind = &standalone
		if in.QueryURL == nil {
			in.QueryURL = &u
		}
		return nil
	}
	if errors.Is(err, agentproto.ErrUnreachable) || errors.Is(err, agentproto.ErrTimeout) {
		// An agent not up yet (a tunnel being recycled, a dev server starting): the caller decides. Registration
		// goes on with what was given and says so; a refresh fails.
		return &unreachedError{url: u, err: err}
	}
	if err != nil {
		return errs.InvalidField(urlField(in), "could not read the agent's description at %s: %v", u, err)
	}
	switch md.Type {
	case agentproto.TypeCodeShot:
		examples := make([]string, len(md.FewShots))
		for i, ex := range md.FewShots {
			examples[i] = codeshot.Normalize(ex)
		}
		base := codeshot.Normalize(md.BasePrompt)
		if err := codeshot.Validate(base, examples, codeshot.Options{Conversational: md.Conversational}); err != nil {
			return errs.InvalidField("fewShots", "agent at %s: %v", u, err)
		}
		kind := agents.KindCodeShot
		in.Kind = &kind
		if in.FuncURL == nil || *in.FuncURL == "" {
			in.FuncURL = &u
		}
		if in.BasePrompt == nil {
			in.BasePrompt = &base
		}
		if in.FewShots == nil {
			in.FewShots = &examples
		}
		if in.Conversational == nil {
			in.Conversational = &md.Conversational
		}
		if in.Queries == nil {
			qs := codeshot.SampleQueries(codeshot.Parse(examples))
			in.Queries = &qs
		}
	default:
		kind := agents.KindStandalone
		in.Kind = &kind
		if in.QueryURL == nil || *in.QueryURL == "" {
			in.QueryURL = &u
		}
		if in.Queries == nil {
			qs := append([]string{}, md.SampleQueries...)
			in.Queries = &qs
		}
	}
	return validAgentFields(*in)
}

func urlField(in *AgentInput) string {
	if value(in.FuncURL, "") != "" {
		return "funcUrl"
	}
	return "queryUrl"
}

// Refresh reads an agent's description again from its URL (its few-shots changed, say) and updates the
// registry; routing follows within a second.
func (c *Agents) Refresh(ctx context.Context, actor auth.Principal, handle string) (AgentChange, error) {
	handle = strings.TrimSpace(handle)
	if handle == "" {
		return AgentChange{}, errs.Missing("handle")
	}
	id, err := c.ownAgentID(ctx, actor, handle)
	if err != nil {
		return AgentChange{}, err
	}
	rec, err := c.agents.Load(ctx, id)
	if err != nil {
		return AgentChange{}, err
	}
	if !rec.Exists || rec.Deleted {
		return AgentChange{}, errs.NotFoundf("agent", handle)
	}
	in := AgentInput{Handle: handle, Audience: &rec.Audience}
	if rec.FuncURL != "" {
		in.FuncURL = &rec.FuncURL
	}
	if rec.QueryURL != "" {
		in.QueryURL = &rec.QueryURL
	}
	if in.FuncURL == nil && in.QueryURL == nil {
		return AgentChange{}, errs.InvalidField("handle", "agent %s has no URL to refresh from", handle)
	}
	var unreached *unreachedError
	if err := c.fetchMetadata(ctx, actor, id, &in); errors.As(err, &unreached) {
		return AgentChange{}, errs.E(errs.Unavailable, "agent %s is not reachable at %s: %v; nothing was changed", handle, unreached.url, unreached.err)
	} else if err != nil {
		return AgentChange{}, err
	}
	in.Audience = nil // unchanged
	return c.Update(ctx, actor, in)
}
