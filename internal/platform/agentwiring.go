package platform

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/queries"
	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/router"
	"github.com/contrailhq/contrail/projections"
)

// stopRouting stops the feed of the routing index and waits for it: left running, it would follow a closed
// connection and warn every second.
func (p *Platform) stopRouting() {
	if p.stopFeed != nil {
		p.stopFeed()
		<-p.feedDone
	}
}

// vectorsBucket keeps the routing index's agent vectors, so that restarts and other nodes reuse them.
const vectorsBucket = "agent_vectors"

func vectorsBucketSpec() natsx.BucketSpec {
	return natsx.BucketSpec{Name: vectorsBucket, Description: "Agent vectors of the routing index, by agent ID"}
}

// assembleAgents wires the agent directory (the built-in agents and the registered ones), the routing index and
// its feed, the agent-protocol client, the session repository, and the embed URL signer.
func (p *Platform) assembleAgents(ctx context.Context) error {
	kv, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(vectorsBucket))
	if err != nil {
		return fmt.Errorf("open agent vectors: %w", err)
	}
	if p.Index, err = router.New(p.Embedder, kv, 0); err != nil {
		return err
	}
	model := p.Config.DefaultModel()
	if _, _, err := p.Models.Resolve(model); err != nil {
		return fmt.Errorf("default model %q (CONTRAIL_MODEL): %w", model, err)
	}
	p.AgentClient = agentproto.NewClient(agentproto.WithTokenSource(p.AgentTokens()), agentproto.WithAudience(p.Config.Public()),
		agentproto.WithLogger(p.Logger.With("component", "agent-client")))
	p.Agents = agents.NewRegistry(p.Store, projections.PublishedAgents{Views: p.Views}, agents.Builtins()...)
	p.Sessions = eventstore.NewRepo[session.State](p.Store, session.Aggregate, 4096)
	p.EmbedURLs = fixieapi.NewSigner(p.JS, p.Layout, p.Config.Public(), 0, p.Now)
	feedCtx, cancel := context.WithCancel(context.Background())
	p.stopFeed, p.feedDone = cancel, make(chan struct{})
	go func() {
		defer close(p.feedDone)
		p.Index.Feed(feedCtx, p.Store, p.Agents, p.Logger.With("component", "routing-index"))
	}()
	return nil
}

// QueryHandlers are the handlers that answer sessions' queries. With ownRepo they decide on a session repository
// of their own, as another node's handlers would (tests of redelivery across nodes).
func (p *Platform) QueryHandlers(ownRepo bool) *queries.Handlers {
	model := p.Config.DefaultModel()
	provider, _, _ := p.Models.Resolve(model)
	repo := p.Sessions
	if ownRepo {
		repo = eventstore.NewRepo[session.State](p.Store, session.Aggregate, 0)
	}
	return queries.New(queries.Config{
		Sessions: repo, Agents: p.Agents, Models: p.agentModels, DefaultModel: model,
		Offline: provider != nil && provider.Name() == llm.ProviderOffline, Client: p.AgentClient, Index: p.Index,
		NC: p.NC, Names: p.Layout.Names, Embeds: embedKeeper{p: p}, AgentNames: p.Commands.Agents,
		Logger: p.Logger.With("component", "queries"),
	})
}

// embedKeeper is what the query handlers need of embeds: signed URLs for agents, and the embeds agents answer with
// kept in the account's blob store.
type embedKeeper struct{ p *Platform }

func (k embedKeeper) EmbedURL(ctx context.Context, embedID string) (string, error) {
	return k.p.EmbedURLs.EmbedURL(ctx, embedID)
}

func (k embedKeeper) Keep(ctx context.Context, account string, in map[string]agentproto.Embed) (map[string]events.MessageEmbed, error) {
	if len(in) == 0 {
		return nil, nil
	}
	src := make(map[string]commands.EmbedSource, len(in))
	for key, em := range in {
		src[key] = commands.EmbedSource{URI: em.URI, ContentType: em.ContentType}
	}
	return k.p.Commands.Embeds.ForMessage(ctx, auth.Principal{AccountID: account}, src)
}

// RegisterAgent registers an agent and returns it once the registry and the router can find it: the sample agents,
// benchmarks and tests register this way (the GraphQL face waits the same way after its own commands).
func (p *Platform) RegisterAgent(ctx context.Context, actor auth.Principal, in commands.AgentInput) (agents.Info, error) {
	c, err := p.Commands.Agents.Register(ctx, actor, in)
	err = p.Views.ShowsWrite(ctx, c.Appended, err, projections.Agents{})
	return c.Agent, err
}
