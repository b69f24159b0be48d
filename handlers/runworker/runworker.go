// Package runworker is the run worker of the Assistants API (seed 003's worker queue for run objects): it drives
// each run from queued through its turns (a model call each, recorded as steps and messages) to requires_action or
// an end, and finishes cancellations.
//
// One worker drives a run at a time across every node: a driver holds the run's lock (a key that expires in a KV
// bucket) and, holding it, goes on until the run needs nothing more; whoever fails to take the lock leaves the run
// to the holder, who looks at the run again after letting go. Everything a driver records is decided on the thread
// aggregate with optimistic concurrency and derived IDs (see commands/turns.go), so a run can be driven again from
// any point after a crash. The handler acknowledges an event once a driver has the run, so after a crash it is the
// timeout sweeper that hands a run left active with no driver to a worker again (and expires it if nobody can
// finish it in time).
//
// It imports events, domain/thread, llm, runlive, handlers/turn (the turn machinery it shares with the Responses
// model loop, handlers/responder) and lease (the rule of a key held by renewals, which its run locks share with the
// leases); never a face, a command or a read model (what it asks of them is Recorder, FileSearcher, CodeRunner).
package runworker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Recorder is what the worker asks of the run commands (commands.Turns): the thread as it stands, and the record
// of each step of a run.
type Recorder interface {
	Load(ctx context.Context, threadID string) (*thread.State, error)
	LoadAt(ctx context.Context, threadID string, atLeast uint64) (*thread.State, error)
	NeedsWork(ctx context.Context, threadID, runID string) (bool, error)
	Start(ctx context.Context, ref thread.RunRef, t *thread.State) (*thread.State, error)
	RecordTurn(ctx context.Context, ref thread.RunRef, t *thread.State, turn string, res thread.TurnResult) (*thread.State, error)
	RecordServerTools(ctx context.Context, ref thread.RunRef, t *thread.State, turn string, calls []events.ToolCall, outputs []events.ToolOutput, usage events.TokenUsage) (*thread.State, error)
	StartServerTools(ctx context.Context, ref thread.RunRef, t *thread.State, turn string, calls []events.ToolCall, usage events.TokenUsage) (*thread.State, bool, error)
	Fail(ctx context.Context, ref thread.RunRef, t *thread.State, turn, code, message string) (*thread.State, error)
	Incomplete(ctx context.Context, ref thread.RunRef, t *thread.State, turn, reason string) (*thread.State, error)
	FinishCancel(ctx context.Context, ref thread.RunRef, t *thread.State) (*thread.State, error)
}

// Config wires a Worker.
type Config struct {
	Runs Recorder
	// Models answers the turns: the router, which resolves each run's model.
	Models llm.Provider
	// Locks is the KV bucket of run locks; its TTL is how long a dead worker keeps a run.
	Locks   jetstream.KeyValue
	LockTTL time.Duration
	// NC publishes the live frames of a turn on the thread's live subject, and watches the thread's events.
	NC    *nats.Conn
	Names natsx.Names
	// Holder names this node in locks: each lock's value is it and a token of that taking (LockNode reads it back).
	Holder string
	// MaxRuns bounds the runs this node drives at once (default 64); past it the handler waits for a slot.
	MaxRuns int
	// Files runs file_search calls; Code runs code_interpreter calls (nil: the node has no sandbox, and the
	// commands refuse the tool).
	Files  FileSearcher
	Code   CodeRunner
	Now    func() time.Time
	Logger *slog.Logger
	// Images reads the image files messages show (nil: the model reads a note in place of each).
	Images turn.ImageFiles
}

// Worker drives runs.
type Worker struct {
	cfg    Config
	slots  chan struct{}
	wg     sync.WaitGroup
	ctx    context.Context
	cancel context.CancelFunc
	stops  *stops
	// driving holds the runs whose lock this worker holds (Kick leaves them alone).
	driving *driving
}

// New returns a worker listening for the events that stop a turn; register its Handler and Close it on stop.
func New(cfg Config) (*Worker, error) {
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = 64
	}
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = 3 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	st, err := listenForStops(cfg.NC, cfg.Names)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Worker{cfg: cfg, slots: make(chan struct{}, cfg.MaxRuns), ctx: ctx, cancel: cancel, stops: st, driving: newDriving()}, nil
}

// Handler is the run worker's reaction to the log: a run queued (created, or given its tool outputs) or asked to
// cancel. The handler only hands the run to a driver and returns, so that a long model call never holds up the
// events of other runs behind it on the shared consumer.
func (w *Worker) Handler() runtime.Handler {
	return runtime.Handler{
		Name:        "run_worker",
		EventTypes:  []string{"thread.run_created", "thread.run_tool_outputs_submitted", "thread.run_cancelling"},
		Handle:      w.handle,
		Concurrency: 2,
		// A delivery waits here only for a free driver (heartbeats keep it meanwhile); one a dead node held comes
		// back after this, not after the runtime's default 30 s.
		AckWait: 3 * time.Second,
	}
}

