package clustertest_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/clustertest"
)

// The faults of issue 16.
const (
	faultLeaderKill  = "kill -9 of the NATS server leading EVENTS"
	faultSweeperKill = "kill -9 of the Contrail node holding the sweeper lease"
	faultNATSTerm    = "SIGTERM and restart of another NATS server"
)

// fault is one fault the scenario caused.
type fault struct {
	kind, victim string
	// at is when the signal was sent; restarted, when the victim was back (healthy or ready); end, when the next
	// fault (or the end of the load) began.
	at, restarted, end time.Time
	// leaseMoved is how long the sweeper lease took to reach another node (sweeper kills only).
	leaseMoved time.Duration
	// still is what the kill did to the read models (kills of the EVENTS leader only).
	still *standstill
}

// scenario drives faults into a running cluster under load.
type scenario struct {
	t      *testing.T
	c      *clustertest.Cluster
	l      *load
	faults []*fault
	// lastNATSVictim is the NATS server the last fault hit: the SIGTERM fault picks another.
	lastNATSVictim string
	loadStart      time.Time
	// lg is what the log holds, read as the scenario goes.
	lg *logged
}

func (s *scenario) begin(kind, victim string) *fault {
	now := time.Now()
	if n := len(s.faults); n > 0 && s.faults[n-1].end.IsZero() {
		s.faults[n-1].end = now
	}
	f := &fault{kind: kind, victim: victim, at: now}
	s.faults = append(s.faults, f)
	s.t.Logf("%s: %s at %s", kind, victim, now.Format(time.StampMilli))
	return f
}

// finish marks the end of the last fault's window (the load stopped).
func (s *scenario) finish() {
	if n := len(s.faults); n > 0 && s.faults[n-1].end.IsZero() {
		s.faults[n-1].end = time.Now()
	}
}

