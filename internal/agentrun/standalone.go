package agentrun

import (
	"context"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/errs"
)

// standalone is the factory of standalone agents: the platform POSTs the query and relays the reply.
func (d *Dispatch) standalone(_ context.Context, info agents.Info) (agents.Agent, error) {
	if info.QueryURL == "" {
		return nil, errs.E(errs.Unavailable, "agent %s has no query URL", info.Handle)
	}
	return agents.AgentFunc(func(ctx context.Context, q agents.Query) (agents.Reply, error) {
		ctx = withPath(ctx, info.Handle)
		msg := agentproto.Message{Text: q.Message.Text, Embeds: map[string]agentproto.Embed{}}
		for k, e := range q.Message.Embeds {
			msg.Embeds[k] = agentproto.Embed{ContentType: e.ContentType, URI: e.URI}
		}
		// The agent answers with the whole text so far on every line; the session's stream gets what is new.
		var sent string
		onPartial := func(text string) {
			if q.Stream != nil && strings.HasPrefix(text, sent) && len(text) > len(sent) {
				q.Stream(text[len(sent):])
				sent = text
			}
		}
		cl, err := d.claims(ctx, q, info)
		if err != nil {
			return agents.Reply{}, err
		}
		m, err := d.cfg.Client.Query(ctx, info.QueryURL, msg, cl, onPartial)
		if err != nil {
			return agents.Reply{}, err
		}
		if q.Stream != nil && strings.HasPrefix(m.Text, sent) && len(m.Text) > len(sent) {
			q.Stream(m.Text[len(sent):])
		}
		if q.Record != nil {
			path := pathString(ctx)
			_ = q.Record(ctx, stepLabel(path, 0), events.SessionAgentStep{ReplyID: q.ReplyID, Agent: info.Handle, Path: path,
				Kind: "answer", Text: m.Text})
		}
		reply := agents.Reply{Text: m.Text}
		if len(m.Embeds) > 0 {
			reply.Embeds = map[string]agents.Embed{}
			for k, e := range m.Embeds {
				reply.Embeds[k] = agents.Embed{ContentType: e.ContentType, URI: e.URI}
			}
		}
		return reply, nil
	}), nil
}
