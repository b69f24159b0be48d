package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/contrailhq/contrail/internal/errs"
	mcpclient "github.com/contrailhq/contrail/internal/mcp/client"
)

type addIn struct {
	A int `json:"a" jsonschema:"the first number"`
	B int `json:"b" jsonschema:"the second number"`
}

type addOut struct {
	Sum int `json:"sum"`
}

// toolServer is a Go MCP server of the SDK on loopback: add (with a schema), fail (a tool that fails), slow (one
// that takes until its caller gives up). It counts the requests it gets and remembers the last Authorization.
type toolServer struct {
	*httptest.Server
	requests atomic.Int64
	auth     atomic.Value
}

func serveTools(t *testing.T) *toolServer { return serveToolsB(t) }

// serveToolsB starts the server for a test or a benchmark.
func serveToolsB(t testing.TB) *toolServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "tools", Version: "1"}, nil)
	done := make(chan struct{})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds two numbers"}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return nil, addOut{Sum: in.A + in.B}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails"}, func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("the disk is full")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Takes its time"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		select {
		case <-ctx.Done():
		case <-done:
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late"}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	ts := &toolServer{}
	// Registered after the server's Close, so run before it: a slow call the client left ends.
	defer t.Cleanup(func() { close(done) })
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts.requests.Add(1)
		ts.auth.Store(r.Header.Get("Authorization"))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts
}

func hostOf(u string) string { return strings.TrimPrefix(u, "http://") }

func newClient(t *testing.T, logs *bytes.Buffer, hosts ...string) *mcpclient.Client {
	t.Helper()
	h, err := mcpclient.ParseHosts(hosts)
	if err != nil {
		t.Fatal(err)
	}
	return mcpclient.New(h, mcpclient.WithLogger(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
}

const token = "Bearer sk-secret-token-1234"

// Listing and calling an allowed server: the tools with their schemas, a result, a tool's failure as a result, and
// a slow tool cut off by the caller's deadline; the token is sent and never logged.
func TestListAndCall(t *testing.T) {
	srv := serveTools(t)
	var logs bytes.Buffer
	c := newClient(t, &logs, hostOf(srv.URL))
	ctx := context.Background()
	server := mcpclient.Server{URL: srv.URL, Headers: map[string]string{"Authorization": token}}
	tools, err := c.ListTools(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]mcpclient.Tool{}
	for _, tool := range tools {
		byName[tool.Name] = tool
	}
	if len(tools) != 3 || !strings.Contains(string(byName["add"].InputSchema), `"required":["a","b"]`) || byName["add"].Description != "Adds two numbers" {
		t.Fatalf("tools: %+v", tools)
	}
	if got, _ := srv.auth.Load().(string); got != token {
		t.Errorf("the server got Authorization %q", got)
	}

	res, err := c.CallTool(ctx, server, "add", json.RawMessage(`{"a":2,"b":3}`))
	if err != nil || res.IsError || !strings.Contains(res.Output, `"sum":5`) {
		t.Fatalf("add: %+v %v", res, err)
	}
	res, err = c.CallTool(ctx, server, "fail", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Output, "the disk is full") {
		t.Fatalf("fail: %+v %v", res, err)
	}
	res, err = c.CallTool(ctx, server, "add", json.RawMessage(`{"a":"two"}`))
	if err != nil || !res.IsError {
		t.Fatalf("add with bad arguments: %+v %v", res, err)
	}
	if _, err := c.CallTool(ctx, server, "add", json.RawMessage(`[1]`)); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("arguments that are not an object: %v", err)
	}

	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err = c.CallTool(short, server, "slow", nil)
	if errs.CodeOf(err) != errs.DeadlineExpired || !strings.Contains(err.Error(), "in time") {
		t.Fatalf("slow: %v (%s), want a timeout", err, errs.CodeOf(err))
	}
	if strings.Contains(logs.String(), "sk-secret") {
		t.Errorf("the token is in the logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "mcp exchange") {
		t.Errorf("no exchange logged:\n%s", logs.String())
	}
}

// Egress is closed: an unlisted host, another scheme, a redirect off the list, a listed link-local or metadata
// address, a name that resolves to a listed address without being listed; each refused, and the servers that are
// not allowed get no request.
func TestRefused(t *testing.T) {
	srv := serveTools(t)
	var logs bytes.Buffer
	ctx := context.Background()
	none := newClient(t, &logs)
	if _, err := none.ListTools(ctx, mcpclient.Server{URL: srv.URL}); errs.CodeOf(err) != errs.Invalid ||
		!strings.Contains(err.Error(), "--mcp-hosts") || errs.As(err).Field != "server_url" {
		t.Fatalf("no host allowed: %v", err)
	}
	other := serveTools(t)
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirect.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	// Link-local and other refused addresses are the dialer's own test (internal/apicall); here the unspecified address
	// at the test server's port shows the client dials through it, and reaches only loopback if it did not.
	c := newClient(t, &logs, hostOf(srv.URL), hostOf(redirect.URL), "0.0.0.0")
	for u, want := range map[string]string{
		other.URL:                           "not among the hosts",
		"file:///etc/passwd":                "http:// or https://",
		"ftp://" + hostOf(srv.URL):          "http:// or https://",
		"http://user:pw@" + hostOf(srv.URL): "without credentials",
		"http://localhost" + port:           "not among the hosts", // resolves to the listed 127.0.0.1, but is not listed
		redirect.URL:                        "not an allowed host",
		"http://0.0.0.0" + port:             "unspecified",
	} {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		_, err := c.ListTools(cctx, mcpclient.Server{URL: u})
		cancel()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", u, err, want)
		}
	}
	if n := other.requests.Load(); n != 0 {
		t.Errorf("a server that is not allowed got %d requests", n)
	}
	if n := srv.requests.Load(); n != 0 {
		t.Errorf("refused URLs reached the listed server %d times", n)
	}
}

// A server that is down, or that fails, is an error at once, with no token in it.
func TestServerFailures(t *testing.T) {
	down := serveTools(t)
	down.Close()
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom; you sent "+r.Header.Get("Authorization"), http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	var logs bytes.Buffer
	c := newClient(t, &logs, hostOf(down.URL), hostOf(broken.URL))
	for _, u := range []string{down.URL, broken.URL} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := c.CallTool(ctx, mcpclient.Server{URL: u, Headers: map[string]string{"Authorization": token}}, "add", nil)
		cancel()
		if errs.CodeOf(err) != errs.Unavailable {
			t.Errorf("%s: %v (%s), want unavailable", u, err, errs.CodeOf(err))
		}
		if err != nil && strings.Contains(err.Error(), "sk-secret") {
			t.Errorf("%s: the token is in the error: %v", u, err)
		}
		t.Logf("%s: %v", u, err)
	}
	// A server that answers with a JSON-RPC error quoting what it was sent: the SDK puts that message in its error,
	// and the token must not come out of it.
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		msg, _ := json.Marshal("you sent " + r.Header.Get("Authorization"))
		_, _ = fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":%s}}`, msg)
	}))
	t.Cleanup(echo.Close)
	c = newClient(t, &logs, hostOf(echo.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := c.CallTool(ctx, mcpclient.Server{URL: echo.URL, Headers: map[string]string{"Authorization": token}}, "add", nil)
	if err == nil || strings.Contains(err.Error(), "sk-secret") {
		t.Errorf("a server quoting the token: %v", err)
	}
	if strings.Contains(logs.String(), "sk-secret") {
		t.Errorf("the token is in the logs")
	}
}
