package platform_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// benchFace answers every request with 200 and nothing else, so that a benchmark measures what runs before it.
type benchFace struct{}

func (benchFace) Prefix() string      { return "/b" }
func (benchFace) AcceptsAgentTokens() {}
func (benchFace) WriteError(w http.ResponseWriter, _ *http.Request, err error) {
	httpapi.WriteJSON(w, 500, err.Error())
}
func (benchFace) Routes(r chi.Router) {
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
}

// BenchmarkRequestPath measures what every request pays before its handler runs: the router alone, then
// authentication (API key: two KV reads; agent token: an Ed25519 verification and one KV read), then the rate
// limiter (one KV round trip). In-process, without TCP.
func BenchmarkRequestPath(b *testing.B) {
	n := platformtest.Start(b)
	ctx := context.Background()
	k := n.CreateAccount(b, commands.NewAccount{Name: "bench"})
	// A limit no benchmark reaches, so that every request takes the counting path.
	n.SetLimits(b, k.AccountID, 0, 1<<30)
	token, err := n.Signer.AgentToken(ctx, auth.AgentClaims{User: k.AccountID, AgentID: "agt_bench"})
	if err != nil {
		b.Fatal(err)
	}
	ready := func(context.Context) error { return nil }
	bare := httpapi.New(httpapi.Config{Auth: n.Auth, Ready: ready, Faces: []httpapi.Face{benchFace{}}})
	limited := httpapi.New(httpapi.Config{Auth: n.Auth, Limiter: n.Limits, Ready: ready, Faces: []httpapi.Face{benchFace{}}})
	run := func(b *testing.B, h http.Handler, path, bearer string) {
		req := httptest.NewRequest("GET", path, nil)
		if bearer != "" {
			req.Header.Set("Authorization", "Bearer "+bearer)
		}
		for b.Loop() {
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				b.Fatalf("%s: %d %s", path, w.Code, w.Body)
			}
		}
	}
	b.Run("router-only(healthz)", func(b *testing.B) { run(b, bare, "/healthz", "") })
	b.Run("api-key", func(b *testing.B) { run(b, bare, "/b/", k.Key) })
	b.Run("api-key+rate-limit", func(b *testing.B) { run(b, limited, "/b/", k.Key) })
	b.Run("agent-token", func(b *testing.B) { run(b, bare, "/b/", token) })
	b.Run("agent-token+rate-limit", func(b *testing.B) { run(b, limited, "/b/", token) })
}
