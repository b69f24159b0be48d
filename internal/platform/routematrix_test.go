package platform_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// The route matrix checks the security model on every route the HTTP router has, read from the router itself,
// so that a route added later is covered without anyone remembering to:
//
//   - without a key, and with a revoked key, every route but the open ones answers 401 in its face's error shape;
//   - an agent token reaches no route outside the faces that accept agent tokens;
//   - account B on account A's objects gets 404 (403 or 404 on admin routes), and no answer to B holds anything
//     of A's;
//   - A's objects are unchanged after everything B tried.
//
// A's objects come from fixtures that each face registers in matrix_fixtures_test.go. A route whose URL names
// an object (a parameter) that no fixture makes fails the test, telling its author to add one. A catch-all route
// ("/*") is requested with a path under it that names nothing.

// owner is an account the matrix acts as.
type owner struct {
	auth.Principal
	Key string
}

// objects is what a fixture made for its owner.
type objects struct {
	// Params are the URL parameter values naming the objects.
	Params map[string]string
	// Secrets are strings of the owner's data that no other account's answer may hold (unless that account sent
	// them itself, in its URL or body).
	Secrets []string
}

// fixture makes objects of one face owned by an account.
type fixture struct {
	// Name says whose fixture it is in failure messages.
	Name string
	// Params are the URL parameters (chi's names) it fills.
	Params []string
	// Make creates the objects as the owner, through the API as a client would.
	Make func(t *testing.T, n *platformtest.Node, o owner) objects
	// Intact checks, after another account tried every route on them, that the objects are unchanged.
	Intact func(t *testing.T, n *platformtest.Node, o owner, objs objects)
	// OwnScope lists routes ("METHOD pattern") whose parameters name a place in the caller's own scope rather than
	// an object of the owner's (user storage: another account writing to the same agent and key writes its own
	// value). There another account may get a 2xx; its answer must still hold nothing of the owner's, and Intact
	// must still hold.
	OwnScope []string
	// Bodies are request bodies for routes that need one to get past validation ("METHOD pattern" → body).
	// "{param}" in a string body takes the owner's value, "{caller.param}" the other account's (see Caller).
	Bodies map[string]any
	// Caller, when set, makes objects of the other account that its requests name ("{caller.param}" in Bodies
	// and Probes), so that a request gets past the checks on the caller's own objects to the check on the
	// owner's: account B running account A's thread must name an assistant, and with one of A's the request
	// would stop at the assistant and never test the thread.
	Caller func(t *testing.T, n *platformtest.Node, o owner) map[string]string
	// Probes are more requests the other account makes against the owner's objects, for what URL parameters
	// cannot say (query strings, GraphQL queries). "{param}" in Path, and in a string Body, takes the value
	// ("{caller.param}" the other account's, see Caller).
	Probes []probe
}

// probe is one extra request of the other account.
type probe struct {
	Method, Path string
	Body         any
}

// errorShape checks that a 401 body has its face's error shape.
type errorShape func(body []byte) error

// route is one method and pattern of the router.
type route struct{ Method, Pattern string }

func (r route) String() string { return r.Method + " " + r.Pattern }

var paramRE = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

func (r route) params() []string {
	var out []string
	for _, m := range paramRE.FindAllStringSubmatch(r.Pattern, -1) {
		out = append(out, m[1])
	}
	return out
}

// path fills the route's parameters, and a catch-all's "*" with a segment that names nothing.
func (r route) path(values map[string]string) string {
	p := paramRE.ReplaceAllStringFunc(r.Pattern, func(m string) string {
		name := paramRE.FindStringSubmatch(m)[1]
		if v, ok := values[name]; ok {
			return url.PathEscape(v)
		}
		return "x"
	})
	if strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "x"
	}
	return p
}

// routes lists the router's routes.
func routes(t *testing.T, n *platformtest.Node) []route {
	t.Helper()
	var out []route
	err := chi.Walk(n.Router, func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		// chi.Walk lists a mounted router's routes under the mount's prefix, so a "/*" left at the end is a
		// catch-all route of a face (see route.path).
		out = append(out, route{method, pattern})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Reads before writes, deletes last: a read by another account must meet the owner's objects as they were
	// made, not after a write that a broken check let through.
	rank := func(m string) int {
		return slices.Index([]string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}, m)
	}
	sort.Slice(out, func(i, j int) bool {
		if ri, rj := rank(out[i].Method), rank(out[j].Method); ri != rj {
			return ri < rj
		}
		return out[i].Pattern < out[j].Pattern
	})
	return out
}