// killEventsLeader kills the server leading EVENTS, keeps it down for `down` (the cluster must carry on with two),
// then starts it again and waits until its JetStream is current.
func (s *scenario) killEventsLeader(down time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leader, err := s.c.EventsLeader(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	rw, err := watchResume(s.c)
	if err != nil {
		s.t.Fatal(err)
	}
	defer rw.stop()
	f := s.begin(faultLeaderKill, leader.Name)
	if err := leader.Kill(); err != nil {
		s.t.Fatal(err)
	}
	rw.killed(leader.Name)
	s.lastNATSVictim = leader.Name
	time.Sleep(down)
	s.restartNATS(ctx, leader, f)
	f.still = rw.wait()
	s.t.Logf("  %s", strings.TrimSpace(standstillReport([]*standstill{f.still})))
}

// termNATS sends SIGTERM to a server other than the last one a fault hit (and, if it can, not the EVENTS leader),
// waits for it to exit, and starts it again.
func (s *scenario) termNATS() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	leader, err := s.c.EventsLeader(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	var victim *clustertest.NATSServer
	for _, n := range s.c.NATS {
		if n.Name != s.lastNATSVictim && (victim == nil || victim == leader) {
			victim = n
		}
	}
	f := s.begin(faultNATSTerm, victim.Name)
	if clean, err := victim.Stop(30 * time.Second); err != nil || !clean {
		s.t.Errorf("%s did not stop within 30 s of SIGTERM (%v): killed", victim.Name, err)
	}
	s.lastNATSVictim = victim.Name
	s.restartNATS(ctx, victim, f)
}

func (s *scenario) restartNATS(ctx context.Context, srv *clustertest.NATSServer, f *fault) {
	if err := srv.Start(); err != nil {
		s.t.Fatal(err)
	}
	if err := srv.WaitHealthy(ctx, false); err != nil {
		s.t.Fatalf("%s after its restart: %v", srv.Name, err)
	}
	f.restarted = time.Now()
	s.t.Logf("  %s back (JetStream current) at %s", srv.Name, f.restarted.Format(time.StampMilli))
}

// killSweeperNode kills the node holding the sweeper lease, waits until another holds it and until every query and
// run outstanding at the kill has ended (at most maxWait), then starts the node again.
func (s *scenario) killSweeperNode(maxWait time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), maxWait+2*time.Minute)
	defer cancel()
	holder, err := s.c.SweeperHolder(ctx)
	if err != nil {
		s.t.Fatal(err)
	}
	f := s.begin(faultSweeperKill, holder.Name)
	if err := holder.Kill(); err != nil {
		s.t.Fatal(err)
	}
	for {
		n, err := s.c.SweeperHolder(ctx)
		if err != nil {
			s.t.Fatal(err)
		}
		if n != holder {
			f.leaseMoved = time.Since(f.at)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The dead node's deliveries come back to the other node after their ack wait.
	deadline := time.Now().Add(maxWait)
	for time.Now().Before(deadline) {
		if err := s.lg.update(ctx, s.c); err == nil && outstandingAt(s.lg, f.at, time.Now()) == 0 {
			break
		}
		time.Sleep(time.Second)
	}
	if err := holder.Start(); err != nil {
		s.t.Fatal(err)
	}
	if err := holder.WaitReady(ctx); err != nil {
		s.t.Fatalf("%s after its restart: %v", holder.Name, err)
	}
	f.restarted = time.Now()
	s.t.Logf("  %s back (ready) at %s", holder.Name, f.restarted.Format(time.StampMilli))
}

// recent is how far before a fault work counts as outstanding at it: a healthy query or run ends within a second,
// and one lost earlier (issue 16 item 1) would otherwise count at every later fault.
const recent = 30 * time.Second

// outstanding reports whether work that began at `began` was outstanding at the fault at t (began in the recent
// past and had not ended by t).
func outstanding(began, ended, t time.Time) bool {
	return began.Before(t) && t.Sub(began) < recent && (ended.IsZero() || ended.After(t))
}

// outstandingAt counts the queries and runs outstanding at t that had not ended by `by`.
func outstandingAt(lg *logged, t, by time.Time) int {
	n := 0
	for _, q := range lg.queries {
		if at := q.answeredAt(); outstanding(q.posted, at, t) && (at.IsZero() || at.After(by)) {
			n++
		}
	}
	for _, r := range lg.runs {
		if at := r.endedAt(); outstanding(r.created, at, t) && (at.IsZero() || at.After(by)) {
			n++
		}
	}
	return n
}

// pause waits while the load runs, so that a fault's aftermath is in the figures before the next one.
func (s *scenario) pause(d time.Duration) { time.Sleep(d) }

// faultFigures is what one fault did to the load.
type faultFigures struct {
	stall        time.Duration
	stallOpen    bool // no write succeeded before the window closed: the stall is at least this long
	failedWrites int
	serverFaults int
	outcomes     map[string]int
	lostReplies  int
	dupReplies   int
	lostRuns     int
	dupRuns      int
	// pickupQueries and pickupRuns are the longest time, after the fault, that a query or run outstanding at the
	// fault (see outstanding) took to end, counting those that ended before the fault's window closed; outstanding
	// counts the queries and runs outstanding at the fault, unfinished those of them still not ended when the window
	// closed.
	pickupQueries, pickupRuns time.Duration
	outstanding, unfinished   int
}

func figuresOf(f *fault, ops []op, lg *logged) faultFigures {
	ff := faultFigures{outcomes: map[string]int{}}
	first := time.Time{}
	for _, o := range ops {
		if stallWrite(o.kind) && !o.failed() && !o.start.Before(f.at) && o.end.Before(f.end) && (first.IsZero() || o.end.Before(first)) {
			first = o.end
		}
		if o.write() && o.failed() && !o.end.Before(f.at) && o.end.Before(f.end) {
			ff.failedWrites++
			ff.outcomes[o.kind+" "+o.outcome()]++
			if o.serverFault() {
				ff.serverFaults++
			}
		}
	}
	if first.IsZero() {
		ff.stall, ff.stallOpen = f.end.Sub(f.at), true
	} else {
		ff.stall = first.Sub(f.at)
	}
	for _, q := range lg.queries {
		if at := q.answeredAt(); outstanding(q.posted, at, f.at) {
			ff.outstanding++
			if at.IsZero() || !at.Before(f.end) {
				ff.unfinished++
			} else {
				ff.pickupQueries = max(ff.pickupQueries, at.Sub(f.at))
			}
		}
		if !q.posted.Before(f.at) && q.posted.Before(f.end) {
			tally(len(q.replies), &ff.lostReplies, &ff.dupReplies)
		}
	}
	for _, r := range lg.runs {
		if at := r.endedAt(); outstanding(r.created, at, f.at) {
			ff.outstanding++
			if at.IsZero() || !at.Before(f.end) {
				ff.unfinished++
			} else {
				ff.pickupRuns = max(ff.pickupRuns, at.Sub(f.at))
			}
		}
		if !r.created.Before(f.at) && r.created.Before(f.end) {
			tally(len(r.ends), &ff.lostRuns, &ff.dupRuns)
		}
	}
	return ff
}

// tally counts an outcome that should have happened once and happened n times.
func tally(n int, lost, duplicated *int) {
	switch {
	case n == 0:
		*lost++
	case n > 1:
		*duplicated++
	}
}

// report prints the figures of issue 16 per kind of fault: write stall p50/max, failed writes, lost and duplicated
// replies and runs, and how long a dead node's work took to be picked up.
func (s *scenario) report(lg *logged) string {
	ops := s.l.snapshot()
	var b strings.Builder
	if len(s.faults) > 0 {
		calm := figuresOf(&fault{at: s.loadStart, end: s.faults[0].at}, ops, lg)
		fmt.Fprintf(&b, "no fault (the %s before the first):\n", s.faults[0].at.Sub(s.loadStart).Round(time.Second))
		fmt.Fprintf(&b, "  failed writes: %d (%d answered 5xx or a GraphQL server error) %s\n", calm.failedWrites, calm.serverFaults, counts(calm.outcomes))
		fmt.Fprintf(&b, "  replies lost %d, duplicated %d; runs lost %d, duplicated %d\n", calm.lostReplies, calm.dupReplies, calm.lostRuns, calm.dupRuns)
	}
	kinds := []string{faultLeaderKill, faultSweeperKill, faultNATSTerm}
	for _, kind := range kinds {
		var all []faultFigures
		var leases []time.Duration
		for _, f := range s.faults {
			if f.kind == kind {
				all = append(all, figuresOf(f, ops, lg))
				if f.leaseMoved > 0 {
					leases = append(leases, f.leaseMoved)
				}
			}
		}
		if len(all) == 0 {
			continue
		}
		var stalls, pickupQ, pickupR []time.Duration
		sum := faultFigures{outcomes: map[string]int{}}
		open := 0
		for _, ff := range all {
			stalls = append(stalls, ff.stall)
			if ff.stallOpen {
				open++
			}
			sum.failedWrites += ff.failedWrites
			sum.serverFaults += ff.serverFaults
			for k, v := range ff.outcomes {
				sum.outcomes[k] += v
			}
			sum.lostReplies += ff.lostReplies
			sum.dupReplies += ff.dupReplies
			sum.lostRuns += ff.lostRuns
			sum.dupRuns += ff.dupRuns
			sum.outstanding += ff.outstanding
			sum.unfinished += ff.unfinished
			pickupQ = append(pickupQ, ff.pickupQueries)
			pickupR = append(pickupR, ff.pickupRuns)
		}
		fmt.Fprintf(&b, "%s (%d times):\n", kind, len(all))
		fmt.Fprintf(&b, "  write stall: p50 %s, max %s (each: %s)", percentile(stalls, 50), percentile(stalls, 100), durations(stalls))
		if open > 0 {
			fmt.Fprintf(&b, "; %d with no successful write before the next fault", open)
		}
		fmt.Fprintf(&b, "\n  failed writes: %d (%d answered 5xx or a GraphQL server error) %s\n", sum.failedWrites, sum.serverFaults, counts(sum.outcomes))
		fmt.Fprintf(&b, "  replies lost %d, duplicated %d; runs lost %d, duplicated %d (of those started during the fault's window)\n",
			sum.lostReplies, sum.dupReplies, sum.lostRuns, sum.dupRuns)
		fmt.Fprintf(&b, "  work outstanding at the fault (begun in the %s before it): %d; not ended when the fault's window\n"+
			"  closed: %d; the rest ended after at most (each fault) queries %s, runs %s\n",
			recent, sum.outstanding, sum.unfinished, durations(pickupQ), durations(pickupR))
		if len(leases) > 0 {
			fmt.Fprintf(&b, "  sweeper lease moved to the other node in: %s\n", durations(leases))
		}
		var stills []*standstill
		for _, f := range s.faults {
			if f.kind == kind && f.still != nil {
				stills = append(stills, f.still)
			}
		}
		b.WriteString(standstillReport(stills))
	}
	return b.String()
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)].Round(10 * time.Millisecond)
}

func durations(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Round(10 * time.Millisecond).String()
	}
	return strings.Join(parts, " ")
}

func counts(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
