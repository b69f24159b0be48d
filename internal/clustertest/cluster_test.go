package clustertest_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"

	"github.com/contrailhq/contrail/internal/clustertest"
)

// plan is how much a run of TestCluster does.
type plan struct {
	sessionClients, runClients int
	// warm is the load done before the first fault (for at least warmFor: items 1 and 2 of issue 16 need no
	// fault); after, the load done after the last.
	warmQueries, warmRuns, afterQueries, afterRuns int
	warmFor                                        time.Duration
	// faults run in this order, reps times.
	faults []string
	reps   int
	// leaderDown is how long the killed EVENTS leader stays down: long enough for a projection that stopped to
	// show (stillLimit), as it stood still until the server came back.
	leaderDown time.Duration
	// pickupWait bounds the wait for a dead node's work to be picked up by the other.
	pickupWait time.Duration
	// between is the load run after each fault's victim is back, before the next fault.
	between time.Duration
	// throughput, when set, is how long queries/s and runs/s are measured on 2 nodes, then on 1, with burstClients
	// clients of each kind.
	throughput   time.Duration
	burstClients int
	// afterWait bounds the wait for the load after the last fault; settle, the wait for every query and run in
	// the log to end after the load stopped (a lost reply never comes: these bound what it costs).
	afterWait, settle time.Duration
}

// shortPlan is what `make test` runs: a few dozen queries and runs and one fault, in about a minute.
func shortPlan() plan {
	return plan{sessionClients: 3, runClients: 3, warmQueries: 12, warmRuns: 6, warmFor: 10 * time.Second,
		afterQueries: 12, afterRuns: 6,
		faults: []string{faultLeaderKill}, reps: 1, leaderDown: 15 * time.Second, between: 3 * time.Second,
		afterWait: 20 * time.Second, settle: 20 * time.Second}
}

// fullPlan is what `make test-cluster` runs (CONTRAIL_CLUSTER_FULL=1): each fault five times, and throughput.
func fullPlan() plan {
	return plan{sessionClients: 3, runClients: 3, warmQueries: 30, warmRuns: 15, warmFor: 30 * time.Second,
		afterQueries: 30, afterRuns: 15,
		faults: []string{faultLeaderKill, faultSweeperKill, faultNATSTerm}, reps: 5, leaderDown: 15 * time.Second,
		pickupWait: 90 * time.Second, between: 5 * time.Second, throughput: 20 * time.Second, burstClients: 8,
		afterWait: 2 * time.Minute, settle: time.Minute}
}

// stillLimit is how long a projection may keep its sequence while events for it wait before the test calls it
// stopped. Healthy, it applies within milliseconds. After a kill -9 of the server leading EVENTS it cannot read on
// until EVENTS has a new leader: the election alone takes up to about 10 s with nats-server's timers (the write
// stall this test measures, 6-11 s), and the events appended just before the kill wait through it. The defect it
// catches (a reader parked for good) lasted minutes.
const stillLimit = 20 * time.Second

