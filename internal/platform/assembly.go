package platform

import (
	"context"
	"slices"

	"github.com/contrailhq/contrail/graph"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/sessionrunner"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/openaiapi"
	"github.com/contrailhq/contrail/internal/userstorage"
	"github.com/contrailhq/contrail/projections"
)

// buckets lists the KV buckets components need besides the read models; they are provisioned on every start. A
// component with a bucket adds it here.
func buckets() []natsx.BucketSpec {
	return slices.Concat(
		[]natsx.BucketSpec{auth.SigningBucketSpec()},
		limits.Buckets(),
		userstorage.Buckets(),
		[]natsx.BucketSpec{fixieapi.SecretsBucketSpec(), vectorsBucketSpec()},
	)
}

// allProjections lists every read model. A new read model adds itself here.
func allProjections() []projections.Projection {
	return []projections.Projection{
		projections.Accounts{},
		projections.Assistants{}, projections.Threads{}, projections.Messages{}, projections.Runs{},
		projections.RunSteps{}, projections.Files{},
		projections.Agents{}, projections.Sessions{}, projections.Embeds{},
	}
}

// handlers lists every reactor of the log. A new handler adds itself here.
func (p *Platform) handlers() []runtime.Handler {
	return []runtime.Handler{
		p.RunWorker.Handler(),
		sessionrunner.New(sessionrunner.Config{
			Commands: p.Commands, Agents: p.Agents, Store: p.Store, NC: p.NC, Names: p.Layout.Names,
			Embeds: p.EmbedURLs, Logger: p.Logger.With("component", "session-runner"),
		}).Handler(),
	}
}

// faces lists every HTTP face. A new face adds itself here.
func (p *Platform) faces() []httpapi.Face {
	return []httpapi.Face{
		adminapi.New(adminapi.Deps{
			Commands: p.Commands, Views: p.Views, JS: p.JS, Store: p.Store, Names: p.Layout.Names, Logger: p.Logger,
			Signer: p.Signer,
		}),
		// Every account may keep storage for any agent ID until user storage's tests register the agents they use;
		// then pass the registry's visibility check (commands.FindAgent) here.
		userstorage.NewFace(p.UserStorage, nil, p.Logger).WithAgentNames(
			func(ctx context.Context, pr auth.Principal, name string) (string, error) {
				a, err := p.Commands.FindAgent(ctx, pr, name)
				return a.ID, err
			}),
		openaiapi.New(openaiapi.Deps{
			Commands: p.Commands, Views: p.Views, Store: p.Store, JS: p.JS, NC: p.NC, Names: p.Layout.Names, Blobs: p.Blobs,
			Models: p.Models, Logger: p.Logger.With("face", "v1"),
		}),
		openaiapi.NewProxy(openaiapi.ProxyDeps{Models: p.Models, Embedder: p.Embedder, Quota: p.Limits, Now: p.Now,
			Logger: p.Logger.With("face", "openai-proxy")}),
		graph.New(graph.Deps{
			Commands: p.Commands, Views: p.Views, Store: p.Store, Agents: p.Agents, NC: p.NC, Names: p.Layout.Names,
			Embeds: p.EmbedURLs, Auth: p.Auth, Limiter: p.Limits, Logger: p.Logger.With("face", "graphql"),
			Router: p.Index,
		}),
		fixieapi.NewEmbedsFace(p.Commands, p.EmbedURLs, p.Logger.With("face", "embeds")),
		fixieapi.NewSessionsFace(p.Commands, p.Store, p.Logger.With("face", "sessions")),
	}
}
