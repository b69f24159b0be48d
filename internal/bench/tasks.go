package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/contrailhq/contrail/domain/execution"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/workflow"
)

// TasksOptions sizes the task engine benchmark.
type TasksOptions struct {
	// Dir is an empty directory for the node's data.
	Dir string
	// Executions of the 10-step task, InFlight of them at once.
	Executions int
	InFlight   int
	// Items and Parallelism size the map-reduce.
	Items       int
	Parallelism int
}

// tenSteps is the task: 10 sequential evaluate steps adding one to a number.
const tenSteps = `{"name":"ten","main":[` +
	`{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},` +
	`{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},` +
	`{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},{"evaluate":{"n":"$ _.n + 1"}},` +
	`{"evaluate":{"n":"$ _.n + 1"}}]}`

// Tasks measures the task engine on a whole node in-process: executions created over HTTP, their end seen on the
// log. Every step is a durable event appended by the stepper, a consumer of the log. The baseline is raw JetStream
// publishing the same number of events one at a time (with the headers an append sends) in the same run.
func Tasks(ctx context.Context, o TasksOptions, progress func(string)) (Report, error) {
	if o.Executions == 0 {
		o.Executions = 200
	}
	if o.InFlight == 0 {
		o.InFlight = 50
	}
	if o.Items == 0 {
		o.Items = 1000
	}
	if o.Parallelism == 0 {
		o.Parallelism = 100
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
	rep := Report{Title: fmt.Sprintf("contrail bench tasks: a task of 10 evaluate steps, %d executions with %d in flight; "+
		"a map-reduce over %d items with parallelism %d; one in-process node, executions created over HTTP", o.Executions, o.InFlight, o.Items, o.Parallelism)}

	w, err := newEndWatcher(ctx, node)
	if err != nil {
		return rep, err
	}
	defer w.stop()
	agent, err := node.julepPost(ctx, "/julep/agents", `{"name":"bench"}`)
	if err != nil {
		return rep, err
	}
	ten, err := node.julepPost(ctx, "/julep/agents/"+agent+"/tasks", tenSteps)
	if err != nil {
		return rep, err
	}
	// Warm up (consumers, the task's parse) before measuring.
	for i := 0; i < 10; i++ {
		if _, err := w.run(ctx, node, ten, `{"input":{"n":0}}`); err != nil {
			return rep, fmt.Errorf("warm up: %w", err)
		}
	}

	step("executions of 10 steps one after another")
	var alone []time.Duration
	for i := 0; i < 50; i++ {
		d, err := w.run(ctx, node, ten, `{"input":{"n":0}}`)
		if err != nil {
			return rep, err
		}
		alone = append(alone, d)
	}

	step(fmt.Sprintf("%d executions of 10 steps, %d at once", o.Executions, o.InFlight))
	lat := make([]time.Duration, o.Executions)
	errc := make(chan error, o.Executions)
	sem := make(chan struct{}, o.InFlight)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < o.Executions; i++ {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			d, err := w.run(ctx, node, ten, `{"input":{"n":0}}`)
			if err != nil {
				errc <- err
				return
			}
			lat[i] = d
		}()
	}
	wg.Wait()
	wall := time.Since(start)
	select {
	case err := <-errc:
		return rep, err
	default:
	}
	steps := 10 * o.Executions
	transitions := 11 * o.Executions // init, 9 steps, and the last step's finish

	step("raw JetStream, the same number of events")
	rig, err := NewRig(ctx, o.Dir+"/raw", 200, false)
	if err != nil {
		return rep, err
	}
	raw, err := rig.RawSyncPublish(ctx, transitions, "t")
	rig.Close()
	if err != nil {
		return rep, err
	}
	stepsFig := Figure{Name: "steps", Value: float64(steps) / wall.Seconds(), Unit: "steps/s",
		Note: fmt.Sprintf("%d executions x 10 steps in %s; each execution appends %d transitions; the Temporal dev server (SQLite, this machine, from the issue) ran this task at 305 steps/s with an activity per step, 1,281 with local activities", o.Executions, wall.Round(time.Millisecond), 11)}
	transFig := rate("transitions (durable events appended by the engine)", transitions, wall, raw)
	transFig.Note = "baseline: raw JetStream sync publishes of as many events, one at a time with the headers an append sends, on a fresh server in the same run"
	rep.Figures = append(rep.Figures, stepsFig, transFig,
		Figure{Name: fmt.Sprintf("execution create -> succeeded, %d in flight, p50", o.InFlight), Value: ms(Percentile(lat, 50)), Unit: "ms",
			Note: "from sending POST /julep/tasks/{id}/executions to the finish transition seen on the log; Temporal: p50 1.0 s"},
		Figure{Name: fmt.Sprintf("execution create -> succeeded, %d in flight, p99", o.InFlight), Value: ms(Percentile(lat, 99)), Unit: "ms"},
		Figure{Name: "execution create -> succeeded, one at a time, p50", Value: ms(Percentile(alone, 50)), Unit: "ms",
			Note: "50 executions one after another: the latency without queueing behind other executions"},
		Figure{Name: "execution create -> succeeded, one at a time, p99", Value: ms(Percentile(alone, 99)), Unit: "ms"},
	)

	step(fmt.Sprintf("map-reduce over %d items, parallelism %d", o.Items, o.Parallelism))
	mr := fmt.Sprintf(`{"name":"mr","main":[{"over":"$ list(range(%d))","map":{"evaluate":{"sq":"$ _ * _"}},"reduce":"$ results + _.sq","initial":0,"parallelism":%d}]}`,
		o.Items, o.Parallelism)
	mrTask, err := node.julepPost(ctx, "/julep/agents/"+agent+"/tasks", mr)
	if err != nil {
		return rep, err
	}
	var best time.Duration
	var out json.RawMessage
	for i := 0; i < 3; i++ {
		d, err := w.run(ctx, node, mrTask, `{"input":{}}`)
		if err != nil {
			return rep, err
		}
		if best == 0 || d < best {
			best = d
		}
	}
	want := 0
	for i := 0; i < o.Items; i++ {
		want += i * i
	}
	if out = w.lastOutput(); strings.TrimSpace(string(out)) != fmt.Sprint(want) {
		return rep, fmt.Errorf("the map-reduce gave %s, want %d", out, want)
	}
	rep.Figures = append(rep.Figures, Figure{Name: fmt.Sprintf("map-reduce over %d items, create -> succeeded (best of 3)", o.Items),
		Value: ms(best), Unit: "ms",
		Note: fmt.Sprintf("each item a branch: init_branch, its step's finish_branch; %d transitions in all", 2*o.Items+2)})
	return rep, nil
}