// TestCluster runs the topology of docker-compose.yml (three nats-servers, two Contrail nodes started at the same
// moment) under load from concurrent clients, each alternating between the nodes, through the faults of issue 16,
// and checks that nothing acknowledged was lost or done twice, that creates are readable at once on the other node,
// that no projection stood still, and what each fault cost the writes. `make test` runs the short plan;
// CONTRAIL_CLUSTER_FULL=1 (`make test-cluster`) the full one, which prints the figures.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five processes under load for a minute; skipped in -short mode")
	}
	p := shortPlan()
	if os.Getenv("CONTRAIL_CLUSTER_FULL") != "" {
		p = fullPlan()
	}
	ctx := context.Background()
	bins, err := clustertest.Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := clustertest.Options{Binaries: bins}
	if d := os.Getenv("CONTRAIL_TEST_MODELS_DIR"); d != "" {
		if _, err := os.Stat(filepath.Join(d, "use-lite")); err == nil {
			opts.ModelsDir = d
		}
	}
	c := clustertest.Start(t, opts)
	t.Logf("3 nats-servers %s, 2 nodes started together, ready after %s (%d exited first and were started again)",
		bins.NATSVersion, c.Ready.Sub(c.Started).Round(10*time.Millisecond), len(c.StartupFailures))

	key := newAccount(t, c)
	l := newLoad(c, key)
	assistants := l.assistants(t, p.runClients)
	watch := watchProjections(c)
	// A scenario that fails half-way leaves no client running against stopped processes.
	t.Cleanup(func() {
		l.stopAndWait()
		watch.stop()
	})
	s := &scenario{t: t, c: c, l: l, loadStart: time.Now(), lg: newLogged()}
	l.start(p.sessionClients, assistants)
	l.waitFor(p.warmQueries, p.warmRuns, p.warmFor, 2*time.Minute)
	for rep := 0; rep < p.reps; rep++ {
		for _, kind := range p.faults {
			switch kind {
			case faultLeaderKill:
				s.killEventsLeader(p.leaderDown)
			case faultSweeperKill:
				s.killSweeperNode(p.pickupWait)
			case faultNATSTerm:
				s.termNATS()
			}
			s.pause(p.between)
		}
	}
	l.waitFor(p.afterQueries, p.afterRuns, p.between, p.afterWait)
	l.stopAndWait()
	s.finish()
	loadTime := time.Since(s.loadStart)
	var throughput string
	if p.throughput > 0 {
		throughput = s.throughput(p.throughput, p.burstClients, assistants)
	}
	watch.stop()
	lg := s.lg
	if err := settle(c, lg, p.settle); err != nil {
		t.Fatalf("read the log: %v", err)
	}
	queries, runs := l.counts()
	t.Logf("load: %d clients, %d acknowledged queries (%d in the log), %d runs seen ending (%d in the log), %d requests in %s",
		p.sessionClients+p.runClients, queries, len(lg.queries), runs, len(lg.runs), len(l.snapshot()), loadTime.Round(time.Second))
	t.Logf("figures per fault:\n%s%s", s.report(lg), throughput)
	t.Logf("longest a projection stood still with events pending: %s", watch.longestStill())

	t.Run("nodes started together start cleanly", func(t *testing.T) {
		var problems []string
		for _, f := range c.StartupFailures {
			problems = append(problems, fmt.Sprintf("%s exited (%s) before it was ready:\n%s", f.Node, f.Exit, f.Log))
		}
		for _, n := range c.Nodes {
			// Every node asks for the same settings: a start that updates a stream compares them wrongly.
			if k := n.LogContains(`"updated stream settings"`); k > 0 {
				problems = append(problems, fmt.Sprintf("%s updated stream settings %d times though no node asked for different ones", n.Name, k))
			}
		}
		fail(t, problems)
	})
	t.Run("every acknowledged query is answered exactly once", func(t *testing.T) {
		lost, wrong := queryProblems(l, lg)
		fail(t, wrong)
		fail(t, lost)
	})
	t.Run("sessions show one reply per query", func(t *testing.T) {
		unanswered, wrong := sessionProblems(c, l)
		fail(t, wrong)
		fail(t, unanswered)
	})
	t.Run("every run ends exactly once", func(t *testing.T) {
		stuck, wrong := runProblems(l, lg)
		fail(t, wrong)
		fail(t, stuck)
	})
	t.Run("nothing just made answers not found on either node", func(t *testing.T) {
		l.mu.Lock()
		defer l.mu.Unlock()
		fail(t, l.notFound)
	})
	t.Run("no projection stands still while the log moves", func(t *testing.T) {
		fail(t, watch.standingStill(stillLimit))
	})
	t.Run("writes answer no server error through failovers", func(t *testing.T) {
		fail(t, s.serverFaults())
	})
	t.Run("a write that went in does not answer an error", func(t *testing.T) {
		fail(t, committedButFailed(l.snapshot(), lg, s.faults, c.Nodes))
	})
	t.Run("every server holds the same log", func(t *testing.T) {
		fail(t, sameLog(c))
	})
}

// fail reports each problem.
func fail(t *testing.T, problems []string) {
	t.Helper()
	if len(problems) == 0 {
		return
	}
	const most = 40
	shown := problems
	if len(shown) > most {
		shown = shown[:most]
	}
	t.Errorf("%d problems:\n  %s", len(problems), strings.Join(shown, "\n  "))
}

// newAccount creates an account through one node with an admin key, lifts its limits through the other (the load
// makes thousands of requests a minute), and checks that its key works on both.
func newAccount(t *testing.T, c *clustertest.Cluster) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var k struct {
		AccountID string `json:"account_id"`
		Key       string `json:"key"`
	}
	if err := c.Nodes[0].Do(ctx, c.AdminKey, http.MethodPost, "/admin/accounts", map[string]any{"name": "load"}, &k); err != nil {
		t.Fatalf("create an account on %s: %v", c.Nodes[0].Name, err)
	}
	limits := map[string]any{"daily_query_limit": 1_000_000, "requests_per_minute": 1_000_000}
	if err := c.Nodes[1].Do(ctx, c.AdminKey, http.MethodPost, "/admin/accounts/"+k.AccountID+"/limits", limits, nil); err != nil {
		t.Fatalf("set the account's limits on %s: %v", c.Nodes[1].Name, err)
	}
	for _, n := range c.Nodes {
		var who struct {
			AccountID string `json:"account_id"`
		}
		if err := n.Do(ctx, k.Key, http.MethodGet, "/admin/whoami", nil, &who); err != nil || who.AccountID != k.AccountID {
			t.Fatalf("the new key on %s: %v (%+v)", n.Name, err, who)
		}
	}
	return k.Key
}

