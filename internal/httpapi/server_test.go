package httpapi_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
)

// tokens is an authenticator over a fixed table: the HTTP layer is under test here, not the key store.
type tokens map[string]auth.Principal

func (t tokens) Authenticate(_ context.Context, bearer string) (auth.Principal, error) {
	if p, ok := t[bearer]; ok {
		return p, nil
	}
	return auth.Principal{}, errs.E(errs.Unauthorized, "invalid API key")
}

// refuseAfter lets n requests through, then refuses with a Retry-After.
type refuseAfter struct{ n int }

func (l *refuseAfter) AllowRequest(context.Context, auth.Principal) error {
	if l.n == 0 {
		return errs.Limit(1500*time.Millisecond, "rate limit of 2 requests per minute per key reached")
	}
	l.n--
	return nil
}

// face answers with its own name, so that a test sees which face a request reached.
type face struct {
	prefix string
	agents bool
	ws     bool
}

func (f face) Prefix() string { return f.prefix }
func (f face) Routes(r chi.Router) {
	r.Get("/*", func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.From(r.Context())
		_, _ = io.WriteString(w, f.prefix+" "+p.AccountID)
	})
}
func (f face) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	w.Header().Set("X-Face", f.prefix)
	httpapi.WriteError(slog.New(slog.DiscardHandler), w, r, err)
}

type agentFace struct{ face }

func (agentFace) AcceptsAgentTokens() {}

type wsFace struct{ face }

func (wsFace) AuthenticatesWebsockets() {}

func get(t *testing.T, srv *httptest.Server, path, bearer string, header ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", srv.URL+path, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body)
}

func TestFacesNestUnderOnePrefixAndGateEveryRequest(t *testing.T) {
	t.Parallel()
	lim := &refuseAfter{n: 3} // the three admitted requests below
	srv := httptest.NewServer(httpapi.New(httpapi.Config{
		Auth: tokens{
			"user":  {AccountID: "acct_u", KeyID: "key_u"},
			"agent": {AccountID: "acct_u", AgentID: "agt_1"},
		},
		Limiter: lim,
		Ready:   func(context.Context) error { return nil },
		// /api is mounted by one package and /api/userstorage by another; the longer prefix wins.
		Faces: []httpapi.Face{face{prefix: "/api"}, agentFace{face{prefix: "/api/userstorage"}}, wsFace{face{prefix: "/graphql"}}},
	}))
	t.Cleanup(srv.Close)

	cases := []struct {
		path, bearer string
		status       int
		body         string
	}{
		{"/api/embeds/1", "user", 200, "/api acct_u"},
		{"/api/userstorage/agt_1/k", "user", 200, "/api/userstorage acct_u"},
		{"/api/userstorage/agt_1/k", "agent", 200, "/api/userstorage acct_u"},
		{"/api/embeds/1", "agent", 403, "agent token"},
		{"/api/userstorage/agt_1/k", "", 401, "missing API key"},
		{"/api/userstorage/agt_1/k", "stolen", 401, "invalid API key"},
	}
	for _, c := range cases {
		status, _, body := get(t, srv, c.path, c.bearer)
		if status != c.status || !strings.Contains(body, c.body) {
			t.Errorf("GET %s as %q: %d %s, want %d %q", c.path, c.bearer, status, body, c.status, c.body)
		}
	}
	// A websocket face reads the key from the first message: an upgrade without a header reaches it.
	if status, _, body := get(t, srv, "/graphql/", "", "Upgrade", "websocket", "Connection", "Upgrade"); status != 200 || body != "/graphql " {
		t.Errorf("websocket upgrade without a key: %d %s", status, body)
	}
	if status, _, _ := get(t, srv, "/graphql/", ""); status != 401 {
		t.Errorf("a plain request to the websocket face without a key: %d", status)
	}
	// Over the limit: 429 in the face's shape, with Retry-After rounded up to whole seconds.
	status, header, body := get(t, srv, "/api/userstorage/agt_1/k", "user")
	if status != 429 || header.Get("Retry-After") != "2" || header.Get("X-Face") != "/api/userstorage" || !strings.Contains(body, "rate limit of 2") {
		t.Errorf("over the rate limit: %d Retry-After %q face %q %s", status, header.Get("Retry-After"), header.Get("X-Face"), body)
	}
}

