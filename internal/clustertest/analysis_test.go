package clustertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/clustertest"
)

// logged is what the log says of the load's queries and runs, kept up to date by reading what was appended since.
type logged struct {
	queries map[string]*loggedQuery // by message ID; queries only
	runs    map[string]*loggedRun   // by run ID
	// texts holds the text of every query and of every thread's first user message, to find writes whose request
	// failed.
	texts map[string]bool
	// trails holds each session's events as a line each (type, sequence, time, actor): what a lost query's report
	// shows of its session.
	trails map[string][]string
	// next is the sequence the next read starts from.
	next uint64
}

func newLogged() *logged {
	return &logged{queries: map[string]*loggedQuery{}, runs: map[string]*loggedRun{}, texts: map[string]bool{},
		trails: map[string][]string{}}
}

type loggedQuery struct {
	id, session, text string
	posted            time.Time
	// dispatched counts the query's dispatches (query_dispatched events, and the post's own when it carried one): a
	// query lost before it went to an agent has none.
	dispatched int
	replies    []loggedReply
}

// loggedReply is a reply_posted or reply_failed in reply to a query.
type loggedReply struct {
	id     string
	failed bool
	at     time.Time
}

type loggedRun struct {
	id, thread string
	created    time.Time
	starts     int
	// ends are the run's final events (completed, incomplete, failed, cancelled, expired).
	ends []loggedEnd
	// answers counts the assistant messages the run wrote.
	answers int
}

type loggedEnd struct {
	typ string
	at  time.Time
}

func (r *loggedRun) endedAt() time.Time {
	if len(r.ends) == 0 {
		return time.Time{}
	}
	return r.ends[0].at
}

func (q *loggedQuery) answeredAt() time.Time {
	if len(q.replies) == 0 {
		return time.Time{}
	}
	return q.replies[0].at
}

func (lg *logged) query(id string) *loggedQuery {
	q := lg.queries[id]
	if q == nil {
		q = &loggedQuery{id: id}
		lg.queries[id] = q
	}
	return q
}

func (lg *logged) run(id string) *loggedRun {
	r := lg.runs[id]
	if r == nil {
		r = &loggedRun{id: id}
		lg.runs[id] = r
	}
	return r
}

// update reads the session and thread events appended since the last read.
func (lg *logged) update(ctx context.Context, c *clustertest.Cluster) error {
	p := c.Names.Prefix
	evs, err := c.ReadLog(ctx, lg.next, p+".ev.session.>", p+".ev.thread.>")
	if err != nil {
		return err
	}
	for _, e := range evs {
		if err := lg.apply(e); err != nil {
			return err
		}
		lg.next = e.Sequence + 1
	}
	return nil
}

func (lg *logged) apply(e events.Envelope) error {
	var d struct {
		events.SessionMessagePosted
		InReplyTo string               `json:"in_reply_to"`
		RunID     string               `json:"run_id"`
		Role      string               `json:"role"`
		Content   []events.ContentPart `json:"content"`
	}
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return fmt.Errorf("decode %s at sequence %d: %w", e.Type, e.Sequence, err)
	}
	if e.Aggregate == "session" {
		lg.trails[e.AggregateID] = append(lg.trails[e.AggregateID], fmt.Sprintf("%s at sequence %d, %s, by %s",
			e.Type, e.Sequence, e.Time.Format(time.StampMilli), e.Actor))
	}
	switch e.Type {
	case "session.message_posted":
		if d.Type == events.MessageQuery {
			q := lg.query(d.MessageID)
			q.session, q.text, q.posted = e.AggregateID, d.Text, e.Time
			lg.texts[d.Text] = true
			if d.Dispatch != nil { // posted to an idle session: dispatched with the post
				q.dispatched++
			}
		}
	case "session.query_dispatched":
		lg.query(d.MessageID).dispatched++
	case "session.reply_posted", "session.reply_failed":
		q := lg.query(d.InReplyTo)
		q.replies = append(q.replies, loggedReply{id: d.MessageID, failed: e.Type == "session.reply_failed", at: e.Time})
	case "thread.run_created":
		r := lg.run(d.RunID)
		r.thread, r.created = e.AggregateID, e.Time
	case "thread.run_started":
		lg.run(d.RunID).starts++
	case "thread.run_completed", "thread.run_incomplete", "thread.run_failed", "thread.run_cancelled", "thread.run_expired":
		r := lg.run(d.RunID)
		r.ends = append(r.ends, loggedEnd{typ: e.Type, at: e.Time})
	case "thread.message_created":
		if d.Role == "assistant" && d.RunID != "" {
			lg.run(d.RunID).answers++
		}
		if d.Role == "user" && len(d.Content) > 0 {
			lg.texts[d.Content[0].Text] = true
		}
	}
	return nil
}

// settled reports whether every query in the log has a reply and every run an end.
func (lg *logged) settled() bool {
	for _, q := range lg.queries {
		if len(q.replies) == 0 {
			return false
		}
	}
	for _, r := range lg.runs {
		if len(r.ends) == 0 {
			return false
		}
	}
	return true
}