// julepPost creates a Julep object and returns its ID (Julep answers a create 201).
func (b *benchNode) julepPost(ctx context.Context, path, body string) (string, error) {
	return b.create(ctx, path, body, http.StatusCreated)
}

// endWatcher follows the log's transitions and tells each waiter when its execution has ended.
type endWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	ends   map[string]chan endSeen
	early  map[string]endSeen
	output json.RawMessage
}

type endSeen struct {
	status workflow.Status
	output json.RawMessage
	err    string
}

func newEndWatcher(ctx context.Context, node *benchNode) (*endWatcher, error) {
	fctx, cancel := context.WithCancel(ctx)
	w := &endWatcher{cancel: cancel, done: make(chan struct{}), ends: map[string]chan endSeen{}, early: map[string]endSeen{}}
	store := node.p.Store
	from, err := lastSeq(ctx, node)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(w.done)
		for e, err := range store.Follow(fctx, from+1, store.Names().TypeFilter("execution.transitioned")) {
			if err != nil {
				return
			}
			d, ok := e.Event.(events.ExecutionTransitioned)
			if !ok || !workflow.Status(d.Status).Terminal() {
				continue
			}
			var v execution.Execution
			v.Status = workflow.Status(d.Status)
			v.FoldView(e)
			w.seen(events.JulepPublicID(e.AggregateID), endSeen{status: v.Status, output: v.Output, err: v.Error})
		}
	}()
	return w, nil
}

func lastSeq(ctx context.Context, node *benchNode) (uint64, error) {
	s, err := node.p.JS.Stream(ctx, node.p.Layout.Names.EventsStream())
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

func (w *endWatcher) seen(id string, s endSeen) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.output = s.output
	if ch, ok := w.ends[id]; ok {
		ch <- s
		delete(w.ends, id)
		return
	}
	w.early[id] = s
}

func (w *endWatcher) lastOutput() json.RawMessage {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.output
}

// run creates an execution and waits for its end; it returns the time from the request to the end.
func (w *endWatcher) run(ctx context.Context, node *benchNode, task, body string) (time.Duration, error) {
	start := time.Now()
	id, err := node.julepPost(ctx, "/julep/tasks/"+task+"/executions", body)
	if err != nil {
		return 0, err
	}
	ch := make(chan endSeen, 1)
	w.mu.Lock()
	if s, ok := w.early[id]; ok {
		delete(w.early, id)
		ch <- s
	} else {
		w.ends[id] = ch
	}
	w.mu.Unlock()
	select {
	case s := <-ch:
		if s.status != workflow.StatusSucceeded {
			return 0, fmt.Errorf("execution %s %s: %s", id, s.status, s.err)
		}
		return time.Since(start), nil
	case <-time.After(time.Minute):
		return 0, fmt.Errorf("execution %s did not end within a minute", id)
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

func (w *endWatcher) stop() {
	w.cancel()
	<-w.done
}
