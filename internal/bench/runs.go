package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/offline"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/projections"
)

// RunsOptions sizes the Assistants runs benchmark.
type RunsOptions struct {
	// Dir is an empty directory for the node's data.
	Dir string
	// Runs is the number of runs, one after another, for the latency figures.
	Runs int
	// Threads is the number of threads running at once for the throughput figure.
	Threads int
	// Duration is how long the throughput figure is measured.
	Duration time.Duration
}

// Runs measures the Assistants API on a whole node in-process, over HTTP, with the offline model (which answers
// at once): the overhead of a run from its create request to its completion, the time to the first byte of a
// streamed run, and how many runs a second complete with many threads at once. The offline model's own time is
// measured apart, so the reader can see how little of the figures it is.
func Runs(ctx context.Context, o RunsOptions, progress func(string)) (Report, error) {
	if o.Runs == 0 {
		o.Runs = 200
	}
	if o.Threads == 0 {
		o.Threads = 100
	}
	if o.Duration == 0 {
		o.Duration = 10 * time.Second
	}
	step := func(s string) {
		if progress != nil {
			progress(s)
		}
	}
	node, err := startNode(ctx, o.Dir)
	if err != nil {
		return Report{}, err
	}
	defer node.stop()
	rep := Report{Title: fmt.Sprintf("contrail bench runs: Assistants runs on one in-process node over HTTP, offline model; %d sequential runs, %d threads for %s",
		o.Runs, o.Threads, o.Duration)}

	asst, err := node.post(ctx, "/v1/assistants", `{"model":"offline/bench","instructions":"Answer."}`)
	if err != nil {
		return rep, err
	}
	// Warm up the paths (consumers, buckets, the tokenizer's tables) before measuring.
	for i := 0; i < 10; i++ {
		if _, err := node.streamedRun(ctx, asst); err != nil {
			return rep, fmt.Errorf("warm up: %w", err)
		}
	}

	step("sequential runs")
	var total, first []time.Duration
	for i := 0; i < o.Runs; i++ {
		r, err := node.streamedRun(ctx, asst)
		if err != nil {
			return rep, err
		}
		total, first = append(total, r.completed), append(first, r.firstByte)
	}
	model, err := offlineModelTime(ctx, o.Runs)
	if err != nil {
		return rep, err
	}
	rep.Figures = append(rep.Figures,
		Figure{Name: "run create -> completed, p50", Value: ms(Percentile(total, 50)), Unit: "ms",
			Note: "POST /v1/threads/{id}/runs with stream:true until the thread.run.completed event arrives"},
		Figure{Name: "run create -> completed, p99", Value: ms(Percentile(total, 99)), Unit: "ms"},
		Figure{Name: "time to the first SSE byte, p50", Value: ms(Percentile(first, 50)), Unit: "ms",
			Note: "from sending the request to the first byte of the first event (thread.run.created)"},
		Figure{Name: "time to the first SSE byte, p99", Value: ms(Percentile(first, 99)), Unit: "ms"},
		Figure{Name: "offline model call (inside the run), p50", Value: ms(Percentile(model, 50)), Unit: "ms",
			Note: "measured apart on the same prompt: the part of each run that is the model"},
	)

	step(fmt.Sprintf("%d threads at once", o.Threads))
	n, d, err := node.concurrentRuns(ctx, asst, o.Threads, o.Duration)
	if err != nil {
		return rep, err
	}
	rep.Figures = append(rep.Figures, Figure{Name: fmt.Sprintf("runs completed with %d threads at once", o.Threads),
		Value: float64(n) / d.Seconds(), Unit: "runs/s",
		Note: "each thread creates a streamed run, reads it to the end, and starts the next"})
	return rep, nil
}

// benchNode is a platform serving HTTP on loopback, and a key of an account on it.
type benchNode struct {
	p      *platform.Platform
	srv    *http.Server
	url    string
	key    string
	client *http.Client
}

func startNode(ctx context.Context, dir string) (*benchNode, error) {
	return startNodeWith(ctx, dir, nil)
}

// startNodeWith starts a node with its configuration changed by set.
func startNodeWith(ctx context.Context, dir string, set func(*config.Config)) (*benchNode, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	cfg := config.Defaults()
	cfg.DataDir, cfg.NATSListen, cfg.Addr = dir, "off", ln.Addr().String()
	if set != nil {
		set(&cfg)
	}
	p, err := platform.Start(ctx, cfg, platform.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		ln.Close()
		return nil, err
	}
	srv := &http.Server{Handler: p.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	system := auth.Principal{AccountID: commands.AdminAccountID}
	k, err := p.Commands.Accounts.Create(ctx, system, commands.NewAccount{Name: "bench"})
	if err == nil {
		// The benchmark measures the platform, not its usage limits.
		var lifted eventstore.Appended
		lifted, err = p.Commands.Accounts.SetLimits(ctx, system, k.AccountID, 1<<30, 1<<30)
		err = p.Views.ShowsWrite(ctx, lifted, err, projections.Accounts{})
	}
	if err != nil {
		_ = srv.Close()
		p.Stop(ctx)
		return nil, err
	}
	transport := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512}
	return &benchNode{p: p, srv: srv, url: "http://" + cfg.Addr, key: k.Key, client: &http.Client{Transport: transport}}, nil
}

