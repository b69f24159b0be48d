package clustertest_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/contrailhq/contrail/internal/clustertest"
)

// resumeGoal is how soon after EVENTS has a new leader every projection must apply again (issue 34 item 1).
const resumeGoal = 5 * time.Second

// resumeWindow bounds how long a resume watch waits for a projection to move after the kill; afterElection, after
// the election (a projection nobody wrote for does not move at all: what events wait for it is checked at the end).
const (
	resumeWindow  = 90 * time.Second
	afterElection = 30 * time.Second
)

// standstill is what a kill of the EVENTS leader did to the read models: when the stream had its new leader, and
// per projection when its bucket's checkpoint last moved before the kill and first moved after the election.
type standstill struct {
	killed, elected time.Time
	// lastBefore and firstAfter are per projection; a projection missing from firstAfter did not move within the
	// window, and pendingAtEnd says whether events waited for it then.
	lastBefore, firstAfter map[string]time.Time
	pendingAtEnd           map[string]uint64
}

// resumed is how long after the election the projection applied again (0 when it moved before the election was
// seen, as a batch read before the kill can).
func (s *standstill) resumed(name string) (time.Duration, bool) {
	at, ok := s.firstAfter[name]
	if !ok || s.elected.IsZero() {
		return 0, false
	}
	return max(at.Sub(s.elected), 0), true
}

// stood is how long the projection applied nothing around the fault: from its last move before the kill to its
// first after the election.
func (s *standstill) stood(name string) (time.Duration, bool) {
	at, ok := s.firstAfter[name]
	if !ok {
		return 0, false
	}
	from := s.lastBefore[name]
	if from.IsZero() {
		from = s.killed
	}
	return at.Sub(from), true
}

// resumeWatch follows every projection's checkpoint from the test's own connection, ten times a second, around a
// kill of the EVENTS leader, and finds when the stream has its new leader.
type resumeWatch struct {
	c       *clustertest.Cluster
	buckets map[string]string // projection name → bucket
	st      *standstill
	mu      sync.Mutex
	done    chan struct{}
	wg      sync.WaitGroup
}

// watchResume starts following the checkpoints; call it before the kill, then killed, then wait.
func watchResume(c *clustertest.Cluster) (*resumeWatch, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var statuses []clustertest.ProjectionStatus
	var err error
	for _, n := range c.Nodes {
		if n.Running() {
			if statuses, err = c.Projections(ctx, n); err == nil {
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("list the projections: %w", err)
	}
	w := &resumeWatch{c: c, buckets: map[string]string{}, done: make(chan struct{}),
		st: &standstill{lastBefore: map[string]time.Time{}, firstAfter: map[string]time.Time{}, pendingAtEnd: map[string]uint64{}}}
	for _, p := range statuses {
		w.buckets[p.Name] = p.Bucket
	}
	return w, nil
}

// killed records the kill of victim and follows the checkpoints until every projection moved after the election or
// the window closed.
func (w *resumeWatch) killed(victim string) {
	w.st.killed = time.Now()
	seen := map[string]uint64{}
	for name, bucket := range w.buckets {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if cp, err := w.c.Checkpoint(ctx, bucket); err == nil {
			seen[name] = cp
		}
		cancel()
	}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		w.findElection(victim)
	}()
	go func() {
		defer w.wg.Done()
		w.follow(seen)
	}()
}

// findElection asks the stream's info until a server other than the victim leads it.
func (w *resumeWatch) findElection(victim string) {
	deadline := w.st.killed.Add(resumeWindow)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		leader, err := w.c.EventsLeader(ctx)
		cancel()
		if err == nil && leader.Name != victim {
			w.mu.Lock()
			w.st.elected = time.Now()
			w.mu.Unlock()
			return
		}
		select {
		case <-w.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// follow polls the checkpoints. A move before the election is seen is recorded as the last before the kill (a
// batch read before it); the first move after is the resume.
func (w *resumeWatch) follow(seen map[string]uint64) {
	deadline := w.st.killed.Add(resumeWindow)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		elected := w.st.elected
		all := !elected.IsZero() && len(w.st.firstAfter) == len(w.buckets)
		w.mu.Unlock()
		if all || (!elected.IsZero() && time.Since(elected) > afterElection) {
			return
		}
		for name, bucket := range w.buckets {
			if _, ok := w.st.firstAfter[name]; ok {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			cp, err := w.c.Checkpoint(ctx, bucket)
			cancel()
			if err != nil || cp <= seen[name] {
				continue
			}
			seen[name] = cp
			w.mu.Lock()
			if w.st.elected.IsZero() {
				w.st.lastBefore[name] = time.Now()
			} else {
				w.st.firstAfter[name] = time.Now()
			}
			w.mu.Unlock()
		}
		select {
		case <-w.done:
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// wait waits until every projection moved after the election or the window closed, then notes what events still
// waited for those that did not move.
func (w *resumeWatch) wait() *standstill {
	w.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, n := range w.c.Nodes {
		if !n.Running() {
			continue
		}
		if statuses, err := w.c.Projections(ctx, n); err == nil {
			for _, p := range statuses {
				if _, moved := w.st.firstAfter[p.Name]; !moved {
					w.st.pendingAtEnd[p.Name] = p.Pending
				}
			}
			break
		}
	}
	return w.st
}

// stop ends the watch early (a scenario that fails).
func (w *resumeWatch) stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.wg.Wait()
}

// standstillReport prints, over every kill of the EVENTS leader, how long after the election each projection
// applied again and how long it applied nothing, and names what missed the goal.
func standstillReport(all []*standstill) string {
	if len(all) == 0 {
		return ""
	}
	var b strings.Builder
	var elections, worstResume, worstStood []time.Duration
	var late []string
	for i, s := range all {
		if s.elected.IsZero() {
			fmt.Fprintf(&b, "  kill %d: no new EVENTS leader seen within %s\n", i+1, resumeWindow)
			continue
		}
		elections = append(elections, s.elected.Sub(s.killed))
		var names []string
		for name := range s.firstAfter {
			names = append(names, name)
		}
		sort.Strings(names)
		var maxResume, maxStood time.Duration
		slowest := ""
		for _, name := range names {
			r, _ := s.resumed(name)
			d, _ := s.stood(name)
			if r > maxResume {
				maxResume, slowest = r, name
			}
			maxStood = max(maxStood, d)
			if r > resumeGoal {
				late = append(late, fmt.Sprintf("kill %d: %s applied again %s after the election", i+1, name, r.Round(100*time.Millisecond)))
			}
		}
		for name, pending := range s.pendingAtEnd {
			if pending > 0 {
				late = append(late, fmt.Sprintf("kill %d: %s did not move within %s of the election, %d events waiting", i+1, name, afterElection, pending))
			}
		}
		worstResume = append(worstResume, maxResume)
		worstStood = append(worstStood, maxStood)
		fmt.Fprintf(&b, "  kill %d: EVENTS leader elected %s after the kill; projections applied again within %s of it (slowest %s), stood still at most %s\n",
			i+1, s.elected.Sub(s.killed).Round(100*time.Millisecond), maxResume.Round(100*time.Millisecond), slowest, maxStood.Round(100*time.Millisecond))
	}
	fmt.Fprintf(&b, "  election after the kill: %s; slowest projection's resume after the election: %s (max %s, goal %s); longest standstill: %s\n",
		durations(elections), durations(worstResume), percentile(worstResume, 100), resumeGoal, durations(worstStood))
	for _, l := range late {
		fmt.Fprintf(&b, "  over the goal: %s\n", l)
	}
	return b.String()
}