func TestAdmitIsWhatFacesRunOnTheirOwnConnections(t *testing.T) {
	t.Parallel()
	a := tokens{"agent": {AccountID: "acct_u", AgentID: "agt_1"}, "user": {AccountID: "acct_u", KeyID: "key_u"}}
	ctx := context.Background()
	if p, err := httpapi.Admit(ctx, a, nil, "Bearer user", false); err != nil || p.KeyID != "key_u" {
		t.Fatalf("a key: %+v %v", p, err)
	}
	if _, err := httpapi.Admit(ctx, a, nil, "bearer  agent ", false); errs.CodeOf(err) != errs.Forbidden {
		t.Fatalf("an agent token where agents are not admitted: %v", err)
	}
	if _, err := httpapi.Admit(ctx, a, nil, "Basic dXNlcg==", true); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("another scheme: %v", err)
	}
	if _, err := httpapi.Admit(ctx, a, &refuseAfter{}, "Bearer user", false); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestUnknownRoutesAnswerInTheLongestFacesShape(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{
		Auth:  tokens{},
		Ready: func(context.Context) error { return nil },
		Faces: []httpapi.Face{agentFace{face{prefix: "/api/userstorage"}}, face{prefix: "/api"}},
	}))
	t.Cleanup(srv.Close)
	req, _ := http.NewRequest("DELETE", srv.URL+"/api/userstorage", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("X-Face") != "/api/userstorage" {
		t.Fatalf("an unknown route under /api/userstorage was answered by %q", resp.Header.Get("X-Face"))
	}
}

// page is an open page: routes at the root with no key.
type page struct{}

func (page) OpenRoutes(r chi.Router) {
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "the page") })
}

func TestOpenPagesNeedNoKeyAndFacesStillDo(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(httpapi.New(httpapi.Config{
		Auth:  tokens{},
		Ready: func(context.Context) error { return nil },
		Faces: []httpapi.Face{face{prefix: "/api"}},
		Open:  []httpapi.OpenFace{page{}},
	}))
	t.Cleanup(srv.Close)
	if status, _, body := get(t, srv, "/", ""); status != 200 || body != "the page" {
		t.Fatalf("GET / without a key: %d %s", status, body)
	}
	if status, _, _ := get(t, srv, "/api/x", ""); status != 401 {
		t.Fatalf("a face beside an open page, without a key: %d", status)
	}
	if status, _, body := get(t, srv, "/nothing", ""); status != 404 || !strings.Contains(body, "not_found") {
		t.Fatalf("an unknown path beside an open page: %d %s", status, body)
	}
}

// TestLogErrorSaysWhatConflicted: an internal error and a conflict are logged with the error itself (the answer
// says "internal error", and a 409 alone does not say which object); a refusal the client can read is not.
func TestLogErrorSaysWhatConflicted(t *testing.T) {
	cases := []struct {
		err   error
		level string
	}{
		{errs.E(errs.Conflict, "thread thread_1 exists"), "WARN"},
		{errs.E(errs.Internal, "the disk is full"), "ERROR"},
		{errs.InvalidField("name", "name is too long"), ""},
	}
	for _, c := range cases {
		var out strings.Builder
		logger := slog.New(slog.NewTextHandler(&out, nil))
		httpapi.LogError(logger, httptest.NewRequest("POST", "/v1/threads", nil), c.err)
		logged := out.String()
		switch {
		case c.level == "" && logged != "":
			t.Errorf("%v logged: %s", c.err, logged)
		case c.level != "" && (!strings.Contains(logged, "level="+c.level) || !strings.Contains(logged, c.err.Error()) ||
			!strings.Contains(logged, "path=/v1/threads")):
			t.Errorf("%v logged %q, want a %s line with the error and the path", c.err, logged, c.level)
		}
	}
}