// settle brings lg up to date until every query in the log is answered and every run ended, or d passes.
func settle(c *clustertest.Cluster, lg *logged, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		err := lg.update(ctx, c)
		if err == nil && lg.settled() {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// queryProblems compares the acknowledged queries with the log: each must be there and have exactly one reply, and
// so must every query the log holds (those whose request got no answer too). Queries without a reply are listed
// apart (lost) from every other problem (wrong).
func queryProblems(l *load, lg *logged) (lost, wrong []string) {
	out := &wrong
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.queries {
		lq, ok := lg.queries[q.id]
		switch {
		case !ok || lq.posted.IsZero():
			*out = append(*out, fmt.Sprintf("query %s (%q on %s) was acknowledged but is not in the log", q.id, q.text, q.session))
		case q.replyID != "" && len(lq.replies) > 0 && q.replyID != lq.replies[0].id:
			*out = append(*out, fmt.Sprintf("query %s: wait: true answered %s, the log's reply is %s", q.id, q.replyID, lq.replies[0].id))
		}
	}
	for _, q := range inOrder(lg.queries, func(q *loggedQuery) time.Time { return q.posted }) {
		switch n := len(q.replies); {
		case n == 0:
			lost = append(lost, fmt.Sprintf("query %s (%q on session %s, posted %s, dispatched %d times) has no reply; "+
				"the session's events:\n\t%s", q.id, q.text, q.session, q.posted.Format(time.StampMilli), q.dispatched,
				strings.Join(lg.trails[q.session], "\n\t")))
		case n > 1:
			*out = append(*out, fmt.Sprintf("query %s (%q on session %s) has %d replies", q.id, q.text, q.session, n))
		}
	}
	return lost, wrong
}

// runProblems compares the acknowledged runs with the log: each must be there, and every run the log holds must
// end exactly once with at most one answer. Runs that never ended are listed apart (stuck) from every other problem
// (wrong).
func runProblems(l *load, lg *logged) (stuck, wrong []string) {
	out := &wrong
	l.mu.Lock()
	for _, r := range l.runs {
		if lr, ok := lg.runs[r.id]; !ok || lr.created.IsZero() {
			*out = append(*out, fmt.Sprintf("run %s on %s was acknowledged but is not in the log", r.id, r.thread))
		}
	}
	l.mu.Unlock()
	for _, r := range inOrder(lg.runs, func(r *loggedRun) time.Time { return r.created }) {
		var ends []string
		for _, e := range r.ends {
			ends = append(ends, e.typ)
		}
		switch {
		case len(r.ends) == 0:
			stuck = append(stuck, fmt.Sprintf("run %s on %s (created %s, started %d times) never ended", r.id, r.thread, r.created.Format(time.StampMilli), r.starts))
		case len(r.ends) > 1:
			*out = append(*out, fmt.Sprintf("run %s on %s ended %d times: %v", r.id, r.thread, len(r.ends), ends))
		case r.answers > 1:
			*out = append(*out, fmt.Sprintf("run %s on %s wrote %d answers", r.id, r.thread, r.answers))
		}
	}
	return stuck, wrong
}

// committedButFailed lists the writes whose request answered an error although what they wrote is in the log: a
// client that retries them makes a duplicate. A request that got no answer because its own node was killed during
// it is left out: a process killed after its write went in cannot answer, whatever it does (the client's retry with
// the same request is what the platform's idempotency is for).
func committedButFailed(ops []op, lg *logged, faults []*fault, nodes []*clustertest.Node) []string {
	killedDuring := func(o op) bool {
		for _, f := range faults {
			if f.kind == faultSweeperKill && f.victim == nodes[o.node].Name && !f.at.Before(o.start) && !f.at.After(o.end) {
				return true
			}
		}
		return false
	}
	var out []string
	for _, o := range ops {
		if o.status == 0 && o.code == "" && killedDuring(o) {
			continue
		}
		if o.write() && o.failed() && o.text != "" && (o.kind == opSendMessage || o.kind == opCreateThread) && lg.texts[o.text] {
			out = append(out, fmt.Sprintf("%s %q on node %d answered %s, but it is in the log", o.kind, o.text, o.node+1, o.outcome()))
		}
	}
	return out
}

// inOrder lists a map's values by the time each gives, so that problems read in the order they happened.
func inOrder[V any](m map[string]V, at func(V) time.Time) []V {
	out := make([]V, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return at(out[i]).Before(at(out[j])) })
	return out
}

// sessionMessagesQ reads a session's chat log.
const sessionMessagesQ = `query($h: String!) { sessionByHandle(handle: $h) { messages(first: 100) { id type inReplyTo { id } } } }`

// sessionProblems reads every session's messages through GraphQL, as a user would, and checks that each query shows
// exactly one reply (the log may be right while the read model is not). Queries showing none are listed apart
// (unanswered) from every other problem (wrong).
func sessionProblems(c *clustertest.Cluster, l *load) (unanswered, wrong []string) {
	l.mu.Lock()
	sessions := append([]string(nil), l.sessions...)
	l.mu.Unlock()
	for i, h := range sessions {
		n := c.Nodes[i%len(c.Nodes)]
		var got struct {
			SessionByHandle *struct {
				Messages []struct {
					ID, Type  string
					InReplyTo *struct{ ID string }
				}
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := n.GraphQL(ctx, l.key, sessionMessagesQ, map[string]any{"h": h}, &got)
		cancel()
		if err != nil || got.SessionByHandle == nil {
			wrong = append(wrong, fmt.Sprintf("session %s on %s: %v", h, n.Name, err))
			continue
		}
		replies := map[string]int{}
		var queries []string
		for _, m := range got.SessionByHandle.Messages {
			if m.Type == events.MessageQuery {
				queries = append(queries, m.ID)
			} else if m.InReplyTo != nil {
				replies[m.InReplyTo.ID]++
			}
		}
		for _, q := range queries {
			switch replies[q] {
			case 0:
				unanswered = append(unanswered, fmt.Sprintf("session %s on %s shows no reply to query %s", h, n.Name, q))
			case 1:
			default:
				wrong = append(wrong, fmt.Sprintf("session %s on %s shows %d replies to query %s", h, n.Name, replies[q], q))
			}
		}
	}
	return unanswered, wrong
}

// projWatch samples /admin/projections on the nodes in turn while the load runs.
type projWatch struct {
	c       *clustertest.Cluster
	mu      sync.Mutex
	samples []projSample
	failed  int
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

type projSample struct {
	at   time.Time
	node string
	st   []clustertest.ProjectionStatus
}

// watchProjections samples one node a second, the nodes in turn (each status costs an ordered consumer per
// projection, so the watch itself stays light).
func watchProjections(c *clustertest.Cluster) *projWatch {
	w := &projWatch{c: c, done: make(chan struct{})}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for i := 0; ; i++ {
			select {
			case <-w.done:
				return
			case <-t.C:
			}
			n := c.Nodes[i%len(c.Nodes)]
			if !n.Running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			st, err := c.Projections(ctx, n)
			cancel()
			w.mu.Lock()
			if err != nil {
				w.failed++
			} else {
				w.samples = append(w.samples, projSample{at: time.Now(), node: n.Name, st: st})
			}
			w.mu.Unlock()
		}
	}()
	return w
}

// stop ends the watch; calling it again does nothing.
func (w *projWatch) stop() {
	w.once.Do(func() {
		close(w.done)
		w.wg.Wait()
	})
}

// standingStill finds the stretches, longer than limit, in which a node saw a projection keep its applied sequence
// while events for it waited in the log.
func (w *projWatch) standingStill(limit time.Duration) []string {
	out, _ := w.stills(limit)
	return out
}

// longestStill is the longest a projection stood still with events pending for it, and which one.
func (w *projWatch) longestStill() string {
	_, longest := w.stills(time.Duration(1<<63 - 1))
	return longest
}

// stills lists the stretches longer than limit in which a projection stood at one sequence with events pending, and
// says which was the longest.
func (w *projWatch) stills(limit time.Duration) ([]string, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	type stretch struct {
		applied, pending uint64
		since, last      time.Time
	}
	open := map[string]*stretch{} // node/projection
	var out []string
	var longest time.Duration
	longestWhat := "none"
	flush := func(key string, s *stretch) {
		if s != nil && s.last.Sub(s.since) > longest {
			longest = s.last.Sub(s.since)
			longestWhat = fmt.Sprintf("%s for %s (from %s)", key, longest.Round(100*time.Millisecond), s.since.Format(time.StampMilli))
		}
		if s != nil && s.last.Sub(s.since) > limit {
			out = append(out, fmt.Sprintf("%s stood at sequence %d with %d events pending for %s (%s to %s)",
				key, s.applied, s.pending, s.last.Sub(s.since).Round(time.Second), s.since.Format(time.StampMilli), s.last.Format(time.StampMilli)))
			// What that node logged of the projection meanwhile: its batches, its reader, its lease.
			node, name, _ := strings.Cut(key, "/")
			for _, n := range w.c.Nodes {
				if n.Name != node {
					continue
				}
				for _, line := range n.LogLinesBetween(s.since.Add(-5*time.Second), s.last.Add(time.Second), 40,
					`"projection":"`+name+`"`, `"lease":"projection.`+name+`"`) {
					out = append(out, "  "+node+" logged: "+line)
				}
			}
		}
	}
	for _, smp := range w.samples {
		for _, p := range smp.st {
			key := smp.node + "/" + p.Name
			s := open[key]
			if p.Pending == 0 || s == nil || s.applied != p.Applied {
				flush(key, s)
				delete(open, key)
				if p.Pending > 0 {
					open[key] = &stretch{applied: p.Applied, pending: p.Pending, since: smp.at, last: smp.at}
				}
				continue
			}
			s.last, s.pending = smp.at, p.Pending
		}
	}
	// In the order of the samples (each stretch followed by what its node logged); those still open at the end last.
	keys := make([]string, 0, len(open))
	for key := range open {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		flush(key, open[key])
	}
	return out, longestWhat
}
