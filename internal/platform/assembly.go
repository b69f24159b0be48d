package platform

import (
	"context"
	"slices"

	"github.com/contrailhq/contrail/graph"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/llm"
	mcpserver "github.com/contrailhq/contrail/internal/mcp/server"
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
		runtime.Buckets(),
	)
}

// allProjections lists every read model. A new read model adds itself here.
func allProjections() []projections.Projection {
	return []projections.Projection{
		projections.Accounts{},
		projections.Assistants{}, projections.Threads{}, projections.Messages{}, projections.Runs{},
		projections.RunSteps{}, projections.Files{},
		projections.Agents{}, projections.Sessions{}, projections.Embeds{},
		projections.JulepAgents{}, projections.JulepUsers{}, projections.JulepDocs{}, projections.JulepSessions{},
		projections.JulepTasks{}, projections.Executions{}, projections.TaskTimersView{}, projections.VectorStores{},
		projections.Containers{}, projections.Conversations{},
	}
}

// handlers lists every reactor of the log. A new handler adds itself here.
func (p *Platform) handlers() []runtime.Handler {
	return append([]runtime.Handler{
		p.RunWorker.Handler(),
		p.Sweeper.Scheduler(),
		p.Responder.Handler(),
		p.queries.Agents(),
	}, append(p.julepHandlers(), p.vectorHandlers()...)...)
}

// faces lists every HTTP face. A new face adds itself here.
func (p *Platform) faces() []httpapi.Face {
	return []httpapi.Face{
		adminapi.New(adminapi.Deps{
			Accounts: p.Commands.Accounts, Views: p.Views, JS: p.JS, Store: p.Store, Names: p.Layout.Names, Logger: p.Logger,
			Signer: p.Signer, Limits: p.Limits, Usage: p.Limits, Now: p.Now,
		}),
		userstorage.NewFace(p.UserStorage, p.storageVisible, p.Logger).WithAgentNames(
			func(ctx context.Context, pr auth.Principal, name string) (string, error) {
				a, err := p.Commands.Agents.Find(ctx, pr, name)
				return a.ID, err
			}),
		openaiapi.New(openaiapi.Deps{
			Assistants: p.Commands.Assistants, Threads: p.Commands.Threads, Runs: p.Commands.Runs, Files: p.Commands.Files,
			Responses: p.Commands.Responses, Conversations: p.Commands.Conversations, ResponseTools: p.responseTools(), OfferedTool: p.offeredTool, FileText: responseTexts{p}.ReadText, MCP: mcpServers{p},
			Compaction: p.compactSeal,
			Containers: p.Commands.Containers, CodeAvailable: p.code.available,
			VectorStores: p.Vectors.Commands, VectorStoreFiles: p.Vectors.Files, Views: p.Views, Store: p.Store, JS: p.JS, NC: p.NC,
			Names: p.Layout.Names, Blobs: p.Blobs, Models: p.Models, ListedModels: p.listedModels(), Logger: p.Logger.With("face", "v1"),
			Auth: p.Auth, Limiter: p.Limits, SocketIdle: p.Config.ResponsesSocketIdle, SocketLifetime: p.Config.ResponsesSocketLifetime,
		}),
		openaiapi.NewProxy(openaiapi.ProxyDeps{Models: p.Models, Embedder: p.Embedder, Quota: p.Limits, Now: p.Now,
			Logger: p.Logger.With("face", "openai-proxy")}),
		graph.New(graph.Deps{
			AgentCommands: p.Commands.Agents, Usage: p.Commands.Accounts, Sessions: p.SessionCommands, Views: p.Views, Store: p.Store, Agents: p.Agents, NC: p.NC, Names: p.Layout.Names,
			Embeds: p.EmbedURLs, EmbedLog: p.Commands.Embeds, Auth: p.Auth, Limiter: p.Limits, Logger: p.Logger.With("face", "graphql"),
			Router: p.Index,
		}),
		fixieapi.NewEmbedsFace(p.Commands.Embeds, p.Views, p.EmbedURLs, p.Logger.With("face", "embeds")),
		fixieapi.NewSessionsFace(p.SessionCommands, p.Store, p.Logger.With("face", "sessions")),
		p.julepFace(),
		mcpserver.New(mcpserver.Deps{Sessions: p.SessionCommands, Executions: p.Julep.Executions, VectorStores: p.Vectors.Commands,
			Builtins: p.Agents.Builtins, Views: p.Views, Store: p.Store, Embeds: p.EmbedURLs, Logger: p.Logger.With("face", "mcp")}),
	}
}

// listedModels are the models GET /v1/models lists: the built-in offline model, always there, and the default model
// of agents and assistants that name none, with the provider that runs it.
func (p *Platform) listedModels() []openaiapi.Model {
	out := []openaiapi.Model{{ID: llm.ProviderOffline, OwnedBy: "contrail"}}
	def := p.Config.DefaultModel()
	if def == llm.ProviderOffline {
		return out
	}
	owner := "unknown"
	if provider, _, err := p.Models.Resolve(def); err == nil {
		owner = provider.Name()
	}
	return append(out, openaiapi.Model{ID: def, OwnedBy: owner})
}

// storageVisible says whether a caller may use an agent's user storage: an agent's token reaches its own storage
// (the face checks that it names its agent); a key reaches the storage of the agents its account may use (built-ins,
// its own, published ones). Another account's unpublished agent is not found, as the registry answers it.
func (p *Platform) storageVisible(ctx context.Context, caller auth.Principal, agentID string) (bool, error) {
	if caller.AgentID != "" {
		return caller.AgentID == agentID, nil
	}
	_, err := p.Commands.Agents.Find(ctx, caller, agentID)
	if errs.CodeOf(err) == errs.NotFound {
		return false, nil
	}
	return err == nil, err
}