func (w *Worker) handle(ctx context.Context, e events.Envelope) error {
	ref := thread.RunRef{Account: e.Account, ThreadID: e.AggregateID, RunID: thread.RunOf(e.Event), Seq: e.Sequence}
	if ref.RunID == "" {
		return nil
	}
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	case <-w.ctx.Done():
		return errors.New("run worker stopping")
	}
	w.start(ref)
	return nil
}

// Kick drives a run if this node has a free slot (the sweeper's way to take over a run nobody drives). It never
// waits. It reports false, and does nothing, for a run this node drives already (holds its lock): a long model call
// leaves a run unchanged past the sweeper's stall, and such a kick would only be refused the lock. A run whose lock
// another node holds, live or dead, is not known here: it is kicked, and a dead node's is taken once its lock expires.
func (w *Worker) Kick(ref thread.RunRef) bool {
	if w.driving.has(ref.RunID) {
		return false
	}
	select {
	case w.slots <- struct{}{}:
	default:
		return false
	}
	w.start(ref)
	return true
}

func (w *Worker) start(ref thread.RunRef) {
	if w.ctx.Err() != nil {
		<-w.slots
		return
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer func() { <-w.slots }()
		w.drive(w.ctx, ref)
	}()
}

// Close stops driving: it waits up to ctx for the runs in progress to finish their turn, then cancels them. A
// cancelled turn records nothing; the run is taken over by a worker elsewhere (or after a restart).
func (w *Worker) Close(ctx context.Context) {
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	w.cancel()
	<-done
	w.stops.close()
}

// Abort cancels every run in progress without waiting: what a crash does (tests of crash safety use it).
func (w *Worker) Abort() { w.cancel() }

// maxFailures bounds how often a driver retries a run whose steps fail (NATS trouble); the sweeper kicks the run
// again later.
const maxFailures = 5

// drive takes the run's lock and works on the run until it needs nothing more. After letting go of the lock it
// looks once more: an event that came while it held the lock found the lock taken and left the run to it. A run
// that ended needs neither: its lock is left to expire.
func (w *Worker) drive(ctx context.Context, ref thread.RunRef) {
	log := w.cfg.Logger.With("thread", ref.ThreadID, "run", ref.RunID)
	for failures := 0; ctx.Err() == nil; {
		l, ok, err := tryLock(ctx, w.cfg.Locks, ref.RunID, w.cfg.Holder, w.cfg.LockTTL)
		if err != nil {
			log.Warn("run worker: lock", "err", err)
			return
		}
		if !ok {
			return
		}
		undrive := w.driving.add(ref.RunID)
		ended, err := w.work(l.ctx, ref)
		undrive()
		if err == nil && ended {
			// Nothing can hand an ended run back, so nobody will want its lock: it expires by itself, and there is
			// nothing to look at again. (Deleting it and looking cost two of a run's round trips to the log.)
			l.leave()
			return
		}
		l.release()
		if err != nil && ctx.Err() == nil {
			failures++
			log.Warn("run worker: step failed", "failures", failures, "err", err)
			if failures >= maxFailures {
				return
			}
			sleep(ctx, time.Duration(failures)*200*time.Millisecond)
			continue
		}
		if needs, err := w.cfg.Runs.NeedsWork(ctx, ref.ThreadID, ref.RunID); err != nil || !needs {
			return
		}
	}
}

