package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/projections"
)

// SessionsOptions sizes the sessions benchmark.
type SessionsOptions struct {
	// Dir is an empty directory for the platform's data.
	Dir string
	// Concurrency lists the numbers of sessions measured at once (default 1, 10, 100).
	Concurrency []int
	// Messages is how many queries each session posts, one after the other's reply (default 20).
	Messages int
}

// Sessions measures a query's round trip as a client sees it, on an in-process platform with the built-in fixie
// agent on the offline model: from the HTTP POST of sendSessionMessage to the reply arriving on the session's
// sessionMessages subscription (a real websocket, graphql-transport-ws). Each session posts its next query once the
// previous reply arrived; the sessions of one level run at once. The baseline is raw JetStream's own round trip at
// the same concurrency: a publish until an ordered consumer delivers it. It also counts the events appended per
// query.
func Sessions(ctx context.Context, o SessionsOptions, progress func(string)) (Report, error) {
	if len(o.Concurrency) == 0 {
		o.Concurrency = []int{1, 10, 100}
	}
	if o.Messages == 0 {
		o.Messages = 20
	}
	step := func(s string) {
		if progress != nil {
			progress(s)
		}
	}
	cfg := config.Defaults()
	cfg.DataDir, cfg.NATSListen, cfg.Addr = o.Dir, "off", "127.0.0.1:0"
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return Report{}, err
	}
	cfg.Addr = ln.Addr().String()
	p, err := platform.Start(ctx, cfg, platform.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		ln.Close()
		return Report{}, err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		p.Stop(context.Background())
	}()
	b := &sessionBench{p: p, base: "http://" + cfg.Addr, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}}
	rep := Report{Title: fmt.Sprintf("contrail bench sessions: post → reply visible on the subscription, built-in fixie agent on the offline model, %d queries per session", o.Messages)}

	// Warm up: the first query pays for consumers, connections and caches.
	if _, err := b.level(ctx, 1, 3); err != nil {
		return rep, fmt.Errorf("warm up: %w", err)
	}
	for _, c := range o.Concurrency {
		step(fmt.Sprintf("%d concurrent sessions", c))
		before, err := p.Store.LastSequence(ctx)
		if err != nil {
			return rep, err
		}
		lat, err := b.level(ctx, c, o.Messages)
		if err != nil {
			return rep, fmt.Errorf("%d sessions: %w", c, err)
		}
		after, err := p.Store.LastSequence(ctx)
		if err != nil {
			return rep, err
		}
		step(fmt.Sprintf("raw JetStream round trips at %d", c))
		raw, err := b.rawRoundTrips(ctx, c, o.Messages)
		if err != nil {
			return rep, fmt.Errorf("raw round trips: %w", err)
		}
		queries := c * o.Messages
		rep.Figures = append(rep.Figures,
			latency(fmt.Sprintf("post→reply p50, %d sessions", c), Percentile(lat.samples, 50), Percentile(raw, 50)),
			latency(fmt.Sprintf("post→reply p99, %d sessions", c), Percentile(lat.samples, 99), Percentile(raw, 99)),
			Figure{Name: fmt.Sprintf("queries/s, %d sessions", c), Value: float64(queries) / lat.wall.Seconds(), Unit: "queries/s"},
			Figure{Name: fmt.Sprintf("events per query, %d sessions", c), Value: float64(after-before-uint64(lat.setupEvents)) / float64(queries), Unit: "events",
				Note: "appended to the log per query, sessions' creation left out"},
		)
	}
	return rep, nil
}

type sessionBench struct {
	p    *platform.Platform
	base string
	http *http.Client
	seq  int
}

type levelResult struct {
	samples     []time.Duration
	wall        time.Duration
	setupEvents int
}

// level runs c sessions at once, each posting n queries in turn, and returns every post→reply latency.
func (b *sessionBench) level(ctx context.Context, c, n int) (levelResult, error) {
	b.seq++
	k, err := b.p.Commands.Accounts.Create(ctx, auth.Principal{AccountID: commands.AdminAccountID},
		commands.NewAccount{Name: "bench-" + strconv.Itoa(b.seq)})
	if err != nil {
		return levelResult{}, err
	}
	// The benchmark is one account posting far more than a user would: lift its quota and request rate (one more
	// event of its own).
	system := auth.Principal{AccountID: commands.AdminAccountID}
	lifted, err := b.p.Commands.Accounts.SetLimits(ctx, system, k.AccountID, 1<<30, 1<<30)
	err = b.p.Views.ShowsWrite(ctx, lifted, err, projections.Accounts{})
	if err != nil {
		return levelResult{}, err
	}
	res := levelResult{setupEvents: 3}
	clients := make([]*benchSession, c)
	for i := range clients {
		s, err := b.openSession(ctx, k.Key)
		if err != nil {
			return res, err
		}
		defer s.close()
		clients[i] = s
		res.setupEvents++ // session.created
	}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for _, s := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for q := 0; q < n; q++ {
				d, err := s.ask(ctx, fmt.Sprintf("query %d of the benchmark", q))
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					res.samples = append(res.samples, d)
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	res.wall = time.Since(start)
	return res, firstErr
}

// benchSession is one session with its subscription open.
type benchSession struct {
	b       *sessionBench
	key     string
	handle  string
	conn    *websocket.Conn
	replies chan string // in-reply-to IDs of replies seen on the subscription
	cancel  context.CancelFunc
}

func (b *sessionBench) openSession(ctx context.Context, key string) (*benchSession, error) {
	var created struct {
		CreateSession struct{ Session struct{ Handle string } }
	}
	if err := b.graphql(ctx, key, `mutation { createSession { session { handle } } }`, nil, &created); err != nil {
		return nil, err
	}
	handle := created.CreateSession.Session.Handle
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.base, "http")+"/graphql",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		return nil, fmt.Errorf("dial websocket: %w", err)
	}
	ws.SetReadLimit(1 << 20)
	rctx, cancel := context.WithCancel(ctx)
	s := &benchSession{b: b, key: key, handle: handle, conn: ws, replies: make(chan string, 64), cancel: cancel}
	write := func(v any) error {
		wctx, c := context.WithTimeout(ctx, 5*time.Second)
		defer c()
		return wsjson.Write(wctx, ws, v)
	}
	if err := write(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + key}}); err != nil {
		s.close()
		return nil, err
	}
	if err := write(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{
		"query":     `subscription($h: String!) { sessionMessages(handle: $h) { kind message { type inReplyTo { id } } } }`,
		"variables": map[string]any{"h": handle}}}); err != nil {
		s.close()
		return nil, err
	}
	ready := make(chan error, 1)
	go s.read(rctx, ready)
	select {
	case err := <-ready:
		if err != nil {
			s.close()
			return nil, err
		}
	case <-time.After(10 * time.Second):
		s.close()
		return nil, errors.New("subscription not ready after 10s")
	}
	return s, nil
}

