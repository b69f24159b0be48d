package platform_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// The bad-input sweep is issue 10's "Done when": every route the router has (chi.Walk) and every argument of every
// GraphQL query, mutation and subscription (from the schema) gets malformed, oversized and wildcard input, on a
// real node, and
//
//   - no answer is a 5xx;
//   - every 400 and 422 names the field or parameter at fault, in its face's shape (OpenAI's error.param,
//     Contrail's error.field, GraphQL's extensions.field); the only ones that may not are those about the request
//     as a whole (a body that is not JSON) or about the state of an object rather than a field (a run already
//     active), which the sweep counts apart;
//   - no error repeats a large input back;
//   - the node stays ready, its NATS connection up;
//   - another account's requests, wildcards included, learn nothing of the owner's objects, which stay intact.
//
// It starts from the route matrix's fixtures (matrix_fixtures_test.go), so a route added with a fixture is swept
// too. Its inputs per route and per GraphQL argument are in sweep_inputs_test.go.

// hostile is what the sweep sends where a value goes.
type hostile struct{ name, v string }

// hostileStrings are sent in place of every string: in paths (escaped), query strings, JSON bodies and GraphQL
// variables.
var hostileStrings = []hostile{
	{"*", "*"}, {">", ">"}, {".", "."}, {"dots", "a.b.c"}, {"space", "a b"}, {"blank", " "}, {"NUL", "a\x00b"},
	{"control", "a\r\nb"}, {"unicode", "ключ💥"}, {"4 kB", strings.Repeat("A", 4<<10)}, {"100 kB", strings.Repeat("A", 100<<10)},
}

// huge is sent in every string field of a body (not in URLs, where a server's header limit comes first).
var huge = hostile{"5 MB", strings.Repeat("A", 5<<20)}

// echoRun is what no error may hold of a large input: a run of this many of its bytes.
const echoRun = 1 << 10

// sweep sends requests and checks every answer.
type sweep struct {
	t *testing.T
	n *platformtest.Node
	m *matrix
	// Figures.
	requests, serverErrors, unnamed, whole, state int
	statuses                                      map[int]int
	// hugeSent holds the fields (by face and name) already sent 5 MB: every string field gets 100 kB, over every
	// limit but the few of 256,000 characters, and each field name 5 MB once (a 5 MB request costs a quarter of
	// a second of parsing; thousands would make the sweep minutes long).
	hugeSent map[string]bool
}

// skipHuge reports whether a mutation is a 5 MB value of a field that was already sent one.
func (s *sweep) skipHuge(f string, mu mutation) bool {
	if mu.name != huge.name {
		return false
	}
	name := mu.at
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, '['); i >= 0 {
		name = name[:i]
	}
	key := f + ":" + name
	if s.hugeSent[key] {
		return true
	}
	s.hugeSent[key] = true
	return false
}

// face is whose error shape a path's answers have.
func face(path string) string {
	switch {
	case path == "/graphql" || strings.HasPrefix(path, "/graphql/") || strings.HasPrefix(path, "/graphql?"):
		return "graphql"
	case strings.HasPrefix(path, "/v1/"), strings.HasPrefix(path, "/api/openai-proxy/"):
		return "openai" // the proxy for agents answers in OpenAI's shape, as the openai package expects
	case path == "/mcp" || strings.HasPrefix(path, "/mcp/"):
		return "mcp" // JSON-RPC's, what an MCP client reads
	}
	return "rest"
}

// answer is an error as its face shows it.
type answer struct {
	code, field, message string
	ok                   bool
}

