package platform

import (
	"context"
	"fmt"

	"github.com/contrailhq/contrail/graph"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/sessionrunner"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/agents"
	"github.com/contrailhq/contrail/internal/fixieapi"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/llm/openai"
	"github.com/contrailhq/contrail/projections"
)

// allProjections lists every read model. A new read model adds itself here.
func allProjections() []projections.Projection {
	return []projections.Projection{
		projections.Accounts{},
		projections.Agents{},
		projections.Sessions{},
		projections.Embeds{},
	}
}

// handlers lists every reactor of the log. A new handler adds itself here.
func (p *Platform) handlers() []runtime.Handler {
	return []runtime.Handler{
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
		}),
		graph.New(graph.Deps{
			Commands: p.Commands, Views: p.Views, Store: p.Store, Agents: p.Agents, NC: p.NC, Names: p.Layout.Names,
			Embeds: p.EmbedURLs, Auth: p.Keys, Logger: p.Logger.With("component", "graphql"),
		}),
		fixieapi.NewEmbedsFace(p.Commands, p.EmbedURLs, p.Logger.With("component", "embeds")),
		fixieapi.NewSessionsFace(p.Commands, p.Store, p.Logger.With("component", "sessions")),
	}
}

// models builds the model router: the offline model always, and the openai provider when OPENAI_BASE_URL says
// where an OpenAI-compatible server is (its key may be empty: local servers need none).
func (p *Platform) models() (*llm.Router, error) {
	providers := map[string]llm.Provider{
		// The local embedder is being merged; until then the offline model compares words (nil embedder).
		llm.ProviderOffline: offline.New(nil),
	}
	switch cfg := p.Config; {
	case cfg.OpenAIBaseURL != "":
		op, err := openai.New(cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, nil, p.Logger.With("component", "openai"))
		if err != nil {
			return nil, fmt.Errorf("configure OPENAI_BASE_URL: %w", err)
		}
		providers[llm.ProviderOpenAI] = op
	case cfg.OpenAIAPIKey != "":
		p.Logger.Warn("OPENAI_API_KEY is set but OPENAI_BASE_URL is not: set OPENAI_BASE_URL to the server's " +
			"base URL (the one \"/chat/completions\" is appended to) to use it; answering with the offline model meanwhile")
	}
	return llm.NewRouter(providers, "")
}

// assembleAgents wires the model router, the agent registry with its built-in agents, and the embed URL signer,
// which the commands, the session runner and the faces share.
func (p *Platform) assembleAgents(_ context.Context) error {
	router, err := p.models()
	if err != nil {
		return err
	}
	p.Models = router
	p.Agents = agents.NewRegistry(p.Store, agents.FixieBuiltin(router, ""))
	p.EmbedURLs = fixieapi.NewSigner(p.JS, p.Layout, p.Config.Public(), 0, p.Now)
	return nil
}
