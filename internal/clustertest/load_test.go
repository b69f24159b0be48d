package clustertest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/contrailhq/contrail/internal/clustertest"
)

// The requests the load makes, as the figures name them.
const (
	opCreateSession = "createSession"
	opReadSession   = "sessionByHandle"
	opSendMessage   = "sendSessionMessage"
	opCreateThread  = "POST /v1/threads"
	opReadThread    = "GET /v1/threads/{id}"
	opCreateRun     = "POST /v1/threads/{id}/runs"
	opPollRun       = "GET /v1/threads/{id}/runs/{id}"
)

// stallWrite reports the writes whose first success after a fault ends its write stall: creates, which answer as
// soon as what they wrote is readable. (A query's reply takes the agent's time on top.)
func stallWrite(kind string) bool {
	return kind == opCreateSession || kind == opCreateThread || kind == opCreateRun
}

// op is one request a client made and how it ended.
type op struct {
	client     string
	kind       string
	node       int
	start, end time.Time
	// text is the unique text a write carried (a query's, a new thread's first message), to find it in the log.
	text string
	// err is "" when the request succeeded; status is the HTTP status of a failure (0: no answer at all), code its
	// GraphQL extensions.code.
	err    string
	status int
	code   string
	// after says, for a read or a write on something just made, how its creation went (for the report of a 404).
	after string
}

func (o op) write() bool {
	return o.kind != opReadSession && o.kind != opReadThread && o.kind != opPollRun
}
func (o op) failed() bool { return o.err != "" }

// serverFault reports a failure the platform answered as its own (a 5xx, or the GraphQL codes that map to one), as
// opposed to a request that got no answer because its node died.
func (o op) serverFault() bool {
	switch o.code {
	case "INTERNAL_SERVER_ERROR", "SERVICE_UNAVAILABLE", "TIMEOUT":
		return true
	}
	return o.status >= 500
}

// outcome names how a failed request ended, for the figures: "504", "GraphQL TIMEOUT", "no answer".
func (o op) outcome() string {
	switch {
	case o.code != "":
		return "GraphQL " + o.code
	case o.status != 0:
		return fmt.Sprint(o.status)
	default:
		return "no answer"
	}
}

// ackedQuery is a query the platform acknowledged: sendSessionMessage returned its message.
type ackedQuery struct {
	id, session, text string
	node              int
	end               time.Time
	// replyID is the reply wait: true returned ("" when it timed out).
	replyID string
}

// ackedRun is a run the platform acknowledged (POST runs answered it) and how polling last saw it.
type ackedRun struct {
	id, thread string
	created    time.Time
	status     openai.RunStatus
	// ended is when polling first saw it in a final status (zero if it never did).
	ended time.Time
}

// load drives the platform as clients do: several at once, each alternating between the nodes.
type load struct {
	c   *clustertest.Cluster
	key string
	lb  *balancer
	sdk []openai.Client
	// sessionClients and runClients are how many clients of each kind start ran.
	sessionClients, runClients int

	mu       sync.Mutex
	ops      []op
	queries  map[string]*ackedQuery
	runs     map[string]*ackedRun
	sessions []string
	// notFound lists the requests that did not find what the load had just made: a read on the other node right
	// after a create, or the create itself.
	notFound []string

	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

func newLoad(c *clustertest.Cluster, key string) *load {
	l := &load{c: c, key: key, lb: newBalancer(c), queries: map[string]*ackedQuery{}, runs: map[string]*ackedRun{},
		stop: make(chan struct{})}
	for _, n := range c.Nodes {
		l.sdk = append(l.sdk, openai.NewClient(option.WithBaseURL(n.URL+"/v1/"), option.WithAPIKey(key),
			option.WithMaxRetries(0), option.WithRequestTimeout(60*time.Second)))
	}
	return l
}

// start runs session clients and run clients (each run client with its assistant) until stopAndWait.
func (l *load) start(sessionClients int, assistants []string) {
	l.sessionClients, l.runClients = sessionClients, len(assistants)
	for i := 0; i < sessionClients; i++ {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.sessionClient(fmt.Sprintf("s%d", i), i)
		}()
	}
	for i, a := range assistants {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.runClient(fmt.Sprintf("r%d", i), i, a)
		}()
	}
}

// stopAndWait ends the load: clients finish the request they are making and return. Calling it again does
// nothing.
func (l *load) stopAndWait() {
	l.stopOnce.Do(func() {
		close(l.stop)
		l.wg.Wait()
		l.lb.close()
	})
}

