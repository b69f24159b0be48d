package platform

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentrun"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/router"
)

// vectorsBucket keeps the routing index's agent vectors, so that restarts and other nodes reuse them.
const vectorsBucket = "agent_vectors"

func vectorsBucketSpec() natsx.BucketSpec {
	return natsx.BucketSpec{Name: vectorsBucket, Description: "Agent vectors of the routing index, by agent ID"}
}

// assembleAgents wires the agent registry and the dispatch path: the built-in agents (the front agent fixie, and
// the router), the dispatchers of Code Shot and standalone agents, the routing index, and the embed URL signer.
func (p *Platform) assembleAgents(ctx context.Context) error {
	kv, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(vectorsBucket))
	if err != nil {
		return fmt.Errorf("open agent vectors: %w", err)
	}
	if p.Index, err = router.New(p.Embedder, kv, 0); err != nil {
		return err
	}
	model := p.Config.DefaultModel()
	provider, _, err := p.Models.Resolve(model)
	if err != nil {
		return fmt.Errorf("default model %q (CONTRAIL_MODEL): %w", model, err)
	}
	p.Dispatch = agentrun.New(agentrun.Config{
		Store:        p.Store,
		Models:       p.agentModels,
		DefaultModel: model,
		Offline:      provider.Name() == llm.ProviderOffline,
		Client: agentproto.NewClient(agentproto.WithTokenSource(p.AgentTokens()), agentproto.WithAudience(p.Config.Public()),
			agentproto.WithLogger(p.Logger.With("component", "agent-client"))),
		Index: p.Index,
		Find: func(ctx context.Context, pr auth.Principal, ref string) (agents.Info, error) {
			return p.Commands.FindAgent(ctx, pr, ref)
		},
		AgentName: func(ctx context.Context, info agents.Info) (string, error) {
			return p.Commands.FixieAgentName(ctx, info.Account, info.Handle)
		},
		Logger: p.Logger.With("component", "agents"),
	})
	p.Agents = agents.NewRegistry(p.Store, p.Dispatch.Builtins(agents.FixieBuiltin(p.Models, model))...)
	p.Dispatch.Attach(p.Agents)
	p.EmbedURLs = fixieapi.NewSigner(p.JS, p.Layout, p.Config.Public(), 0, p.Now)
	feedCtx, cancel := context.WithCancel(context.Background())
	p.stopFeed = cancel
	go p.Dispatch.Feed(feedCtx)
	return nil
}