// shapeFor finds the error shape of the face whose prefix is the longest match.
func shapeFor(pattern string) errorShape {
	best, shape := -1, errorShape(contrailErrorShape)
	for prefix, s := range errorShapes() {
		if (pattern == prefix || strings.HasPrefix(pattern, prefix+"/")) && len(prefix) > best {
			best, shape = len(prefix), s
		}
	}
	return shape
}

// contrailErrorShape is the shape of Contrail's own REST faces (/admin, /api).
func contrailErrorShape(body []byte) error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != "unauthorized" || e.Error.Message == "" {
		return fmt.Errorf(`want {"error":{"code":"unauthorized","message":...}}, got %.200s`, body)
	}
	return nil
}

// matrix is what the route matrix and the bad-input sweep start from: two accounts, the owner's objects made by
// every face's fixtures, and what requests need to name them.
type matrix struct {
	a, b     owner
	fixtures []fixture
	made     map[string]objects
	// values are the URL parameter values naming A's objects; "caller.<param>" names B's own (see fixture.Caller).
	values   map[string]string
	secrets  []string
	ownScope map[string]bool
	// bodies are the request bodies routes need to get past validation, filled with the values.
	bodies map[string]any
}

// newMatrix makes two accounts and, through every fixture, A's objects (and B's own where a fixture needs them).
func newMatrix(t *testing.T, n *platformtest.Node) *matrix {
	t.Helper()
	newOwner := func(name string) owner {
		p, key := n.NewAccount(t, name+"-"+events.RandomToken(4))
		return owner{p, key}
	}
	m := &matrix{a: newOwner("matrix-owner"), b: newOwner("matrix-other"), fixtures: matrixFixtures(),
		made: map[string]objects{}, values: map[string]string{}, ownScope: map[string]bool{}, bodies: map[string]any{}}
	m.secrets = []string{m.a.Username}
	for _, f := range m.fixtures {
		objs := f.Make(t, n, m.a)
		m.made[f.Name] = objs
		for k, v := range objs.Params {
			m.values[k] = v
		}
		m.secrets = append(m.secrets, objs.Secrets...)
	}
	// B's own objects, for requests that must name one to reach the check on A's.
	for _, f := range m.fixtures {
		if f.Caller == nil {
			continue
		}
		for k, v := range f.Caller(t, n, m.b) {
			m.values["caller."+k] = v
		}
	}
	for _, f := range m.fixtures {
		for _, r := range f.OwnScope {
			m.ownScope[r] = true
		}
		for r, body := range f.Bodies {
			if s, ok := body.(string); ok {
				body = fill(s, m.values)
			}
			m.bodies[r] = body
		}
	}
	return m
}

// intact runs every fixture's check that A's objects are as they were made.
func (m *matrix) intact(t *testing.T, n *platformtest.Node) {
	t.Helper()
	for _, f := range m.fixtures {
		if f.Intact != nil {
			f.Intact(t, n, m.a, m.made[f.Name])
		}
	}
}

