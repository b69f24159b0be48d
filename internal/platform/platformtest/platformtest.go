// Package platformtest starts a real Contrail node for tests: embedded NATS in a temp dir, every projection,
// handler and face, behind a real HTTP server on loopback. Nothing in it fakes NATS or HTTP.
package platformtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/embedding"
	"github.com/contrailhq/contrail/internal/logtest"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/projections"
)

// Node is a running platform and its HTTP server.
type Node struct {
	*platform.Platform
	URL      string
	AdminKey string
	Server   *httptest.Server
	Logs     *logtest.Buffer
}

// Option changes the config of a test node.
type Option func(*config.Config, *platform.Options)

// WithConfig edits the node's config (model provider URLs, run timeouts...).
func WithConfig(f func(*config.Config)) Option {
	return func(c *config.Config, _ *platform.Options) { f(c) }
}

// WithClock injects the platform's clock.
func WithClock(now func() time.Time) Option {
	return func(_ *config.Config, o *platform.Options) { o.Now = now }
}

// WithHandlers runs extra handlers on the node.
func WithHandlers(hs ...runtime.Handler) Option {
	return func(_ *config.Config, o *platform.Options) { o.ExtraHandlers = append(o.ExtraHandlers, hs...) }
}

// WithEmbedder wraps the node's embedder.
func WithEmbedder(wrap func(embedding.Embedder) embedding.Embedder) Option {
	return func(_ *config.Config, o *platform.Options) { o.WrapEmbedder = wrap }
}

// WithDataDir starts the node on an existing data dir (to restart after a crash).
func WithDataDir(dir string) Option {
	return func(c *config.Config, _ *platform.Options) { c.DataDir = dir }
}

// Start runs a node for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Node {
	t.Helper()
	cfg := config.Defaults()
	cfg.DataDir = t.TempDir()
	cfg.NATSListen = "off"
	cfg.LeaseTTL = time.Second
	cfg.ShutdownTimeout = 5 * time.Second
	// A crashed node's deliveries reach the next node within seconds (heartbeats keep long handlers alive).
	cfg.HandlerAckWait = 3 * time.Second
	logs := &logtest.Buffer{}
	po := platform.Options{Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		RetryInterval: 10 * time.Millisecond}
	for _, o := range opts {
		o(&cfg, &po)
	}
	// The server must exist before the platform so that the platform knows its own URL (agent token audiences,
	// signed URLs).
	srv := httptest.NewUnstartedServer(nil)
	cfg.Addr = srv.Listener.Addr().String()
	if cfg.PublicURL == "" {
		cfg.PublicURL = "http://" + cfg.Addr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := platform.Start(ctx, cfg, po)
	if err != nil {
		t.Fatalf("start platform: %v\n%s", err, logs)
	}
	srv.Config.Handler = p.Handler()
	srv.Start()
	n := &Node{Platform: p, URL: srv.URL, Server: srv, Logs: logs}
	t.Cleanup(func() { n.Stop() })
	key, err := os.ReadFile(filepath.Join(cfg.DataDir, "admin.key"))
	if err == nil {
		n.AdminKey = strings.TrimSpace(string(key))
	}
	return n
}

// Stop shuts the node down cleanly (safe to call twice).
func (n *Node) Stop() {
	n.Server.CloseClientConnections()
	n.Server.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	n.Platform.Stop(ctx)
}

// Crash drops the node as a crash would: no clean stop of anything.
func (n *Node) Crash() {
	n.Server.CloseClientConnections()
	n.Server.Close()
	n.Platform.Kill()
}

// NewAccount creates an account and returns its principal and API key.
func (n *Node) NewAccount(t testing.TB, name string) (auth.Principal, string) {
	t.Helper()
	k := n.CreateAccount(t, commands.NewAccount{Name: name})
	return auth.Principal{AccountID: k.AccountID, KeyID: k.KeyID, Username: name}, k.Key
}

// CreateAccount creates an account as the admin and returns its first key once the key works.
func (n *Node) CreateAccount(t testing.TB, in commands.NewAccount) commands.IssuedKey {
	t.Helper()
	k, err := n.Commands.Accounts.Create(context.Background(), auth.Principal{AccountID: commands.AdminAccountID}, in)
	n.Shown(t, "create account "+in.Name, k.Appended, err, projections.Accounts{})
	return k
}

// IssueKey issues another key of an account, as actor, and returns it once it works.
func (n *Node) IssueKey(t testing.TB, actor auth.Principal, accountID, name string) commands.IssuedKey {
	t.Helper()
	k, err := n.Commands.Accounts.IssueKey(context.Background(), actor, accountID, name, "")
	n.Shown(t, "issue key "+name, k.Appended, err, projections.Accounts{})
	return k
}

// SetLimits sets an account's usage limits as the admin, and returns once they apply.
func (n *Node) SetLimits(t testing.TB, accountID string, dailyQueries, perMinute int) {
	t.Helper()
	res, err := n.Commands.Accounts.SetLimits(context.Background(), auth.Principal{AccountID: commands.AdminAccountID}, accountID, dailyQueries, perMinute)
	n.Shown(t, "set limits of "+accountID, res, err, projections.Accounts{})
}

// UpdateAgent changes an agent as actor, and returns once the registry and the router see the change.
func (n *Node) UpdateAgent(t testing.TB, actor auth.Principal, in commands.AgentInput) {
	t.Helper()
	c, err := n.Commands.Agents.Update(context.Background(), actor, in)
	n.Shown(t, "update agent "+in.Handle, c.Appended, err, projections.Agents{})
}

// DeleteAgent deletes an agent as actor, and returns once the registry and the router no longer see it.
func (n *Node) DeleteAgent(t testing.TB, actor auth.Principal, handle string) {
	t.Helper()
	c, err := n.Commands.Agents.Delete(context.Background(), actor, handle)
	n.Shown(t, "delete agent "+handle, c.Appended, err, projections.Agents{})
}

// Shown fails the test if a command (what) failed, or if the read models did not come to show what it appended.
func (n *Node) Shown(t testing.TB, what string, res eventstore.Appended, err error, models ...projections.Projection) {
	t.Helper()
	err = n.Views.ShowsWrite(context.Background(), res, err, models...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Response is an HTTP answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body.
func (r Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Do sends a request with a bearer key (none when key is "") and a JSON body (when body is not nil; a []byte or
// string is sent as is).
func (n *Node) Do(t testing.TB, key, method, path string, body any) Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, n.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// A deadline, so that a request the platform never answers (a stream a bug left open) fails the test instead
	// of hanging it until go test's timeout.
	resp, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Timers counts the durable timers set and not fired yet (the schedules on the timers stream).
func (n *Node) Timers(t testing.TB) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := n.JS.Stream(ctx, n.Layout.Names.TimersStream())
	if err != nil {
		t.Fatalf("open the timers stream: %v", err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(n.Layout.Names.TimerScheduleSubject("*", "*")))
	if err != nil {
		t.Fatalf("read the timers stream: %v", err)
	}
	return len(info.State.Subjects)
}

// Handled counts the events a handler of this node has finished handling (its attempts that returned).
func (n *Node) Handled(handler string) float64 {
	mfs, _ := n.Metrics.Registry.Gather()
	for _, mf := range mfs {
		if mf.GetName() != "contrail_handler_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetValue() == handler {
					return float64(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
}
