package sweeper_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/runworker"
	"github.com/contrailhq/contrail/handlers/sweeper"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/llm/openai"
	"github.com/contrailhq/contrail/internal/natsx"
	"github.com/contrailhq/contrail/projections"
)

// TestARunThisNodeDrivesIsNotKicked: a run whose turn waits on its model for longer than the sweeper's stall is
// driven by this node's worker, which holds its lock: the sweep does not kick it. A run whose lock another node holds
// (a node that died, its lock not yet expired) is kicked as before, so that it is taken as soon as the lock goes.
func TestARunThisNodeDrivesIsNotKicked(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const ttl = 500 * time.Millisecond
	n := startRunsNode(ctx, t, ttl)
	srv, names, layout, logger, store, views, cmds := n.srv, n.names, n.layout, n.logger, n.store, n.views, n.cmds
	// The run locks outlive the test, so that the dead node's lock is still held when the sweep comes.
	if err := natsx.EnsureBucket(ctx, srv.JS, layout, natsx.BucketSpec{Name: "run_locks", TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	locks, err := srv.JS.KeyValue(ctx, names.Bucket("run_locks"))
	if err != nil {
		t.Fatal(err)
	}

	// The model answers once the test lets it: until then the run's turn waits on it.
	model := llmtest.NewServer(t)
	asked := make(chan struct{}, 1)
	release := make(chan struct{})
	model.HandleFunc(func(llmtest.Request) llmtest.Reply {
		select {
		case asked <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return llmtest.Text("done")
	})
	models, err := openai.New(model.URL, "sk-test", nil, logger)
	if err != nil {
		t.Fatal(err)
	}
	worker, err := runworker.New(runworker.Config{Runs: cmds.Turns, Models: models, Locks: locks, LockTTL: time.Minute,
		NC: srv.NC, Names: names, Holder: "node-a", Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Config{
		Connect: func() (*nats.Conn, error) { return natsx.ConnectEmbedded(srv.NS, "handlers") },
		JS:      srv.JS, Store: store, Names: names, CloseTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Add(worker.Handler()); err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
		// A run still driven (the test failed before its model answered) is cancelled, not waited for.
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		worker.Close(cctx)
	}()
	wg.Go(func() {
		if err := rt.Run(rctx, nil); err != nil {
			t.Error(err)
		}
	})

	newRun := func(threadID, runID string) {
		t.Helper()
		if _, err := store.Append(ctx, events.Ref{Type: "thread", ID: threadID}, events.Version{}, events.Meta{Account: "acct_1"},
			events.ThreadCreated{},
			events.MessageCreated{MessageID: "msg_" + threadID, Role: "user", Content: []events.ContentPart{{Type: "text", Text: "hi"}}, Status: "completed"},
			events.RunCreated{RunID: runID, AssistantID: "asst_1", Model: "gpt-test", ExpiresAt: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	// A run this node's worker drives: it starts, and its turn waits on the model.
	const driven, orphan = "run_driven", "run_orphan"
	newRun("thread_driven", driven)
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the model was never asked")
	}
	// A run a dead node took: its lock is held by a node that no longer renews it.
	if _, err := locks.Create(ctx, "run."+orphan, []byte("node-dead")); err != nil {
		t.Fatal(err)
	}
	newRun("thread_orphan", orphan)

	var mu sync.Mutex
	var kicked []string
	const stalled = 200 * time.Millisecond
	s := sweeper.New(sweeper.Config{Runs: cmds.Turns, Active: projections.ActiveRuns{Views: views}, Stalled: stalled, Logger: logger,
		Kick: func(ref thread.RunRef) bool {
			if !worker.Kick(ref) {
				return false
			}
			mu.Lock()
			defer mu.Unlock()
			kicked = append(kicked, ref.RunID)
			return true
		}})

	// Both runs are stalled as the sweeper sees them: the driven one in progress, the orphan queued, neither changed
	// for longer than the stall.
	for {
		active, err := projections.ActiveRuns{Views: views}.ActiveRuns(ctx)
		if err != nil {
			t.Fatal(err)
		}
		status := map[string]string{}
		for _, a := range active {
			if time.Since(a.Changed) >= stalled {
				status[a.Ref.RunID] = a.Status
			}
		}
		if status[driven] == events.RunStatusInProgress && status[orphan] == events.RunStatusQueued {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the runs as the sweeper sees them, stalled: %v", status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, err := s.Sweep(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(kicked)
	mu.Unlock()
	if !slices.Equal(got, []string{orphan}) || res.Kicked != 1 {
		t.Fatalf("kicked %v (%d), want only %s: %s is driven here", got, res.Kicked, orphan, driven)
	}
	// The sweep came while the worker drove the run: the model had not answered, and the lock is this node's.
	if th, err := cmds.Threads.Load(ctx, "thread_driven"); err != nil || th.Runs[driven].Status != events.RunStatusInProgress {
		t.Fatalf("the driven run at the sweep: %v", err)
	}
	if e, err := locks.Get(ctx, "run."+driven); err != nil || runworker.LockNode(e.Value()) != "node-a" {
		t.Fatalf("the driven run's lock: %v", err)
	}

	// Its driver finishes it once the model answers.
	close(release)
	for {
		th, err := cmds.Threads.Load(ctx, "thread_driven")
		if err != nil {
			t.Fatal(err)
		}
		if th.Runs[driven].Status == events.RunStatusCompleted {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the driven run is %s, not completed", th.Runs[driven].Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