// work moves the run on, step by step, until it needs nothing more or ctx ends (the lock lost, the node stopping).
// It reads the thread once and then moves on the state its own appends return. It hears of the thread's events
// that may end the run (stops) as they are published, so that a cancel or an expiry that comes while it works
// stops the model call at once; it listens before it reads the thread, so no such event after the read goes
// unheard.
func (w *Worker) work(ctx context.Context, ref thread.RunRef) (ended bool, err error) {
	stop := newSignal()
	defer w.stops.add(ref.ThreadID, stop)()
	// The images are read once for all the turns of this pass: no message can be added to a thread while its run
	// is active, and a turn that only follows a tool's output would read the same files again (up to 50 MiB).
	var images turn.Shown // nil until read
	t, err := w.cfg.Runs.LoadAt(ctx, ref.ThreadID, ref.Seq)
	if err != nil {
		return false, err
	}
	for err == nil && ctx.Err() == nil && t.NeedsWork(ref.RunID) {
		r := t.Runs[ref.RunID]
		switch r.Status {
		case events.RunStatusQueued:
			t, err = w.cfg.Runs.Start(ctx, ref, t)
		case events.RunStatusCancelling:
			t, err = w.cfg.Runs.FinishCancel(ctx, ref, t)
		case events.RunStatusInProgress:
			t, err = w.turn(ctx, ref, t, r, stop, &images)
		}
	}
	if err != nil {
		return false, err
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	return t.Ended(ref.RunID), nil
}

// turn asks the model once and records its answer, returning the thread after. A turn that recorded its first
// event before an interruption is finished from the log without asking again.
func (w *Worker) turn(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, stop *signal, images *turn.Shown) (*thread.State, error) {
	step := r.Turn
	if calls, usage, ok := t.InterruptedCalls(r); ok {
		// Code started in this turn and never recorded as ended: it may have run, so it is not run again.
		calls, outputs := thread.Interrupt(calls)
		return w.cfg.Runs.RecordServerTools(ctx, ref, t, step, calls, outputs, usage)
	}
	if res, ok := t.RecordedTurn(r); ok {
		return w.cfg.Runs.RecordTurn(ctx, ref, t, step, res)
	}
	if stop.fired() {
		// Something that may end the run came in after the thread was read: read it again and see.
		stop.reset()
		return w.afterStop(ctx, ref, t)
	}
	if tool, ok := fileSearchOf(r); ok && r.Model == llm.ProviderOffline && w.cfg.Files != nil {
		return w.offlineFileSearch(ctx, ref, t, r, step, tool)
	}
	plan, err := w.plan(ctx, t, r, images)
	if err != nil {
		return nil, fmt.Errorf("plan turn of run %s: %w", ref.RunID, err)
	}
	if plan.incomplete != "" {
		return w.cfg.Runs.Incomplete(ctx, ref, t, step, plan.incomplete)
	}

	pub := &publisher{nc: w.cfg.NC, subject: w.cfg.Names.LiveSubject("thread", ref.ThreadID), run: r, turn: step,
		after: t.Seq, at: w.cfg.Now().Unix(), logger: w.cfg.Logger}
	resp, err := turn.Ask(ctx, w.cfg.Models, plan.req, stop.done(), pub.delta)
	pub.flush()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err() // the node is stopping or the lock was lost: someone else finishes the turn
	case errors.Is(err, turn.ErrStopped):
		stop.reset()
		return w.afterStop(ctx, ref, t) // the run was cancelled or expired: see how it stands
	case err != nil:
		w.cfg.Logger.Warn("run worker: model call failed", "run", ref.RunID, "model", r.Model, "err", err)
		return w.cfg.Runs.Fail(ctx, ref, t, step, turn.FailureCode(err), err.Error())
	}
	usage := turn.Usage(resp.Usage)
	if tool, ok := fileSearchOf(r); ok && w.cfg.Files != nil {
		// Searches are answered here and the run goes on; a function called alongside them is asked again, if
		// still wanted, once the model has read what the search found.
		var searches []llm.ToolCall
		for _, c := range resp.ToolCalls {
			if c.Name == turn.FileSearch {
				searches = append(searches, c)
			}
		}
		if len(searches) > 0 {
			return w.fileSearch(ctx, ref, t, r, step, tool, searches, usage)
		}
	}
	if hasTool(r, turn.CodeInterpreter) && w.cfg.Code != nil {
		var code []llm.ToolCall
		for _, c := range resp.ToolCalls {
			if c.Name == turn.CodeInterpreter {
				code = append(code, c)
			}
		}
		if len(code) > 0 {
			return w.runCode(ctx, ref, t, r, step, code, usage)
		}
	}
	res := thread.TurnResult{Text: resp.Text, Usage: usage, Annotations: citations(resp.Text, searchCalls(t, r))}
	if len(resp.ToolCalls) == 0 {
		res.Images = codeImages(t, r)
		res.Annotations = append(res.Annotations, filePaths(resp.Text, t, r)...)
		slices.SortFunc(res.Annotations, func(a, b events.Annotation) int { return cmp.Compare(a.StartIndex, b.StartIndex) })
	}
	for i, c := range resp.ToolCalls {
		res.ToolCalls = append(res.ToolCalls, events.ToolCall{ID: callID(step, i, c.ID), Type: "function", Name: c.Name, Arguments: c.Arguments})
	}
	if turn.CutShort(resp, plan.capped) && len(res.ToolCalls) == 0 {
		res.Incomplete = "max_completion_tokens"
	}
	return w.cfg.Runs.RecordTurn(ctx, ref, t, step, res)
}

// signal is a flag the thread's events raise: something came that may end the run.
type signal struct {
	mu sync.Mutex
	ch chan struct{}
	up bool
}

func newSignal() *signal { return &signal{ch: make(chan struct{})} }

func (s *signal) fire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		s.up = true
		close(s.ch)
	}
}

func (s *signal) fired() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.up
}

func (s *signal) done() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

func (s *signal) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		s.up, s.ch = false, make(chan struct{})
	}
}

// afterStop reads the thread again after an event that may end the run was published. The signal comes as the
// event is published, a moment before the log stores it: the thread is read until it holds something newer than t
// (briefly; past that, the run goes on as read, and its next append meets the newer event as a conflict).
func (w *Worker) afterStop(ctx context.Context, ref thread.RunRef, t *thread.State) (*thread.State, error) {
	for attempt := 0; ; attempt++ {
		now, err := w.cfg.Runs.Load(ctx, ref.ThreadID)
		if err != nil || now.Version.Seq > t.Version.Seq || attempt == 20 {
			return now, err
		}
		sleep(ctx, 5*time.Millisecond)
	}
}

// callID is the ID a tool call is known by: the model's, or one derived from the turn when the model gave none.
func callID(step string, index int, modelID string) string {
	return turn.CallID(modelID, step, fmt.Sprintf("call-%d", index))
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
