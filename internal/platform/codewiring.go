package platform

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/sandbox"
	"github.com/contrailhq/contrail/projections"
)

// codeSandbox is the node's sandbox for code_interpreter, made the first time it is needed: most nodes never run
// code, and making one checks the machine (bubblewrap, python3) by starting a sandbox.
type codeSandbox struct {
	p *Platform
	// cfg is where bubblewrap and python are; the zero value is Debian's paths.
	cfg    sandbox.Config
	mu     sync.Mutex
	made   bool
	runner *sandbox.Runner
	pool   *sandbox.Pool
	err    error
	// stopWatch ends watchContainers; watchDone is closed when it has.
	stopWatch context.CancelFunc
	watchDone chan struct{}
	// deletions hears containers' deletions (nil: it could not subscribe, and the sweep alone closes them).
	deletions *nats.Subscription
}

func (s *codeSandbox) get() (*sandbox.Pool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.made {
		s.made = true
		cfg := s.cfg
		cfg.Logger = s.p.Logger.With("component", "sandbox")
		cfg.Limits = sandbox.Limits{WallTime: s.p.Config.CodeTimeout}
		r, err := sandbox.New(context.Background(), cfg)
		if err != nil {
			s.err = err
			s.p.Logger.Warn("code_interpreter is not available on this node", "why", err)
		} else {
			s.runner = r
			s.pool = sandbox.NewPool(r, sandbox.PoolConfig{})
			s.watchContainers(s.pool)
		}
	}
	if s.pool == nil && s.err == nil {
		return nil, errs.E(errs.Unavailable, "the node is stopping")
	}
	return s.pool, s.err
}

// release ends the warm sandbox of account's session on this node, if it has one, and says why in the log.
func (s *codeSandbox) release(account, session, why string) {
	s.mu.Lock()
	pool := s.pool
	s.mu.Unlock()
	if pool != nil {
		s.close(pool, account, session, why)
	}
}

// close ends the warm sandbox of account's session in pool and logs why, once, when there was one.
func (s *codeSandbox) close(pool *sandbox.Pool, account, session, why string) {
	if pool.CloseFor(account, session) {
		s.p.Logger.Info("closed a warm code sandbox", "component", "sandbox", "account", account, "session", session, "why", why)
	}
}

// Why a container's warm sandbox was closed, for the log.
const (
	whyContainerDeleted = "its container was deleted"
	whyContainerExpired = "its container expired"
)

// watchContainers closes the warm sandboxes of containers that are gone, rather than keep them until the pool's
// idle close: at once when a container's deletion is published (every node hears it, the one holding its sandbox
// among them), and, every Config.ContainerSweep, those whose container expired, or was deleted while this node did
// not hear it. Called once, with s.mu held.
func (s *codeSandbox) watchContainers(pool *sandbox.Pool) {
	ctx, cancel := context.WithCancel(context.Background())
	s.stopWatch, s.watchDone = cancel, make(chan struct{})
	names := s.p.Layout.Names
	var sub *nats.Subscription
	if s.p.NC != nil {
		var err error
		// The republished deletions: the log stored them (an append it refused, say on a sequence conflict, is
		// never heard here and closes nothing).
		sub, err = s.p.NC.Subscribe(names.CommittedSubject("container", "*", "deleted"), func(m *nats.Msg) {
			var env struct {
				Account     string `json:"account"`
				AggregateID string `json:"aggregate_id"`
			}
			if json.Unmarshal(m.Data, &env) != nil || !ids.Valid(ids.Container, env.AggregateID) {
				return
			}
			s.close(pool, env.Account, env.AggregateID, whyContainerDeleted)
		})
		if err != nil {
			// The sweep still closes them, later.
			s.p.Logger.Warn("cannot hear containers' deletions; their sandboxes close at the next sweep", "err", err)
		}
		s.deletions = sub
	}
	every := s.p.Config.ContainerSweep // positive: Config.Validate refuses any other
	go func() {
		defer close(s.watchDone)
		if sub != nil {
			defer func() { _ = sub.Unsubscribe() }()
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			s.sweepContainers(ctx, pool)
		}
	}()
}

