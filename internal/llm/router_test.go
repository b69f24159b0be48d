package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
)

// named is the smallest Provider: the router only needs to tell providers apart.
type named string

func (n named) Name() string { return string(n) }
func (n named) Complete(_ context.Context, req llm.Request, _ func(llm.Delta)) (llm.Response, error) {
	return llm.Response{Text: string(n) + " answers " + req.Model, Model: req.Model}, nil
}

func TestRouterResolve(t *testing.T) {
	t.Parallel()
	withOpenAI, err := llm.NewRouter(map[string]llm.Provider{"openai": named("openai"), "offline": named("offline"), "ollama": named("ollama")}, "")
	if err != nil {
		t.Fatal(err)
	}
	offlineOnly, err := llm.NewRouter(map[string]llm.Provider{"offline": named("offline")}, "")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		router       *llm.Router
		model        string
		wantProvider string
		wantModel    string
		wantErr      error
	}{
		{withOpenAI, "gpt-4o", "openai", "gpt-4o", nil},
		{withOpenAI, "openai/gpt-4o", "openai", "gpt-4o", nil},
		{withOpenAI, "OpenAI/gpt-4o", "openai", "gpt-4o", nil},
		{withOpenAI, "offline/default", "offline", "default", nil},
		{withOpenAI, "ollama/llama3", "ollama", "llama3", nil},
		{withOpenAI, "ollama/llama3:8b-instruct", "ollama", "llama3:8b-instruct", nil},
		{withOpenAI, "openai/meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B", nil},
		// A hub organisation is not a provider: the whole name goes to the default provider.
		{withOpenAI, "meta-llama/Llama-3-8B", "openai", "meta-llama/Llama-3-8B", nil},
		{withOpenAI, "", "openai", "", nil},
		{withOpenAI, "anthropic/claude-3-5-sonnet", "", "", llm.ErrUnknownProvider},
		{withOpenAI, "openai/", "", "", llm.ErrBadRequest},
		// "offline" is the offline model whatever the default; another provider's bare name asks for a model.
		{withOpenAI, "offline", "offline", "", nil},
		{withOpenAI, "Offline", "offline", "", nil},
		{withOpenAI, "openai", "", "", llm.ErrBadRequest},
		{offlineOnly, "offline", "offline", "", nil},
		{offlineOnly, "gpt-4o", "offline", "gpt-4o", nil},
		{offlineOnly, "llama3", "offline", "llama3", nil},
		{offlineOnly, "openai/gpt-4o", "", "", llm.ErrUnknownProvider},
		{offlineOnly, "ollama/llama3", "", "", llm.ErrUnknownProvider},
	}
	for _, c := range cases {
		p, model, err := c.router.Resolve(c.model)
		if c.wantErr != nil {
			if !errors.Is(err, c.wantErr) || !errors.Is(err, llm.ErrBadRequest) {
				t.Errorf("Resolve(%q) error = %v, want %v (and a bad request)", c.model, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Resolve(%q): %v", c.model, err)
			continue
		}
		if p.Name() != c.wantProvider || model != c.wantModel {
			t.Errorf("Resolve(%q) = %s, %q; want %s, %q", c.model, p.Name(), model, c.wantProvider, c.wantModel)
		}
	}
}

// TestRouterAnswering: what a run records as its model says when the offline model answers in place of a bare name.
func TestRouterAnswering(t *testing.T) {
	t.Parallel()
	withOpenAI, _ := llm.NewRouter(map[string]llm.Provider{"openai": named("openai"), "offline": named("offline")}, "")
	offlineOnly, _ := llm.NewRouter(map[string]llm.Provider{"offline": named("offline")}, "")
	cases := []struct {
		router      *llm.Router
		model, want string
	}{
		{withOpenAI, "gpt-4o", "gpt-4o"},
		{withOpenAI, "offline", "offline"},
		{withOpenAI, "offline/default", "offline/default"},
		{offlineOnly, "gpt-4o", "offline"},
		{offlineOnly, "meta-llama/Llama-3-8B", "offline"},
		{offlineOnly, "offline", "offline"},
		// A model nobody can run is left as it is: the call fails naming it.
		{offlineOnly, "openai/gpt-4o", "openai/gpt-4o"},
	}
	for _, c := range cases {
		if got := c.router.Answering(c.model); got != c.want {
			t.Errorf("Answering(%q) = %q, want %q", c.model, got, c.want)
		}
	}
}

func TestRouterErrorNamesProvider(t *testing.T) {
	t.Parallel()
	r, err := llm.NewRouter(map[string]llm.Provider{"offline": named("offline")}, "")
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = r.Resolve("openai/gpt-4o")
	for _, want := range []string{`"openai"`, "not configured", "offline", "OPENAI_API_KEY"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestNewRouterRejectsBadConfig(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		providers map[string]llm.Provider
		def       string
	}{
		"no default possible": {map[string]llm.Provider{"ollama": named("ollama")}, ""},
		"default missing":     {map[string]llm.Provider{"offline": named("offline")}, "openai"},
		"nil provider":        {map[string]llm.Provider{"offline": nil}, ""},
		"slash in name":       {map[string]llm.Provider{"off/line": named("x"), "offline": named("offline")}, ""},
		"upper case name":     {map[string]llm.Provider{"Offline": named("x"), "offline": named("offline")}, ""},
	}
	for name, c := range cases {
		if _, err := llm.NewRouter(c.providers, c.def); err == nil {
			t.Errorf("%s: NewRouter accepted it", name)
		}
	}
}

func TestRouterComplete(t *testing.T) {
	t.Parallel()
	r, err := llm.NewRouter(map[string]llm.Provider{"openai": named("openai"), "offline": named("offline")}, "offline")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := r.Complete(t.Context(), llm.Request{Model: "openai/gpt-4o"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "openai answers gpt-4o" {
		t.Errorf("Complete went to %q", resp.Text)
	}
	resp, err = r.Complete(t.Context(), llm.Request{Model: "llama3"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "offline answers llama3" {
		t.Errorf("bare name with default offline went to %q", resp.Text)
	}
}