// read passes the subscription's replies on, and says when it is ready.
func (s *benchSession) read(ctx context.Context, ready chan<- error) {
	for {
		var f struct {
			Type    string `json:"type"`
			Payload struct {
				Data struct {
					SessionMessages struct {
						Kind    string `json:"kind"`
						Message *struct {
							Type      string `json:"type"`
							InReplyTo *struct {
								ID string `json:"id"`
							} `json:"inReplyTo"`
						} `json:"message"`
					} `json:"sessionMessages"`
				} `json:"data"`
			} `json:"payload"`
		}
		if err := wsjson.Read(ctx, s.conn, &f); err != nil {
			select {
			case ready <- err:
			default:
			}
			close(s.replies)
			return
		}
		switch f.Type {
		case "ping":
			_ = wsjson.Write(ctx, s.conn, map[string]string{"type": "pong"})
		case "error", "connection_error":
			select {
			case ready <- fmt.Errorf("subscription refused: %s", f.Type):
			default:
			}
		case "next":
			m := f.Payload.Data.SessionMessages
			if m.Kind == "ready" {
				ready <- nil
			}
			if m.Kind == "message" && m.Message != nil && m.Message.Type != "query" && m.Message.InReplyTo != nil {
				s.replies <- m.Message.InReplyTo.ID
			}
		}
	}
}

// ask posts a query and waits for its reply on the subscription.
func (s *benchSession) ask(ctx context.Context, text string) (time.Duration, error) {
	start := time.Now()
	var sent struct {
		SendSessionMessage struct{ Message struct{ ID string } }
	}
	err := s.b.graphql(ctx, s.key, `mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { id } } }`,
		map[string]any{"s": s.handle, "t": text}, &sent)
	if err != nil {
		return 0, err
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case id, ok := <-s.replies:
			if !ok {
				return 0, errors.New("subscription closed")
			}
			if id == sent.SendSessionMessage.Message.ID {
				return time.Since(start), nil
			}
		case <-timeout:
			return 0, errors.New("no reply on the subscription within 30s")
		}
	}
}

func (s *benchSession) close() {
	s.cancel()
	_ = s.conn.CloseNow()
}

func (b *sessionBench) graphql(ctx context.Context, key, query string, vars map[string]any, out any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, "POST", b.base+"/graphql", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var r struct {
		Data   json.RawMessage
		Errors []struct{ Message string }
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("graphql answered %d: %s", resp.StatusCode, raw)
	}
	if len(r.Errors) > 0 {
		return fmt.Errorf("graphql: %s", r.Errors[0].Message)
	}
	return json.Unmarshal(r.Data, out)
}

// rawRoundTrips measures raw JetStream's round trip at the same concurrency: c workers each publish n messages in
// turn to a stream of their own subject and wait for an ordered consumer to deliver each.
func (b *sessionBench) rawRoundTrips(ctx context.Context, c, n int) ([]time.Duration, error) {
	name := "BENCH_RAW_" + strconv.Itoa(b.seq)
	subject := "benchraw" + strconv.Itoa(b.seq)
	if _, err := b.p.JS.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject + ".>"}, Storage: jetstream.FileStorage}); err != nil {
		return nil, err
	}
	defer func() { _ = b.p.JS.DeleteStream(context.Background(), name) }()
	var mu sync.Mutex
	var out []time.Duration
	var firstErr error
	var wg sync.WaitGroup
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			subj := subject + "." + strconv.Itoa(w)
			cons, err := b.p.JS.OrderedConsumer(ctx, name, jetstream.OrderedConsumerConfig{FilterSubjects: []string{subj}})
			if err == nil {
				var it jetstream.MessagesContext
				it, err = cons.Messages()
				if err == nil {
					defer it.Stop()
					for i := 0; i < n && err == nil; i++ {
						start := time.Now()
						if _, err = b.p.JS.Publish(ctx, subj, []byte("query")); err == nil {
							if _, err = it.Next(); err == nil {
								mu.Lock()
								out = append(out, time.Since(start))
								mu.Unlock()
							}
						}
					}
				}
			}
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out, firstErr
}