func (b *benchNode) stop() {
	_ = b.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b.p.Stop(ctx)
}

func (b *benchNode) request(ctx context.Context, path, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.url+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+b.key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("OpenAI-Beta", "assistants=v2")
	return b.client.Do(req)
}

// post creates an object of the /v1 face and returns its ID.
func (b *benchNode) post(ctx context.Context, path, body string) (string, error) {
	return b.create(ctx, path, body, http.StatusOK)
}

// create POSTs a create request and returns the ID of what it made, which the face answers with status want.
func (b *benchNode) create(ctx context.Context, path, body string, want int) (string, error) {
	resp, err := b.request(ctx, path, body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		return "", fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, raw)
	}
	var obj struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("POST %s: %w", path, err)
	}
	return obj.ID, nil
}

type runTimes struct{ firstByte, completed time.Duration }

// streamedRun creates a thread and then a streamed run on it, timing the run from its request.
func (b *benchNode) streamedRun(ctx context.Context, assistant string) (runTimes, error) {
	thread, err := b.post(ctx, "/v1/threads", `{"messages":[{"role":"user","content":"What can you do?"}]}`)
	if err != nil {
		return runTimes{}, err
	}
	return b.runOn(ctx, assistant, thread)
}

// runOn streams one run on a thread to its end.
func (b *benchNode) runOn(ctx context.Context, assistant, thread string) (runTimes, error) {
	return b.streamTimes(ctx, "/v1/threads/"+thread+"/runs", fmt.Sprintf(`{"assistant_id":%q,"stream":true}`, assistant),
		"run", "thread.run.completed",
		"thread.run.failed", "thread.run.incomplete", "thread.run.expired", "thread.run.cancelled", "error")
}

// streamTimes posts a streaming create to path and reads its server-sent events to their end: the time to the first
// byte, and to the event named completed. An event named in failed ends it with an error; what names the object
// ("run", "response") in errors.
func (b *benchNode) streamTimes(ctx context.Context, path, body, what, completed string, failed ...string) (runTimes, error) {
	var t runTimes
	start := time.Now()
	resp, err := b.request(ctx, path, body)
	if err != nil {
		return t, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		return t, fmt.Errorf("create %s: %d %s", what, resp.StatusCode, raw)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.Peek(1); err != nil {
		return t, fmt.Errorf("read stream: %w", err)
	}
	t.firstByte = time.Since(start)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			if t.completed == 0 {
				return t, fmt.Errorf("stream ended before the %s did: %w", what, err)
			}
			return t, nil
		}
		name, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("event: "))
		switch {
		case !ok:
		case string(name) == completed:
			t.completed = time.Since(start)
		case slices.Contains(failed, string(name)):
			data, _ := br.ReadString('\n')
			return t, fmt.Errorf("%s ended with %s: %s", what, name, strings.TrimSpace(data))
		case string(name) == "done":
			if t.completed == 0 {
				return t, fmt.Errorf("stream done before the %s completed", what)
			}
			// Read the stream to its end, as an SDK does: a response closed unread also closes its connection,
			// and every request would then pay for a new one.
			if _, err := io.Copy(io.Discard, br); err != nil {
				return t, fmt.Errorf("read stream past done: %w", err)
			}
			return t, nil
		}
	}
}

// concurrentRuns keeps `threads` threads busy with one run after another for d, and counts the runs completed.
func (b *benchNode) concurrentRuns(ctx context.Context, assistant string, threads int, d time.Duration) (int64, time.Duration, error) {
	ids := make([]string, threads)
	for i := range ids {
		id, err := b.post(ctx, "/v1/threads", `{"messages":[{"role":"user","content":"What can you do?"}]}`)
		if err != nil {
			return 0, 0, err
		}
		ids[i] = id
	}
	return keepBusy(len(ids), d, func(i int) error {
		_, err := b.runOn(ctx, assistant, ids[i])
		return err
	})
}

// keepBusy runs n clients for d, each calling call (with its index) one call after another, and counts the calls
// that succeeded. The first error ends its client and is returned once all have stopped.
func keepBusy(n int, d time.Duration, call func(i int) error) (int64, time.Duration, error) {
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	start := time.Now()
	deadline := start.Add(d)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if err := call(i); err != nil {
					errs <- err
					return
				}
				done.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case err := <-errs:
		return 0, 0, err
	default:
	}
	return done.Load(), elapsed, nil
}

// offlineModelTime times the offline model on the prompt the benchmark's runs send it.
func offlineModelTime(ctx context.Context, n int) ([]time.Duration, error) {
	m := offline.New(nil)
	req := llm.Request{Model: "bench", Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: "Answer."}, {Role: llm.RoleUser, Content: "What can you do?"}}}
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		start := time.Now()
		if _, err := m.Complete(ctx, req, func(llm.Delta) {}); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}