func (l *load) stopped() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// record notes a request o that ended now.
func (l *load) record(o op, err error) op {
	o.end = time.Now()
	if err != nil {
		o.err = err.Error()
		o.status, o.code = clustertest.StatusOf(err), clustertest.CodeOf(err)
		var ae *openai.Error
		if errors.As(err, &ae) {
			o.status = ae.StatusCode
		}
		if o.status == 0 && o.code == "" {
			l.lb.markDown(o.node)
		}
		if o.status == http.StatusNotFound || o.code == "NOT_FOUND" {
			msg := o.err
			var ae *openai.Error
			if errors.As(err, &ae) {
				msg += " " + ae.Message
			}
			l.notFoundAfterCreate(fmt.Sprintf("%s on %s (%s, %s after it started, %s): %s", o.kind, l.c.Nodes[o.node].Name,
				o.client, o.end.Sub(o.start).Round(time.Millisecond), o.after, msg))
		}
	}
	l.mu.Lock()
	l.ops = append(l.ops, o)
	l.mu.Unlock()
	return o
}

func (l *load) notFoundAfterCreate(what string) {
	l.mu.Lock()
	l.notFound = append(l.notFound, what)
	l.mu.Unlock()
}

// pause waits a moment after a failure, so that a client does not spin on a dead node.
func (l *load) pause(d time.Duration) {
	select {
	case <-l.stop:
	case <-time.After(d):
	}
}

const (
	createSessionQ = `mutation { createSession(sessionData: {}) { session { handle } } }`
	readSessionQ   = `query($h: String!) { sessionByHandle(handle: $h) { handle } }`
	sendQ          = `mutation($h: String!, $t: String!) {
  sendSessionMessage(messageData: {session: $h, text: $t}, wait: true, timeoutSeconds: 10) {
    message { id type } response { id type inReplyTo { id } } timedOut } }`
)

// requestCtx bounds one request; a stopping load never cuts one short.
func requestCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 60*time.Second)
}

// sessionClient creates a session on one node, reads it at once on the other, and asks it two questions with
// wait: true, one on each node; again and again.
func (l *load) sessionClient(name string, i int) {
	for k := 0; !l.stopped(); k++ {
		a := l.lb.pick(i + k)
		b := l.lb.pick(a + 1)
		ctx, cancel := requestCtx()
		var created struct {
			CreateSession struct{ Session struct{ Handle string } }
		}
		start := time.Now()
		err := l.c.Nodes[a].GraphQL(ctx, l.key, createSessionQ, nil, &created)
		l.record(op{client: name, kind: opCreateSession, node: a, start: start}, err)
		cancel()
		if err != nil {
			l.pause(200 * time.Millisecond)
			continue
		}
		h := created.CreateSession.Session.Handle
		l.mu.Lock()
		l.sessions = append(l.sessions, h)
		l.mu.Unlock()

		ctx, cancel = requestCtx()
		var read struct {
			SessionByHandle *struct{ Handle string }
		}
		start = time.Now()
		err = l.c.Nodes[b].GraphQL(ctx, l.key, readSessionQ, map[string]any{"h": h}, &read)
		l.record(op{client: name, kind: opReadSession, node: b, start: start, text: h}, err)
		cancel()
		if err == nil && read.SessionByHandle == nil {
			l.notFoundAfterCreate(fmt.Sprintf("session %s created on %s, read on %s: null", h, l.c.Nodes[a].Name, l.c.Nodes[b].Name))
		}

		for j := 0; j < 2 && !l.stopped(); j++ {
			n := l.lb.pick(b + j)
			text := fmt.Sprintf("%s-%d-%d: what can you do?", name, k, j)
			var sent struct {
				SendSessionMessage struct {
					Message  struct{ ID, Type string }
					Response *struct {
						ID, Type  string
						InReplyTo struct{ ID string }
					}
					TimedOut bool
				}
			}
			ctx, cancel := requestCtx()
			start := time.Now()
			err := l.c.Nodes[n].GraphQL(ctx, l.key, sendQ, map[string]any{"h": h, "t": text}, &sent)
			o := l.record(op{client: name, kind: opSendMessage, node: n, start: start, text: text}, err)
			cancel()
			if err != nil {
				l.pause(200 * time.Millisecond)
				continue
			}
			q := &ackedQuery{id: sent.SendSessionMessage.Message.ID, session: h, text: text, node: n, end: o.end}
			if r := sent.SendSessionMessage.Response; r != nil {
				q.replyID = r.ID
				if r.InReplyTo.ID != q.id {
					q.replyID = "wrong: " + r.ID + " in reply to " + r.InReplyTo.ID
				}
			}
			l.mu.Lock()
			l.queries[q.id] = q
			l.mu.Unlock()
		}
	}
}

