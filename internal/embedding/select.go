package embedding

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/contrailhq/contrail/internal/embedding/uselite"
)

// UseLiteDir is where, under the models directory, `make models` unpacks the USE-Lite weights.
const UseLiteDir = "use-lite"

var _ Embedder = (*uselite.Model)(nil)

// RemoteFunc builds the embedder for a remote spec: provider is "openai" or "ollama", model what follows the
// slash. The binary supplies it (with the base URLs, keys and HTTP client it was configured with).
type RemoteFunc func(provider, model string) (Embedder, error)

// SelectOption configures Select.
type SelectOption func(*selectConfig)

type selectConfig struct {
	remote RemoteFunc
}

// WithRemote lets Select build the "openai/<model>" and "ollama/<model>" embedders.
func WithRemote(f RemoteFunc) SelectOption {
	return func(c *selectConfig) { c.remote = f }
}

// ErrRemoteUnavailable is returned for a remote spec when Select was given no RemoteFunc.
var ErrRemoteUnavailable = errors.New("remote embedding providers are not available here")

// Select returns the embedder that spec (CONTRAIL_EMBEDDINGS) names:
//   - "" picks the best one available offline: use-lite when its weights are in modelsDir/use-lite, else local,
//     saying once (at Info) that it runs on the n-gram embedder and how to get the weights;
//   - "local" is the n-gram embedder (DefaultLocalDim dimensions);
//   - "use-lite" is Universal Sentence Encoder Lite, and an error when its weights are missing;
//   - "openai/<model>" and "ollama/<model>" go to the RemoteFunc given WithRemote.
func Select(spec, modelsDir string, logger *slog.Logger, opts ...SelectOption) (Embedder, error) {
	var cfg selectConfig
	for _, o := range opts {
		o(&cfg)
	}
	weights := filepath.Join(modelsDir, UseLiteDir)
	switch spec {
	case "":
		present, err := weightsPresent(weights)
		if err != nil {
			return nil, fmt.Errorf("select embedder: %w", err)
		}
		if !present {
			logger.Info("embeddings: running on the local n-gram embedder; routing is much better with the "+
				"neural use-lite embedder: fetch its weights with `make models`",
				"weights_dir", weights)
			return NewLocal(DefaultLocalDim), nil
		}
		return loadUseLite(weights, logger)
	case "local":
		return NewLocal(DefaultLocalDim), nil
	case uselite.Name:
		present, err := weightsPresent(weights)
		if err != nil {
			return nil, fmt.Errorf("select embedder %q: %w", spec, err)
		}
		if !present {
			return nil, fmt.Errorf("select embedder %q: no weights in %s: fetch them with `make models`", spec, weights)
		}
		return loadUseLite(weights, logger)
	}
	provider, model, ok := strings.Cut(spec, "/")
	if !ok || model == "" || (provider != "openai" && provider != "ollama") {
		return nil, fmt.Errorf("select embedder %q: unknown; want local, use-lite, openai/<model> or ollama/<model>", spec)
	}
	if cfg.remote == nil {
		return nil, fmt.Errorf("select embedder %q: %w", spec, ErrRemoteUnavailable)
	}
	e, err := cfg.remote(provider, model)
	if err != nil {
		return nil, fmt.Errorf("select embedder %q: %w", spec, err)
	}
	return e, nil
}

func weightsPresent(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, "model.json"))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	default:
		return false, fmt.Errorf("look for use-lite weights: %w", err)
	}
}

func loadUseLite(dir string, logger *slog.Logger) (Embedder, error) {
	m, err := uselite.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("select embedder: %w", err)
	}
	logger.Info("embeddings: using use-lite (Universal Sentence Encoder Lite)", "weights_dir", dir)
	return m, nil
}