// assistants creates one assistant per run client, each on one node and read at once on the other.
func (l *load) assistants(t *testing.T, n int) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ids []string
	for i := 0; i < n; i++ {
		a, b := i%2, (i+1)%2
		asst, err := l.sdk[a].Beta.Assistants.New(ctx, openai.BetaAssistantNewParams{Model: "gpt-4o-mini",
			Name: openai.String(fmt.Sprintf("helper %d", i)), Instructions: openai.String("You help.")})
		if err != nil {
			t.Fatalf("create an assistant on %s: %v", l.c.Nodes[a].Name, err)
		}
		if _, err := l.sdk[b].Beta.Assistants.Get(ctx, asst.ID); err != nil {
			l.notFoundAfterCreate(fmt.Sprintf("assistant %s created on %s, read on %s: %v", asst.ID, l.c.Nodes[a].Name, l.c.Nodes[b].Name, err))
		}
		ids = append(ids, asst.ID)
	}
	return ids
}

// serverFaults lists the writes that answered a server error, with the fault whose window they fell in.
func (s *scenario) serverFaults() []string {
	var out []string
	for _, o := range s.l.snapshot() {
		if !o.write() || !o.serverFault() {
			continue
		}
		during := "with no fault"
		for _, f := range s.faults {
			if !o.end.Before(f.at) && o.end.Before(f.end) {
				during = fmt.Sprintf("%s after %s (%s)", o.end.Sub(f.at).Round(100*time.Millisecond), f.kind, f.victim)
			}
		}
		out = append(out, fmt.Sprintf("%s on %s %s: %s", o.kind, s.c.Nodes[o.node].Name, during, o.err))
	}
	if len(out) > 0 {
		// What the nodes said of the requests they failed: the cause of each 5xx.
		for _, n := range s.c.Nodes {
			for _, line := range append(n.LogLines(`"msg":"request failed"`, 20), n.LogLines(`"msg":"graphql resolver failed"`, 20)...) {
				out = append(out, n.Name+" logged: "+line)
			}
		}
	}
	return out
}

// sameLog checks that every server's copy of EVENTS ends up the same (followers catch up within seconds).
func sameLog(c *clustertest.Cluster) []string {
	deadline := time.Now().Add(30 * time.Second)
	for {
		states, err := c.StreamStates(context.Background(), c.Names.EventsStream())
		same := err == nil && len(states) == len(c.NATS)
		for _, st := range states {
			same = same && st == clustertest.StreamState{Server: st.Server, Messages: states[0].Messages, LastSeq: states[0].LastSeq}
		}
		if same {
			return nil
		}
		if time.Now().After(deadline) {
			return []string{fmt.Sprintf("EVENTS differs between the servers after 30 s: %+v (%v)", states, err)}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// throughput measures, from the log, the queries answered and the runs ended per second under a burst of clients
// with both nodes serving, then with one (the other stopped cleanly, every request sent to the first), then starts
// the second again.
func (s *scenario) throughput(window time.Duration, clients int, assistants []string) string {
	q2, r2 := s.burst(window, clients, assistants, -1)
	if _, err := s.c.Nodes[1].Stop(30 * time.Second); err != nil {
		s.t.Fatal(err)
	}
	q1, r1 := s.burst(window, clients, assistants, 0)
	if err := s.c.Nodes[1].Start(); err != nil {
		s.t.Fatal(err)
	}
	// A node that does not get ready is a finding, not the end of the run: the figures and checks still follow.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	started := time.Now()
	if err := s.c.Nodes[1].WaitReady(ctx); err != nil {
		s.t.Errorf("%s not ready %s after its restart: %v", s.c.Nodes[1].Name, time.Since(started).Round(time.Second), err)
	}
	return fmt.Sprintf("throughput over %s (%d session clients with wait: true, %d run clients polling every 100 ms):\n"+
		"  2 nodes: %.1f queries/s, %.1f runs/s\n  1 node:  %.1f queries/s, %.1f runs/s\n", window, clients, clients, q2, r2, q1, r1)
}

// burst runs a load of its own (clients of each kind, all sent to node `pin` when it is not -1) and counts in the
// log the replies and run ends of the window after a second of ramp-up.
func (s *scenario) burst(window time.Duration, clients int, assistants []string, pin int) (queries, runs float64) {
	b := newLoad(s.c, s.l.key)
	if pin >= 0 {
		b.lb.pin(pin)
	}
	perClient := make([]string, clients)
	for i := range perClient {
		perClient[i] = assistants[i%len(assistants)]
	}
	b.start(clients, perClient)
	time.Sleep(time.Second)
	from := time.Now()
	time.Sleep(window)
	to := time.Now()
	b.stopAndWait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.lg.update(ctx, s.c); err != nil {
		s.t.Fatalf("read the log: %v", err)
	}
	var q, r int
	for _, lq := range s.lg.queries {
		if at := lq.answeredAt(); at.After(from) && at.Before(to) {
			q++
		}
	}
	for _, lr := range s.lg.runs {
		if at := lr.endedAt(); at.After(from) && at.Before(to) {
			r++
		}
	}
	secs := to.Sub(from).Seconds()
	return float64(q) / secs, float64(r) / secs
}