// runClient creates a thread on one node, reads it at once on the other, runs the assistant on it there and polls
// the run to its end on both nodes in turn; again and again.
func (l *load) runClient(name string, i int, assistantID string) {
	for k := 0; !l.stopped(); k++ {
		a := l.lb.pick(i + k)
		b := l.lb.pick(a + 1)
		ctx, cancel := requestCtx()
		start := time.Now()
		text := fmt.Sprintf("%s-%d: hello", name, k)
		th, err := l.sdk[a].Beta.Threads.New(ctx, openai.BetaThreadNewParams{
			Messages: []openai.BetaThreadNewParamsMessage{{Role: "user",
				Content: openai.BetaThreadNewParamsMessageContentUnion{OfString: openai.String(text)}}},
		})
		created := l.record(op{client: name, kind: opCreateThread, node: a, start: start, text: text}, err)
		cancel()
		if err != nil {
			l.pause(200 * time.Millisecond)
			continue
		}
		after := fmt.Sprintf("thread %s made on %s in %s", th.ID, l.c.Nodes[a].Name, created.end.Sub(created.start).Round(time.Millisecond))

		ctx, cancel = requestCtx()
		start = time.Now()
		_, err = l.sdk[b].Beta.Threads.Get(ctx, th.ID)
		l.record(op{client: name, kind: opReadThread, node: b, start: start, text: th.ID, after: after}, err)
		cancel()

		ctx, cancel = requestCtx()
		start = time.Now()
		r, err := l.sdk[b].Beta.Threads.Runs.New(ctx, th.ID, openai.BetaThreadRunNewParams{AssistantID: assistantID})
		l.record(op{client: name, kind: opCreateRun, node: b, start: start, text: th.ID, after: after}, err)
		cancel()
		if err != nil {
			l.pause(200 * time.Millisecond)
			continue
		}
		run := &ackedRun{id: r.ID, thread: th.ID, created: time.Now(), status: r.Status}
		l.mu.Lock()
		l.runs[r.ID] = run
		l.mu.Unlock()
		l.pollRun(name, run)
	}
}

// pollRun polls a run on the nodes in turn until it ends (or for 90 s, or the load stops: the log says how it
// ended), as the SDKs' poll helpers do.
func (l *load) pollRun(name string, run *ackedRun) {
	for p := 0; time.Since(run.created) < 90*time.Second && !l.stopped(); p++ {
		n := l.lb.pick(p)
		ctx, cancel := requestCtx()
		start := time.Now()
		got, err := l.sdk[n].Beta.Threads.Runs.Get(ctx, run.thread, run.id)
		o := l.record(op{client: name, kind: opPollRun, node: n, start: start, text: run.id}, err)
		cancel()
		if err == nil {
			l.mu.Lock()
			run.status = got.Status
			if finalRunStatus(got.Status) {
				run.ended = o.end
			}
			l.mu.Unlock()
			if finalRunStatus(got.Status) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func finalRunStatus(s openai.RunStatus) bool {
	switch s {
	case openai.RunStatusQueued, openai.RunStatusInProgress, openai.RunStatusCancelling:
		return false
	}
	return true
}

// counts says how much the load has done: acknowledged queries and runs that polling saw end.
func (l *load) counts() (queries, runs int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.runs {
		if !r.ended.IsZero() {
			runs++
		}
	}
	return len(l.queries), runs
}

// waitFor lets the load run for at least least, and then until it has done so many more queries and runs than it
// had, or most has passed.
func (l *load) waitFor(queries, runs int, least, most time.Duration) {
	q0, r0 := l.counts()
	start := time.Now()
	for time.Since(start) < most {
		q, r := l.counts()
		if q-q0 >= queries && r-r0 >= runs && time.Since(start) >= least {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// firstWriteAfter is the end of the first create that started at or after t and succeeded.
func (l *load) firstWriteAfter(t time.Time) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var first time.Time
	for _, o := range l.ops {
		if stallWrite(o.kind) && !o.failed() && !o.start.Before(t) && (first.IsZero() || o.end.Before(first)) {
			first = o.end
		}
	}
	return first, !first.IsZero()
}

func (l *load) snapshot() []op {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]op(nil), l.ops...)
}

// balancer is what a load balancer in front of the nodes does: it sends a request to the node asked for unless that
// node is down (its /healthz fails, or a request to it got no answer a moment ago), then to another.
type balancer struct {
	nodes []*clustertest.Node
	mu    sync.Mutex
	down  []time.Time // a node is skipped until then
	only  int         // when >= 0, every request goes to this node
	done  chan struct{}
}

func newBalancer(c *clustertest.Cluster) *balancer {
	b := &balancer{nodes: c.Nodes, down: make([]time.Time, len(c.Nodes)), only: -1, done: make(chan struct{})}
	go b.probe()
	return b
}

func (b *balancer) probe() {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-t.C:
		}
		for i, n := range b.nodes {
			ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			if err := n.Do(ctx, "", http.MethodGet, "/healthz", nil, nil); err != nil {
				b.markDown(i)
			}
			cancel()
		}
	}
}

func (b *balancer) close() { close(b.done) }

func (b *balancer) markDown(i int) {
	b.mu.Lock()
	b.down[i] = time.Now().Add(time.Second)
	b.mu.Unlock()
}

// pick returns node i (modulo their number) if it is up, else the next one that is.
func (b *balancer) pick(i int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.only >= 0 {
		return b.only
	}
	n := len(b.nodes)
	now := time.Now()
	for k := 0; k < n; k++ {
		if j := (i + k) % n; now.After(b.down[j]) {
			return j
		}
	}
	return i % n
}

// pin sends every request to one node (-1: to all again).
func (b *balancer) pin(i int) {
	b.mu.Lock()
	b.only = i
	b.mu.Unlock()
}