// sweepContainers closes the warm sandboxes of pool whose container expired or was deleted. An expired container's
// sandbox in a call is left to the call (one began before the container expired) and closed at a later sweep.
func (s *codeSandbox) sweepContainers(ctx context.Context, pool *sandbox.Pool) {
	containers := s.p.Commands.Containers
	for _, w := range pool.Warm() {
		if !ids.Valid(ids.Container, w.Key) {
			continue // a thread's (the Assistants API): it lives as long as the thread
		}
		c, err := containers.Get(ctx, w.Account, w.Key, eventstore.Fresh)
		switch {
		case errs.CodeOf(err) == errs.NotFound:
			s.close(pool, w.Account, w.Key, whyContainerDeleted)
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			s.p.Logger.Warn("check a warm code sandbox's container", "container", w.Key, "err", err)
		case c.Expired(containers.Now()) && !w.InCall:
			s.close(pool, w.Account, w.Key, whyContainerExpired)
		}
	}
}

// WarmCodeSandboxes lists the warm code_interpreter sandboxes this node holds, by account and session (a container
// or a thread).
func (p *Platform) WarmCodeSandboxes() []sandbox.Warm {
	p.code.mu.Lock()
	pool := p.code.pool
	p.code.mu.Unlock()
	if pool == nil {
		return nil
	}
	return pool.Warm()
}

// available says why code cannot run here (nil: it can).
func (s *codeSandbox) available() error {
	_, err := s.get()
	return err
}

// codeStatus is what /readyz says of code_interpreter on this node.
type codeStatus struct {
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
}

// status says whether code can run here and, when it cannot (or can only in part), why. It never starts a
// sandbox: before the first call it checks only that bubblewrap and python3 are installed.
func (s *codeSandbox) status() codeStatus {
	if !s.mu.TryLock() {
		return codeStatus{Available: true, Reason: "the sandbox is being checked (the first code_interpreter call)"}
	}
	made, runner, pool, err := s.made, s.runner, s.pool, s.err
	s.mu.Unlock()
	switch {
	case err != nil:
		return codeStatus{Reason: errs.MessageOf(err)}
	case made && pool == nil:
		return codeStatus{Reason: "the node is stopping"}
	case made:
		if missing := runner.Missing(); len(missing) > 0 {
			return codeStatus{Available: true, Reason: "the sandbox's python lacks " + strings.Join(missing, ", ") +
				" (make deps-sandbox installs Debian's python3-numpy, python3-pandas and python3-matplotlib)"}
		}
		return codeStatus{Available: true}
	}
	if err := sandbox.Check(s.cfg); err != nil {
		return codeStatus{Reason: errs.MessageOf(err)}
	}
	return codeStatus{Available: true, Reason: "bubblewrap and python3 are installed; the first code_interpreter call " +
		"starts a sandbox and checks it"}
}

// shutdown ends the warm sandboxes.
func (s *codeSandbox) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.made = true
	if s.stopWatch != nil {
		s.stopWatch()
		<-s.watchDone
		s.stopWatch = nil
	}
	if s.pool != nil {
		s.pool.Shutdown()
		s.pool = nil
	}
}

// maxCodeInputs bounds the files one call gets (OpenAI allows 20 per assistant and per thread).
const maxCodeInputs = 40

// RunCode runs one code_interpreter call in the thread's warm sandbox.
func (s *codeSandbox) RunCode(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
	code, key string) (turn.CodeResult, error) {
	if _, err := s.get(); err != nil {
		return turn.CodeResult{}, err
	}
	ids := append(codeFileIDs(threadResources), attached...)
	// The assistant as the log has it: files given to it a moment before its run are in the call's /mnt/data,
	// whether or not its read model shows them yet (runAssistant).
	a, ok, err := s.p.runAssistant(ctx, account, assistantID)
	if err != nil {
		return turn.CodeResult{}, err
	}
	if ok {
		ids = append(ids, codeFileIDs(a.ToolResources)...)
	}
	return s.Exec(ctx, account, threadID, ids, nil, code, key)
}

