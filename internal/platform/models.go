package platform

import (
	"fmt"
	"log/slog"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/llm/openai"
)

// newModels builds the model router: the offline model always, and the openai provider when OPENAI_BASE_URL names
// an OpenAI-compatible server. A key without a base URL is refused rather than sent to a host chosen here.
func newModels(cfg config.Config, emb embedding.Embedder, logger *slog.Logger) (*llm.Router, error) {
	// The offline model finds the few-shot nearest a query with the platform's embedder.
	providers := map[string]llm.Provider{llm.ProviderOffline: offline.New(emb)}
	switch {
	case cfg.OpenAIBaseURL != "":
		// The provider names itself in what it logs; a logger.With("provider") here would repeat the key.
		p, err := openai.New(cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, nil, logger)
		if err != nil {
			return nil, fmt.Errorf("OPENAI_BASE_URL: %w", err)
		}
		providers[llm.ProviderOpenAI] = p
	case cfg.OpenAIAPIKey != "":
		return nil, fmt.Errorf("OPENAI_API_KEY is set but OPENAI_BASE_URL is not: set it to the OpenAI-compatible server to use")
	}
	return llm.NewRouter(providers, "")
}

// newEmbedder picks the embedding provider from CONTRAIL_EMBEDDINGS: use-lite when its weights are present (else the
// local n-gram embedder, said once in the log), or a remote OpenAI-compatible or Ollama server.
func newEmbedder(cfg config.Config, logger *slog.Logger) (embedding.Embedder, error) {
	remote := func(provider, model string) (embedding.Embedder, error) {
		switch provider {
		case "openai":
			if cfg.OpenAIBaseURL == "" {
				return nil, fmt.Errorf("CONTRAIL_EMBEDDINGS=openai/%s needs OPENAI_BASE_URL", model)
			}
			return embedding.NewOpenAI(cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, model, nil), nil
		case "ollama":
			base := cfg.OllamaBaseURL
			if base == "" {
				base = "http://127.0.0.1:11434" // Ollama's own default, on this machine
			}
			return embedding.NewOllama(base, model, nil), nil
		}
		return nil, fmt.Errorf("unknown embedding provider %q", provider)
	}
	emb, err := embedding.Select(cfg.Embeddings, cfg.ModelsDir(), logger, embedding.WithRemote(remote))
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	return emb, nil
}
