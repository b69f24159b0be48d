package platform

import (
	"fmt"
	"log/slog"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/llm/openai"
)

// newModels builds the model router: the offline model always, and the openai provider when OPENAI_BASE_URL names
// an OpenAI-compatible server. A key without a base URL is refused rather than sent to a host chosen here.
func newModels(cfg config.Config, logger *slog.Logger) (*llm.Router, error) {
	providers := map[string]llm.Provider{llm.ProviderOffline: offline.New(nil)}
	switch {
	case cfg.OpenAIBaseURL != "":
		p, err := openai.New(cfg.OpenAIBaseURL, cfg.OpenAIAPIKey, nil, logger.With("provider", llm.ProviderOpenAI))
		if err != nil {
			return nil, fmt.Errorf("OPENAI_BASE_URL: %w", err)
		}
		providers[llm.ProviderOpenAI] = p
	case cfg.OpenAIAPIKey != "":
		return nil, fmt.Errorf("OPENAI_API_KEY is set but OPENAI_BASE_URL is not: set it to the OpenAI-compatible server to use")
	}
	return llm.NewRouter(providers, "")
}