// Exec runs code in the warm sandbox of session (a thread, a container) with the account's files fileIDs at
// /mnt/data, and without the files at stale (removed from a container: a warm sandbox may hold them still); the
// files it writes are saved as the account's files with IDs derived from key.
func (s *codeSandbox) Exec(ctx context.Context, account, session string, ids, stale []string, code, key string) (turn.CodeResult, error) {
	pool, err := s.get()
	if err != nil {
		return turn.CodeResult{}, err
	}
	lost, err := removeStale(ctx, pool, account, session, stale)
	if err != nil {
		return turn.CodeResult{}, err
	}
	if len(ids) > maxCodeInputs {
		ids = ids[:maxCodeInputs]
	}
	var inputs []sandbox.Input
	var bodies []io.Closer
	defer func() {
		for _, b := range bodies {
			_ = b.Close()
		}
	}()
	seen := map[string]bool{}
	for _, id := range ids {
		name, body, err := s.p.Commands.Files.Read(ctx, account, id)
		if errs.CodeOf(err) == errs.NotFound {
			continue // deleted since it was attached
		}
		if err != nil {
			return turn.CodeResult{}, err
		}
		bodies = append(bodies, body)
		name = path.Base(strings.ReplaceAll(name, "\\", "/"))
		if seen[name] || name == "." || name == "/" {
			continue
		}
		seen[name] = true
		inputs = append(inputs, sandbox.Input{Name: name, Reader: body})
	}
	res, err := pool.ExecFor(ctx, account, session, sandbox.Cell{Code: code, Inputs: inputs})
	if err != nil {
		return turn.CodeResult{}, err
	}
	if res.StateLost == "" {
		res.StateLost = lost // news the removal's cell took, for this call's
	}
	out := turn.CodeResult{Logs: res.StateLost}
	if out.Logs != "" {
		out.Logs = "[sandbox: " + out.Logs + "]\n"
	}
	out.Logs += res.Stdout + res.Stderr
	for _, f := range res.Files {
		id := "file-" + events.DeriveID(key, f.Name)
		// The run's answer names the file: the files read model shows it before the answer is recorded, so that a
		// client reading the answer can fetch the file. A model still behind past the wait does not fail the call:
		// the file is saved, and a read of it past the wait is answered from the log.
		saved, err := s.p.Commands.Files.SaveOutput(ctx, account, id, path.Base(f.Name), f.ContentType, f.Data)
		if _, err := s.p.Views.ShowsCommitted(ctx, saved, err, projections.Files{}); err != nil {
			return turn.CodeResult{}, fmt.Errorf("save %s: %w", f.Name, err)
		}
		if f.Image {
			out.Images = append(out.Images, id)
		} else {
			out.Files = append(out.Files, events.CodeFile{Path: sandbox.WorkDir + "/" + f.Name, FileID: id})
		}
	}
	for _, o := range res.Omitted {
		out.Logs += fmt.Sprintf("\n[file %s not kept: %s]", o.Name, o.Reason)
	}
	return out, nil
}

// removeStale removes the files at paths (under /mnt/data) from the warm sandbox of session, in a cell of its own
// before the call's: the model's code never sees files removed from its container, and its variables stay. It
// returns the StateLost news that cell took. A path outside /mnt/data is not touched. With no warm sandbox it runs
// nothing: the call starts a fresh one, whose /mnt/data holds only the call's inputs (a path removed from a
// container stays in its Stale list, so every later call that finds no warm sandbox would run the cell for nothing).
func removeStale(ctx context.Context, pool *sandbox.Pool, account, session string, paths []string) (string, error) {
	if len(paths) == 0 || !pool.Holds(account, session) {
		return "", nil
	}
	var in []string
	for _, p := range paths {
		if c := path.Clean(p); c == p && strings.HasPrefix(p, sandbox.WorkDir+"/") {
			in = append(in, p)
		}
	}
	if len(in) == 0 {
		return "", nil
	}
	// JSON strings are Python string literals; the loop leaves no name behind for the model's code.
	list, err := json.Marshal(in)
	if err != nil {
		return "", err
	}
	code := "for _contrail_stale in " + string(list) + ":\n    try:\n        __import__('os').remove(_contrail_stale)\n    except OSError:\n        pass\ndel _contrail_stale\n"
	res, err := pool.ExecFor(ctx, account, session, sandbox.Cell{Code: code})
	if err != nil {
		return "", fmt.Errorf("remove the files removed from the container: %w", err)
	}
	return res.StateLost, nil
}

// codeFileIDs reads tool_resources.code_interpreter.file_ids.
func codeFileIDs(toolResources json.RawMessage) []string {
	var tr struct {
		CodeInterpreter struct {
			FileIDs []string `json:"file_ids"`
		} `json:"code_interpreter"`
	}
	if len(toolResources) == 0 || json.Unmarshal(toolResources, &tr) != nil {
		return nil
	}
	return tr.CodeInterpreter.FileIDs
}