func parseAnswer(face string, body []byte) answer {
	switch face {
	case "openai":
		var e struct {
			Error *struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
			return answer{}
		}
		a := answer{code: e.Error.Type, message: e.Error.Message, ok: true}
		if e.Error.Code != nil {
			a.code = *e.Error.Code
		}
		if e.Error.Param != nil {
			a.field = *e.Error.Param
		}
		return a
	case "graphql":
		var e struct {
			Errors []struct {
				Message    string         `json:"message"`
				Extensions map[string]any `json:"extensions"`
			} `json:"errors"`
		}
		if json.Unmarshal(body, &e) != nil || len(e.Errors) == 0 || e.Errors[0].Message == "" {
			return answer{}
		}
		code, _ := e.Errors[0].Extensions["code"].(string)
		field, _ := e.Errors[0].Extensions["field"].(string)
		return answer{code: code, field: field, message: e.Errors[0].Message, ok: code != ""}
	case "mcp":
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
				Data    struct{ Code, Field string }
			} `json:"error"`
		}
		if json.Unmarshal(body, &e) != nil || e.Error.Code == 0 || e.Error.Message == "" || e.Error.Data.Code == "" {
			return answer{}
		}
		return answer{code: e.Error.Data.Code, field: e.Error.Data.Field, message: e.Error.Message, ok: true}
	}
	var e struct {
		Error struct{ Code, Message, Field string } `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.Code == "" || e.Error.Message == "" {
		return answer{}
	}
	return answer{code: e.Error.Code, field: e.Error.Field, message: e.Error.Message, ok: true}
}

// wholeRequest matches a 400 about the request as a whole, which has no one field to name (OpenAI's own errors
// for these have param null).
var wholeRequest = regexp.MustCompile(`(?i)\bJSON\b|body|Content-Type|multipart`)

// stateError matches a 400 about an object's state rather than a field: nothing the client sent is at fault.
var stateError = regexp.MustCompile(`already has an active run|while a run .* is active|do not accept tool outputs|Cannot cancel run|Only responses created with background`)

// check asserts what every answer must be. what says which request it was; sent are the values it carried.
func (s *sweep) check(what, path, method string, status int, body []byte, sent []string) {
	s.t.Helper()
	s.requests++
	s.statuses[status]++
	f := face(path)
	if status >= 500 || status == 0 {
		s.serverErrors++
		s.t.Errorf("%s: %d %.300s", what, status, body)
		return
	}
	a := parseAnswer(f, body)
	isError := status >= 400 || (f == "graphql" && a.ok)
	if !isError {
		return
	}
	if method != http.MethodHead && !a.ok {
		s.t.Errorf("%s: %d is not in the %s face's error shape: %.300s", what, status, f, body)
		return
	}
	for _, v := range sent {
		if len(v) >= echoRun && bytes.Contains(body, []byte(v[:echoRun])) {
			s.t.Errorf("%s: the %d error repeats %d bytes of what was sent", what, status, echoRun)
		}
	}
	badInput := status == 400 || status == 422 || a.code == "BAD_USER_INPUT" || a.code == "GRAPHQL_VALIDATION_FAILED"
	if !badInput || a.field != "" || method == http.MethodHead {
		return
	}
	switch {
	case a.code == "unsupported":
		s.state++ // a route of the API this server does not have yet: it says so
	case stateError.MatchString(a.message):
		s.state++
	case wholeRequest.MatchString(a.message):
		s.whole++
	default:
		s.unnamed++
		s.t.Errorf("%s: %d names no field: %.300s", what, status, body)
	}
}

// do sends one request and checks the answer.
func (s *sweep) do(what, key, method, path string, body any, sent ...string) platformtest.Response {
	s.t.Helper()
	r := s.n.Do(s.t, key, method, path, body)
	s.check(what, path, method, r.Status, r.Body, sent)
	return r
}

func TestBadInputSweep(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	m := newMatrix(t, n)
	// Thousands of requests: no rate or quota stands in the sweep's way.
	for _, acct := range []string{m.a.AccountID, m.b.AccountID, commands.AdminAccountID} {
		n.SetLimits(t, acct, 1_000_000, 1_000_000)
	}
	s := &sweep{t: t, n: n, m: m, statuses: map[int]int{}, hugeSent: map[string]bool{}}
	all := routes(t, n)

	// Another account first, on the owner's objects as they were made: wildcards and odd IDs in every place.
	s.pathParams(all, m.b, true)
	s.graphql(m.b, true)
	m.intact(t, n)

	// Then the owner, everywhere, with everything (the owner's objects may change: what it sends is its own).
	s.pathParams(all, m.a, false)
	s.queryParams(all, m.a)
	s.bodies(all, m.a)
	s.graphql(m.a, false)

	if !n.NC.IsConnected() {
		t.Fatalf("the node's NATS connection did not survive the sweep: %v", n.NC.LastError())
	}
	for _, p := range []string{"/readyz", "/healthz"} {
		if r := n.Do(t, "", "GET", p, nil); r.Status != 200 {
			t.Fatalf("%s after the sweep: %d %s", p, r.Status, r.Body)
		}
	}
	codes := make([]int, 0, len(s.statuses))
	for c := range s.statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var by []string
	for _, c := range codes {
		by = append(by, fmt.Sprintf("%d×%d", s.statuses[c], c))
	}
	t.Logf("bad-input sweep: %d requests over %d routes and the GraphQL schema; %d answered 5xx; %d 400/422 named no field; "+
		"%d were about the whole request (not JSON, wrong content type), %d about an object's state or an API not built; by status: %s",
		s.requests, len(all), s.serverErrors, s.unnamed, s.whole, s.state, strings.Join(by, " "))
}

// keyFor is the key an account uses on a route: admin routes are swept with the admin key, so that the sweep gets
// past the check of who may call them to the checks of what they take.
func (s *sweep) keyFor(r route, o owner) string {
	if slices.Contains(adminRoutes(), r.String()) {
		return s.n.AdminKey
	}
	return o.Key
}

// idParams are the path parameters that hold an ID (internal/ids): none of the hostile values can be one, so each
// must be a 400 naming the parameter, whoever asks, before anything is looked up. (The other parameters are names a
// client chooses, such as user storage keys, where "*" is a name like any other.)
var idParams = []string{"assistant_id", "thread_id", "message_id", "run_id", "step_id", "file_id", "vector_store_id", "batch_id", "id", "handle",
	"keyID", "accountID", "name", "seq"}

// pathParams sends every route with each of its path parameters in turn replaced by hostile values (alone, and
// after the kind's prefix: "asst_*"), the others naming the owner's objects. As another account (other) it sends
// the short ones and checks that no answer holds the owner's data.
func (s *sweep) pathParams(all []route, o owner, other bool) {
	for _, r := range all {
		if slices.Contains(openRoutes(), r.String()) && r.Pattern != "/api/embeds/{id}/content" {
			continue
		}
		for _, p := range r.params() {
			valid := s.m.values[p]
			for _, h := range hostileStrings {
				if other && len(h.v) > 64 {
					continue
				}
				for _, v := range []string{h.v, prefixOf(valid) + h.v} {
					values := mapsWith(s.m.values, p, v)
					path := r.path(values)
					what := fmt.Sprintf("%s with {%s} %s", r, p, h.name)
					resp := s.do(what, s.keyFor(r, o), r.Method, path, s.m.bodies[r.String()], v)
					if slices.Contains(idParams, p) && (resp.Status != 400 || !namesParam(resp.Body, p)) {
						s.t.Errorf("%s: %d %.200s; want 400 naming %s", what, resp.Status, resp.Body, p)
					}
					if other {
						checkNoLeak(s.t, r.String(), path, s.m.bodies[r.String()], resp.Body, s.m.secrets)
					}
				}
			}
		}
	}
}

// queryParams sends every query parameter a route reads with hostile values.
func (s *sweep) queryParams(all []route, o owner) {
	for _, r := range all {
		for _, q := range queryParamsOf(r) {
			for _, h := range hostileStrings {
				path := r.path(s.m.values) + "?" + url.Values{q: {h.v}}.Encode()
				key := o.Key
				if q == "account" {
					key = s.n.AdminKey
				}
				s.do(fmt.Sprintf("%s?%s=%s", r, q, h.name), key, r.Method, path, nil, h.v)
			}
		}
	}
}

// bodies sends every route that takes a body: one that is not JSON, one of 5 MB, and its template (see
// bodyTemplates) with each of its values in turn replaced by hostile ones.
func (s *sweep) bodies(all []route, o owner) {
	templates := bodyTemplates(s.m)
	for _, r := range all {
		if r.Method != http.MethodPost || strings.HasPrefix(r.Pattern, "/graphql") {
			continue
		}
		path := r.path(s.m.values)
		key := s.keyFor(r, o)
		what := r.String()
		if r.Pattern == "/v1/files" {
			s.uploads(what, key)
			continue
		}
		s.do(what+" with a body that is not JSON", key, r.Method, path, `{"model": "gpt-4o-mini",`)
		s.do(what+" with a body of 5 MB", key, r.Method, path, `{"x":"`+huge.v+`"}`, huge.v)
		tmpl, ok := templates[r.String()]
		if !ok {
			continue
		}
		for _, mu := range mutations(tmpl, append(hostileStrings, huge)) {
			if s.skipHuge(face(path), mu) {
				continue
			}
			s.do(what+" with "+mu.at+" "+mu.name, key, r.Method, path, mu.doc, mu.sent)
		}
	}
}

// uploads sweeps the multipart file upload: its purpose and file name.
func (s *sweep) uploads(what, key string) {
	for _, h := range append(hostileStrings, huge) {
		for _, field := range []string{"purpose", "filename"} {
			purpose, filename := "assistants", "notes.txt"
			if field == "purpose" {
				purpose = h.v
			} else {
				filename = h.v
			}
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			_ = mw.WriteField("purpose", purpose)
			fw, _ := mw.CreateFormFile("file", filename)
			_, _ = fw.Write([]byte("hello"))
			_ = mw.Close()
			req, err := http.NewRequestWithContext(s.t.Context(), "POST", s.n.URL+"/v1/files", &body)
			if err != nil {
				s.t.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", mw.FormDataContentType())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				s.t.Fatalf("%s: %v", what, err)
			}
			raw := new(bytes.Buffer)
			_, _ = raw.ReadFrom(resp.Body)
			resp.Body.Close()
			s.check(fmt.Sprintf("%s with %s %s", what, field, h.name), "/v1/files", "POST", resp.StatusCode, raw.Bytes(), []string{h.v})
		}
	}
}

// prefixOf is an ID's kind prefix ("asst_" of "asst_01J..."), or "" for a value without one.
func prefixOf(id string) string {
	if i := strings.IndexAny(id, "_-"); i > 0 && i < 8 {
		return id[:i+1]
	}
	return ""
}

func mapsWith(m map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(m)+1)
	for x, y := range m {
		out[x] = y
	}
	out[k] = v
	return out
}
