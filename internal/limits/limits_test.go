package limits_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/httpapi"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

type clock struct{ ns atomic.Int64 }

func newClock(t time.Time) *clock {
	c := &clock{}
	c.ns.Store(t.UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

var system = auth.Principal{AccountID: commands.AdminAccountID}

// queryFace is a face whose one route is a user query: it counts it, as the Fixie and Assistants faces do.
type queryFace struct{ lim *limits.Limits }

func (f queryFace) Prefix() string { return "/q" }
func (f queryFace) Routes(r chi.Router) {
	r.Post("/", func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.From(r.Context())
		if err := f.lim.CountQuery(r.Context(), p); err != nil {
			f.WriteError(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"answer": "42"})
	})
}
func (f queryFace) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	httpapi.WriteError(slog.New(slog.DiscardHandler), w, r, err)
}

func TestDailyQuotaAnswers429UntilMidnightUTCThenResets(t *testing.T) {
	t.Parallel()
	clk := newClock(time.Date(2026, 3, 1, 23, 59, 30, 0, time.UTC))
	n := platformtest.Start(t, platformtest.WithClock(clk.Now))
	ctx := context.Background()
	k := n.CreateAccount(t, commands.NewAccount{Name: "quota", DailyQueryLimit: 3})
	// A real HTTP server with the platform's authenticator and limiter in front of a face that counts queries.
	srv := httptest.NewServer(httpapi.New(httpapi.Config{Auth: n.Auth, Limiter: n.Limits, Faces: []httpapi.Face{queryFace{n.Limits}},
		Ready: func(context.Context) error { return nil }}))
	t.Cleanup(srv.Close)
	ask := func() *http.Response {
		req, _ := http.NewRequest("POST", srv.URL+"/q/", nil)
		req.Header.Set("Authorization", "Bearer "+k.Key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for i := range 3 {
		if resp := ask(); resp.StatusCode != 200 {
			t.Fatalf("query %d within the quota: %d", i+1, resp.StatusCode)
		}
	}
	resp := ask()
	var body httpapi.ErrorBody
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "30" || body.Error.Code != "rate_limited" ||
		body.Error.Message != "daily query limit of 3 reached; it resets at 00:00 UTC" {
		t.Fatalf("the 4th query: %d Retry-After %q %+v; want 429, 30 (seconds to midnight UTC) and the limit named",
			resp.StatusCode, resp.Header.Get("Retry-After"), body.Error)
	}
	if limit, used, err := n.Limits.DailyUsage(ctx, k.AccountID); err != nil || limit != 3 || used != 3 {
		t.Fatalf("usage at the end of the day: %d of %d (%v)", used, limit, err)
	}

	clk.Advance(31 * time.Second) // 00:00:01 the next day
	if limit, used, _ := n.Limits.DailyUsage(ctx, k.AccountID); limit != 3 || used != 0 {
		t.Fatalf("usage at the start of the next day: %d of %d, want 0 of 3", used, limit)
	}
	if resp := ask(); resp.StatusCode != 200 {
		t.Fatalf("the first query of the next day: %d", resp.StatusCode)
	}

	// The default quota, and an admin raising one account's.
	other, _ := n.NewAccount(t, "default-quota")
	if limit, used, _ := n.Limits.DailyUsage(ctx, other.AccountID); limit != commands.DefaultDailyQueryLimit || used != 0 {
		t.Fatalf("a fresh account's quota: %d of %d, want 0 of %d", used, limit, commands.DefaultDailyQueryLimit)
	}
	n.SetLimits(t, k.AccountID, 5, 0)
	if limit, used, _ := n.Limits.DailyUsage(ctx, k.AccountID); limit != 5 || used != 1 {
		t.Fatalf("after raising the quota to 5: %d of %d", used, limit)
	}
}

func TestQuotaIsExactAcrossNodesAndRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clk := newClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	n := platformtest.Start(t, platformtest.WithDataDir(dir), platformtest.WithClock(clk.Now))
	ctx := context.Background()
	k := n.CreateAccount(t, commands.NewAccount{Name: "busy", DailyQueryLimit: 40})
	p := auth.Principal{AccountID: k.AccountID, KeyID: k.KeyID}
	// Three nodes' worth of Limits (each with its own memory of the counters) count against one bucket at once.
	nodes := []*limits.Limits{n.Limits}
	for range 2 {
		l, err := limits.Open(ctx, limits.Config{JS: n.JS, Names: n.Layout.Names, Accounts: projections.AccountLimits{Views: n.Views}, Now: clk.Now})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, l)
	}
	var granted, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 12 {
		wg.Go(func() {
			for range 6 {
				err := nodes[i%len(nodes)].CountQuery(ctx, p)
				switch errs.CodeOf(err) {
				case errs.RateLimited:
					refused.Add(1)
				case errs.Internal:
					if err != nil {
						t.Errorf("count: %v", err)
						return
					}
					granted.Add(1)
				default:
					t.Errorf("count: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if granted.Load() != 40 || refused.Load() != 72-40 {
		t.Fatalf("72 queries against a quota of 40 on 3 nodes: %d granted, %d refused", granted.Load(), refused.Load())
	}

	n.Crash()
	again := platformtest.Start(t, platformtest.WithDataDir(dir), platformtest.WithClock(clk.Now))
	if limit, used, err := again.Limits.DailyUsage(ctx, k.AccountID); err != nil || used != 40 || limit != 40 {
		t.Fatalf("after a crash and restart: %d of %d used (%v), want 40 of 40", used, limit, err)
	}
	if err := again.Limits.CountQuery(ctx, p); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("a query over the quota after a restart: %v", err)
	}
}

func TestRequestRateIsLimitedPerKeyAndPerMinute(t *testing.T) {
	t.Parallel()
	clk := newClock(time.Date(2026, 3, 2, 9, 0, 15, 0, time.UTC))
	n := platformtest.Start(t, platformtest.WithClock(clk.Now))
	k := n.CreateAccount(t, commands.NewAccount{Name: "chatty"})
	n.SetLimits(t, k.AccountID, 0, 5)
	for i := range 5 {
		if r := n.Do(t, k.Key, "GET", "/admin/whoami", nil); r.Status != 200 {
			t.Fatalf("request %d of 5: %d %s", i+1, r.Status, r.Body)
		}
	}
	r := n.Do(t, k.Key, "GET", "/admin/whoami", nil)
	var body httpapi.ErrorBody
	r.JSON(t, &body)
	// The refusal says what the limit is and how an admin raises it for this account.
	if r.Status != 429 || r.Header.Get("Retry-After") != "45" ||
		!strings.HasPrefix(body.Error.Message, "rate limit of 5 requests per minute per key reached; retry after the minute ends") ||
		!strings.Contains(body.Error.Message, "contrail accounts limits "+k.AccountID+" --rate N") ||
		!strings.Contains(body.Error.Message, "POST /admin/accounts/"+k.AccountID+"/limits") {
		t.Fatalf("the 6th request in a minute: %d Retry-After %q %s", r.Status, r.Header.Get("Retry-After"), r.Body)
	}
	// Another key of the same account has its own count.
	second := n.IssueKey(t, system, k.AccountID, "second")
	if r := n.Do(t, second.Key, "GET", "/admin/whoami", nil); r.Status != 200 {
		t.Fatalf("another key of the account: %d", r.Status)
	}
	// The next minute starts a new count.
	clk.Advance(45 * time.Second)
	if r := n.Do(t, k.Key, "GET", "/admin/whoami", nil); r.Status != 200 {
		t.Fatalf("the first request of the next minute: %d %s", r.Status, r.Body)
	}
	// An account without a limit of its own gets the default.
	_, key := n.NewAccount(t, "default-rate")
	for i := range 10 {
		if r := n.Do(t, key, "GET", "/admin/whoami", nil); r.Status != 200 {
			t.Fatalf("request %d under the default rate (%d a minute): %d", i+1, commands.DefaultRequestsPerMinute, r.Status)
		}
	}
}

// The limits that apply to an account are its own where it sets them and the node's configured defaults elsewhere;
// the read model's 0 ("the default") never shows as a limit of 0.
func TestAnAccountsLimitsAreItsOwnOrTheConfiguredDefaults(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) { c.DailyQueries, c.RequestsPerMinute = 70, 3 }))
	ctx := context.Background()
	p, key := n.NewAccount(t, "script")
	u, err := n.Limits.Of(ctx, p.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	want := limits.Usage{AccountID: p.AccountID, DailyQueryLimit: 70, RequestsPerMinute: 3}
	if u != want {
		t.Fatalf("a new account's limits: %+v, want %+v", u, want)
	}
	for i := range 3 {
		if r := n.Do(t, key, "GET", "/admin/whoami", nil); r.Status != 200 {
			t.Fatalf("request %d of the configured 3: %d", i+1, r.Status)
		}
	}
	if r := n.Do(t, key, "GET", "/admin/whoami", nil); r.Status != 429 || !strings.Contains(string(r.Body), "rate limit of 3 ") {
		t.Fatalf("the 4th request with a default rate of 3: %d %s", r.Status, r.Body)
	}
	n.SetLimits(t, p.AccountID, 0, 1000)
	u, _ = n.Limits.Of(ctx, p.AccountID)
	want = limits.Usage{AccountID: p.AccountID, DailyQueryLimit: 70, RequestsPerMinute: 1000, OwnRequestsPerMinute: true}
	if u != want {
		t.Fatalf("after raising the rate: %+v, want %+v", u, want)
	}
	if _, err := n.Limits.Of(ctx, "acct_nobody"); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("limits of an unknown account: %v", err)
	}
}

func TestAgentsAreCountedPerUserAndAgent(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ctx := context.Background()
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1}
	for _, b := range limits.Buckets() {
		if err := natsx.EnsureBucket(ctx, srv.JS, layout, b); err != nil {
			t.Fatal(err)
		}
	}
	l, err := limits.Open(ctx, limits.Config{JS: srv.JS, Names: names, RequestsPerMinute: 2})
	if err != nil {
		t.Fatal(err)
	}
	weird := auth.Principal{AccountID: "acct_1", AgentID: "user/agent with spaces"}
	other := auth.Principal{AccountID: "acct_1", AgentID: "agt_2"}
	for i := range 2 {
		if err := l.AllowRequest(ctx, weird); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if err := l.AllowRequest(ctx, weird); errs.CodeOf(err) != errs.RateLimited {
		t.Fatalf("third request of an agent with a limit of 2: %v", err)
	}
	if err := l.AllowRequest(ctx, other); err != nil {
		t.Fatalf("another agent of the same user: %v", err)
	}
	if err := l.AllowRequest(ctx, auth.Principal{AccountID: "acct_1"}); err != nil {
		t.Fatalf("the platform itself is never limited: %v", err)
	}
}

// BenchmarkAllowRequest measures the limiter's cost per request: in the common case one KV round trip.
func BenchmarkAllowRequest(b *testing.B) {
	srv := natstest.Start(b)
	ctx := context.Background()
	names, _ := natsx.NewNames("")
	layout := natsx.Layout{Names: names, Replicas: 1}
	for _, bs := range limits.Buckets() {
		if err := natsx.EnsureBucket(ctx, srv.JS, layout, bs); err != nil {
			b.Fatal(err)
		}
	}
	l, err := limits.Open(ctx, limits.Config{JS: srv.JS, Names: names})
	if err != nil {
		b.Fatal(err)
	}
	for _, keys := range []int{1, 64} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) {
			ps := make([]auth.Principal, keys)
			for i := range ps {
				ps[i] = auth.Principal{AccountID: "acct_bench", KeyID: "key_" + strconv.Itoa(i), RequestsPerMinute: 1 << 30}
			}
			i := 0
			for b.Loop() {
				if err := l.AllowRequest(ctx, ps[i%keys]); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	b.Run("parallel-one-key", func(b *testing.B) {
		p := auth.Principal{AccountID: "acct_bench", KeyID: "key_shared", RequestsPerMinute: 1 << 30}
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := l.AllowRequest(ctx, p); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("kv-get-for-scale", func(b *testing.B) {
		kv, _ := srv.JS.KeyValue(ctx, names.Bucket(limits.RateBucket))
		_, _ = kv.Put(ctx, "probe", []byte("1"))
		for b.Loop() {
			if _, err := kv.Get(ctx, "probe"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