func TestRouteMatrix(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	m := newMatrix(t, n)
	a, b, values, secrets, ownScope, bodies := m.a, m.b, m.values, m.secrets, m.ownScope, m.bodies
	revoked := n.IssueKey(t, a.Principal, a.AccountID, "to revoke")
	gone, err := n.Commands.Accounts.RevokeKey(ctx, a.Principal, a.AccountID, revoked.KeyID)
	n.Shown(t, "revoke key", gone, err, projections.Accounts{})
	agentToken, err := n.Signer.AgentToken(ctx, auth.AgentClaims{User: a.AccountID, AgentID: "agt_matrix"})
	if err != nil {
		t.Fatal(err)
	}
	fixtures := m.fixtures
	open := toSet(openRoutes())
	admin := toSet(adminRoutes())
	agentFaces := agentTokenPrefixes()

	all := routes(t, n)
	if len(all) == 0 {
		t.Fatal("the router lists no routes")
	}
	// Requests that act in B's own scope come last: what they create for B must not meet the checks that B
	// finds nothing (B's DELETE of the owner's key must find nothing to delete).
	slices.SortStableFunc(all, func(x, y route) int {
		return boolInt(ownScope[x.String()]) - boolInt(ownScope[y.String()])
	})
	covered := 0
	for _, r := range all {
		if open[r.String()] {
			if resp := n.Do(t, "", r.Method, r.path(values), nil); resp.Status == 401 {
				t.Errorf("%s is listed as open but answers 401 without a key", r)
			}
			continue
		}
		covered++
		for _, p := range r.params() {
			if _, ok := values[p]; !ok {
				t.Errorf("%s names an object by {%s}, and no route-matrix fixture makes one: add a fixture to "+
					"matrixFixtures() in internal/platform/matrix_fixtures_test.go that creates such an object as "+
					"its owner and returns its {%s} (see the fixture type in routematrix_test.go)", r, p, p)
			}
		}
		path := r.path(values)
		body := bodies[r.String()]
		shape := shapeFor(r.Pattern)
		for _, who := range []struct{ name, key string }{{"no key", ""}, {"a revoked key", revoked.Key}} {
			resp := n.Do(t, who.key, r.Method, path, body)
			if resp.Status != 401 {
				t.Errorf("%s with %s: %d, want 401", r, who.name, resp.Status)
				continue
			}
			if r.Method != http.MethodHead {
				if err := shape(resp.Body); err != nil {
					t.Errorf("%s with %s: the 401 is not in its face's shape: %v", r, who.name, err)
				}
			}
		}
		if !hasPrefix(r.Pattern, agentFaces) {
			if resp := n.Do(t, agentToken, r.Method, path, body); resp.Status != 403 {
				t.Errorf("%s with an agent token: %d, want 403 (only %v accept agent tokens)", r, resp.Status, agentFaces)
			}
		}

		// B on A's objects.
		resp := n.Do(t, b.Key, r.Method, path, body)
		switch {
		case admin[r.String()]:
			if resp.Status != 403 && resp.Status != 404 {
				t.Errorf("%s by a non-admin account: %d %.200s, want 403 or 404", r, resp.Status, resp.Body)
			}
		case len(r.params()) > 0 && !ownScope[r.String()]:
			if resp.Status != 404 {
				t.Errorf("%s by account B on account A's object: %d %.200s, want 404", r, resp.Status, resp.Body)
			}
		default:
			if resp.Status == 401 || resp.Status >= 500 {
				t.Errorf("%s by account B: %d %.200s", r, resp.Status, resp.Body)
			}
		}
		checkNoLeak(t, r.String(), path, body, resp.Body, secrets)
	}
	for _, f := range fixtures {
		for _, p := range f.Probes {
			path, body := fill(p.Path, values), p.Body
			if s, ok := body.(string); ok {
				body = fill(s, values)
			}
			resp := n.Do(t, b.Key, p.Method, path, body)
			if resp.Status >= 500 {
				t.Errorf("probe %s %s by account B: %d", p.Method, path, resp.Status)
			}
			checkNoLeak(t, "probe "+p.Method+" "+p.Path, path, body, resp.Body, secrets)
		}
	}
	m.intact(t, n)
	for r := range open {
		if !slices.ContainsFunc(all, func(x route) bool { return x.String() == r }) {
			t.Errorf("%s is listed as open but the router has no such route", r)
		}
	}
	t.Logf("%d routes behind a key checked, %d open", covered, len(open))
}

// checkNoLeak fails when an answer to the other account holds one of the owner's secrets it did not send itself.
func checkNoLeak(t *testing.T, what, path string, body any, answer []byte, secrets []string) {
	t.Helper()
	sent := path
	if body != nil {
		raw, _ := json.Marshal(body)
		sent += string(raw)
	}
	for _, s := range secrets {
		if s != "" && !strings.Contains(sent, s) && strings.Contains(string(answer), s) {
			t.Errorf("%s: the answer to account B holds account A's %q: %.300s", what, s, answer)
		}
	}
}

func fill(s string, values map[string]string) string {
	for k, v := range values {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toSet(xs []string) map[string]bool {
	out := map[string]bool{}
	for _, x := range xs {
		out[x] = true
	}
	return out
}

func hasPrefix(pattern string, prefixes []string) bool {
	for _, p := range prefixes {
		if pattern == p || strings.HasPrefix(pattern, p+"/") {
			return true
		}
	}
	return false
}
