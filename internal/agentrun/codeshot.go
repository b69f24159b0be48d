package agentrun

import (
	"context"
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/codeshot/loop"
	"github.com/contrailhq/contrail/internal/errs"
)

// codeShot is the factory of Code Shot agents.
func (d *Dispatch) codeShot(_ context.Context, info agents.Info) (agents.Agent, error) {
	url := info.FuncURL
	if url == "" {
		url = info.QueryURL
	}
	if url == "" {
		return nil, errs.E(errs.Unavailable, "agent %s has no URL for its funcs", info.Handle)
	}
	if len(info.FewShots) == 0 {
		return nil, errs.E(errs.Unavailable, "agent %s has no few-shots: refresh it from its URL", info.Handle)
	}
	model := info.Model
	if model == "" {
		model = d.cfg.DefaultModel
	}
	spec := loop.Spec{Handle: info.Handle, BasePrompt: info.BasePrompt, Examples: info.FewShots, Model: model}
	return agents.AgentFunc(func(ctx context.Context, q agents.Query) (agents.Reply, error) {
		return d.runCodeShot(ctx, spec, info, url, q, nil)
	}), nil
}

// runCodeShot answers a query with a Code Shot spec. extra answers "Ask Agent[...]" for agents the platform knows
// by other means (the front agent's router).
func (d *Dispatch) runCodeShot(ctx context.Context, spec loop.Spec, info agents.Info, funcURL string, q agents.Query, extra map[string]func(context.Context, string) (string, error)) (agents.Reply, error) {
	ctx = withPath(ctx, info.Handle)
	path := pathString(ctx)
	done, err := d.recorded(ctx, q, path)
	if err != nil {
		return agents.Reply{}, err
	}
	cl, err := d.claims(ctx, q, info)
	if err != nil {
		return agents.Reply{}, err
	}
	var funcs loop.Funcs
	hf := &httpFuncs{client: d.cfg.Client, url: funcURL, claims: cl, handle: info.Handle}
	if funcURL != "" {
		funcs = hf
	}
	r := &loop.Runner{Model: d.cfg.Models, Funcs: funcs, Agents: &asker{d: d, q: q, extra: extra}, MaxCalls: d.cfg.MaxCalls}
	var hist []string
	if info.Conversational || info.Builtin() {
		hist = history(q)
	}
	answer, _, err := r.Run(ctx, spec, loop.Query{Text: q.Message.Text, History: hist, Done: done, Key: q.ReplyID + "/" + path,
		Stream: q.Stream}, journal{q: q, agent: info.Handle, path: path})
	if err != nil {
		return agents.Reply{}, err
	}
	// What funcs made (a chart, an image) goes with the answer that refers to it.
	return agents.Reply{Text: answer, Embeds: hf.embeds}, nil
}

// httpFuncs calls a Code Shot agent's funcs over the agent protocol.
type httpFuncs struct {
	client *agentproto.Client
	url    string
	claims agentproto.Claims
	handle string
	// embeds are what the funcs answered with besides text.
	embeds map[string]agents.Embed
}

func (f *httpFuncs) Call(ctx context.Context, fn, args, key string) (string, error) {
	m, err := f.client.CallFunc(agentproto.WithIdempotencyKey(ctx, key), f.url, fn, agentproto.Message{Text: args}, f.claims)
	if err != nil {
		return "", err
	}
	for k, e := range m.Embeds {
		if f.embeds == nil {
			f.embeds = map[string]agents.Embed{}
		}
		f.embeds[k] = agents.Embed{ContentType: e.ContentType, URI: e.URI}
	}
	return m.Text, nil
}

// asker answers "Ask Agent[a]: q" by querying agent a through the registry, one level deeper.
type asker struct {
	d     *Dispatch
	q     agents.Query
	extra map[string]func(context.Context, string) (string, error)
}

func (a *asker) Ask(ctx context.Context, handle, text string) (string, error) {
	if f, ok := a.extra[handle]; ok {
		return f(ctx, text)
	}
	reply, err := a.d.delegate(ctx, a.q, handle, text, nil)
	if err != nil {
		return "", err
	}
	return reply.Text, nil
}

// delegate asks another agent, named by handle, a query on behalf of q: the same session, the same caller, the same
// reply, one level deeper. stream, when not nil, receives the delegate's answer as it comes.
func (d *Dispatch) delegate(ctx context.Context, q agents.Query, handle, text string, stream func(string)) (agents.Reply, error) {
	if depth := len(pathOf(ctx)); depth >= d.cfg.MaxDepth {
		return agents.Reply{}, fmt.Errorf("agents may delegate %d levels deep, and %s is past that", d.cfg.MaxDepth, strings.Join(append(pathOf(ctx), handle), " > "))
	}
	if d.cfg.Find == nil {
		return agents.Reply{}, fmt.Errorf("no agent %s here", handle)
	}
	info, err := d.cfg.Find(ctx, q.Caller, handle)
	if err != nil {
		return agents.Reply{}, fmt.Errorf("agent %s: %w", handle, err)
	}
	for _, p := range pathOf(ctx) {
		if p == info.Handle {
			return agents.Reply{}, fmt.Errorf("agent %s is already answering this query (%s): no loops", info.Handle, pathString(ctx))
		}
	}
	_, agent, err := d.cfg.Registry.Resolve(ctx, q.Caller.AccountID, info.ID)
	if err != nil {
		return agents.Reply{}, err
	}
	sub := q
	sub.Message = agents.Message{ID: q.Message.ID, Text: text, Type: q.Message.Type, Time: q.Message.Time}
	sub.Stream = stream
	return agent.Reply(ctx, sub)
}
