package openaiapi_test

import (
	"testing"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The official SDK lists the models a node runs: the offline model always, and the configured default with the
// provider that runs it; each is retrievable, and a model not listed is OpenAI's 404.
func TestModelsAreListedWithTheOfficialSDK(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithConfig(func(c *config.Config) { c.Model = "gpt-4.1-nano" }))
	ctx := ctxFor(t)
	page, err := e.client.Models.List(ctx)
	if err != nil {
		t.Fatalf("list: %v", apiErr(err))
	}
	got := map[string]openai.Model{}
	for _, m := range page.Data {
		got[m.ID] = m
		if m.Object != "model" || m.Created == 0 {
			t.Errorf("model object: %s", m.RawJSON())
		}
	}
	if len(got) != 2 || got["offline"].OwnedBy != "contrail" || got["gpt-4.1-nano"].OwnedBy != "openai" {
		t.Fatalf("models: %s", page.RawJSON())
	}
	m, err := e.client.Models.Get(ctx, "gpt-4.1-nano")
	if err != nil || m.ID != "gpt-4.1-nano" || m.OwnedBy != "openai" {
		t.Fatalf("get: %v %s", apiErr(err), m.RawJSON())
	}
	_, err = e.client.Models.Get(ctx, "gpt-5-unheard-of")
	if ae := wantAPIError(t, err, 404, "model"); ae.Code != "model_not_found" {
		t.Fatalf("an unknown model: %s", ae.RawJSON())
	}

	// Without a key: OpenAI's 401.
	r := e.node.Do(t, "", "GET", "/v1/models", nil)
	checkErrorBody(t, r.Status, r.Body)
}

// A node with no model server configured lists only the offline model, which is its default.
func TestModelsOfAnOfflineNode(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	_, key := n.NewAccount(t, "offline")
	c := sdk(n, key)
	page, err := c.Models.List(ctxFor(t))
	if err != nil {
		t.Fatalf("list: %v", apiErr(err))
	}
	if len(page.Data) != 1 || page.Data[0].ID != "offline" {
		t.Fatalf("models of an offline node: %s", page.RawJSON())
	}
}
