package llm

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/contrailhq/contrail/internal/errs"
)

// Provider names the platform gives meaning to.
const (
	ProviderOpenAI  = "openai"
	ProviderOffline = "offline"
)

// knownProviders are provider names a user may reasonably write that Contrail knows of even when they are not
// configured here, with a hint on how to configure them. A model string whose first segment is one of these but
// not configured is an error naming the provider, rather than a bare model name sent to the default provider
// (where it would fail with a less helpful "model not found").
var knownProviders = map[string]string{
	ProviderOpenAI:  "set OPENAI_BASE_URL and OPENAI_API_KEY to use any OpenAI-compatible server",
	ProviderOffline: "the offline model is built in; it should always be configured",
	"anthropic":     "",
	"azure":         "",
	"gemini":        "",
	"google":        "",
	"groq":          "",
	"mistral":       "",
	"ollama":        "",
	"openrouter":    "",
	"together":      "",
	"vllm":          "",
}

// Router resolves an agent's model string to a provider and the provider's own model name. It is itself a
// Provider: Complete resolves req.Model and hands the request on.
type Router struct {
	providers map[string]Provider
	def       string
}

// NewRouter routes among providers, keyed by name ("openai", "offline", ...). A bare model name goes to
// defaultProvider; when defaultProvider is empty it is "openai" if configured, else "offline", as DESIGN.md says.
func NewRouter(providers map[string]Provider, defaultProvider string) (*Router, error) {
	ps := maps.Clone(providers)
	for name, p := range ps {
		if p == nil {
			return nil, fmt.Errorf("new router: provider %q is nil", name)
		}
		if name == "" || strings.Contains(name, "/") || name != strings.ToLower(name) {
			return nil, fmt.Errorf("new router: provider name %q must be non-empty, lower case, and hold no '/'", name)
		}
	}
	if defaultProvider == "" {
		switch {
		case ps[ProviderOpenAI] != nil:
			defaultProvider = ProviderOpenAI
		case ps[ProviderOffline] != nil:
			defaultProvider = ProviderOffline
		default:
			return nil, fmt.Errorf("new router: no default provider given and neither %q nor %q is configured",
				ProviderOpenAI, ProviderOffline)
		}
	}
	if ps[defaultProvider] == nil {
		return nil, fmt.Errorf("new router: default provider %q is not among the configured ones (%s)",
			defaultProvider, strings.Join(slices.Sorted(maps.Keys(ps)), ", "))
	}
	return &Router{providers: ps, def: defaultProvider}, nil
}

// Default is the name of the provider that bare model names go to.
func (r *Router) Default() string { return r.def }

// Resolve finds the provider for model and the model name to send it.
//
//   - "provider/name" where provider is configured: that provider, and name, which may itself hold "/"
//     ("openai/meta-llama/Llama-3-8B" gives openai and "meta-llama/Llama-3-8B").
//   - "provider/name" where provider is a name Contrail knows of but is not configured ("anthropic/claude",
//     or "openai/gpt-4o" with no OpenAI configured): an UnknownProviderError naming it.
//   - anything else is a bare name for the default provider, "/" and all: "gpt-4o", and also
//     "meta-llama/Llama-3-8B", whose first segment is an organisation on a model hub, not a provider. To send a
//     name that starts with a provider's name, prefix it with the provider ("openai/openai/gpt-oss-20b").
//   - a bare name that is a provider's name: "offline" is the offline model (with no name of its own), even when
//     the default provider is another, so that --model offline next to OPENAI_BASE_URL never sends "offline"
//     upstream as a model name; another provider's bare name ("openai") is an error asking for a model after it.
//   - "" goes to the default provider with an empty name; the provider picks its own default or refuses.
func (r *Router) Resolve(model string) (Provider, string, error) {
	prefix, rest, found := strings.Cut(model, "/")
	if !found {
		name := strings.ToLower(strings.TrimSpace(model))
		if p, ok := r.providers[name]; ok && name == ProviderOffline {
			return p, "", nil
		}
		if _, ok := r.providers[name]; ok {
			return nil, "", fmt.Errorf("model %q names provider %q but no model: write %s/<model>, e.g. %s/gpt-4o-mini: %w",
				model, name, name, name, ErrBadRequest)
		}
		return r.providers[r.def], model, nil
	}
	// Provider names are lower case; "OpenAI/gpt-4o" means the openai provider too.
	if p, ok := r.providers[strings.ToLower(prefix)]; ok {
		if rest == "" {
			return nil, "", fmt.Errorf("model %q names provider %q but no model after it: %w", model, prefix, ErrBadRequest)
		}
		return p, rest, nil
	}
	if hint, ok := knownProviders[strings.ToLower(prefix)]; ok {
		return nil, "", &UnknownProviderError{
			Model:      model,
			Provider:   prefix,
			Configured: slices.Sorted(maps.Keys(r.providers)),
			Hint:       hint,
		}
	}
	return r.providers[r.def], model, nil
}

// Answering is the model string that a record of the work (a run's "model") should show for model: model itself,
// or "offline" when model resolves to the offline provider without naming it (a bare "gpt-4o" on a platform with
// no model server), so that nobody reads the name of a model that did not answer.
func (r *Router) Answering(model string) string {
	p, _, err := r.Resolve(model)
	offline, ok := r.providers[ProviderOffline]
	if err != nil || !ok || p != offline {
		return model
	}
	if prefix, _, found := strings.Cut(model, "/"); found && strings.EqualFold(prefix, ProviderOffline) {
		return model
	}
	return ProviderOffline
}

// Name is "router".
func (r *Router) Name() string { return "router" }

// Complete resolves req.Model and completes the request with the provider it names. A failure says which model
// server failed and what to do about it (see Explain).
func (r *Router) Complete(ctx context.Context, req Request, onDelta func(Delta)) (Response, error) {
	p, name, err := r.Resolve(req.Model)
	if err != nil {
		// A model string nobody here can run; what it says (the providers configured, how to add one) is for the
		// user, whose model string it is.
		return Response{}, &errs.Error{Code: errs.Invalid, Field: "model", Message: err.Error()}
	}
	req.Model = name
	resp, err := p.Complete(ctx, req, onDelta)
	return resp, Explain(p, err)
}
