package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

// PoolConfig bounds a Pool; zero fields take the defaults.
type PoolConfig struct {
	// Idle is how long a warm sandbox is kept without a call before it is closed (default 10 minutes).
	Idle time.Duration
	// Max is how many warm sandboxes may live at once (default 8). When a new key needs one and none is free,
	// the one idle the longest is closed; when all are in a call, the new call is refused (errs.Unavailable).
	Max int
}

// rememberLost is how long a Pool remembers why a key's sandbox ended, to tell the key's next call.
const rememberLost = 24 * time.Hour

// Pool keeps one warm sandbox per key: successive calls with a key run in the same python, with the variables and
// files earlier calls left, one call at a time. A key is one conversation (one thread): a sandbox is never used for
// two keys. A sandbox that ended (a limit, the timeout, a crash) is replaced on the key's next call, and that
// call's Result.StateLost says so.
type Pool struct {
	r    *Runner
	idle time.Duration
	max  int

	mu      sync.Mutex
	entries map[string]*entry
	live    int // kernels running or starting
	closed  bool

	stop chan struct{}
	done chan struct{}
}

type entry struct {
	run sync.Mutex // one call at a time for the key; held while its sandbox starts

	// Guarded by Pool.mu.
	k        *Kernel
	lost     string // why the key's last sandbox ended, for its next call
	lastUsed time.Time
	users    int // calls holding or waiting for run
}

// NewPool returns a Pool making its sandboxes with r. Close it to end them all.
func NewPool(r *Runner, cfg PoolConfig) *Pool {
	if cfg.Idle <= 0 {
		cfg.Idle = 10 * time.Minute
	}
	if cfg.Max <= 0 {
		cfg.Max = 8
	}
	p := &Pool{r: r, idle: cfg.Idle, max: cfg.Max, entries: map[string]*entry{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.janitor()
	return p
}

// Exec runs a cell in key's warm sandbox, starting one when the key has none. Errors are Kernel.Exec's, plus
// errs.Unavailable when no sandbox can be started or all are busy.
func (p *Pool) Exec(ctx context.Context, key string, cell Cell) (Result, error) {
	if key == "" {
		return Result{}, errs.Missing("key")
	}
	e, err := p.acquire(key)
	if err != nil {
		return Result{}, err
	}
	defer p.release(e)
	e.run.Lock()
	defer e.run.Unlock()

	k, lost, err := p.kernel(ctx, e)
	if err != nil {
		return Result{}, err
	}
	res, err := k.Exec(ctx, cell)
	if errors.Is(err, ErrEnded) {
		// It ended between the check and the call (idle CPU, file count): start again, once.
		p.drop(e, k, endedBetweenCalls)
		if k, lost, err = p.kernel(ctx, e); err != nil {
			return Result{}, err
		}
		res, err = k.Exec(ctx, cell)
	}
	res.StateLost = lost
	if res.SandboxEnded || k.Ended() {
		p.drop(e, k, lostReason(res))
	} else if err != nil && lost != "" {
		// A refused cell ran nothing: the news is for the next call, whose result the caller will read.
		p.mu.Lock()
		e.lost = lost
		p.mu.Unlock()
	}
	return res, err
}

// kernel returns e's sandbox, starting one when it has none, and why the previous one's state is gone.
func (p *Pool) kernel(ctx context.Context, e *entry) (*Kernel, string, error) {
	p.mu.Lock()
	if k := e.k; k != nil && k.Ended() {
		p.mu.Unlock()
		p.drop(e, k, endedBetweenCalls)
		p.mu.Lock()
	}
	if e.k != nil {
		k := e.k
		p.mu.Unlock()
		return k, "", nil
	}
	victim, err := p.reserveLocked()
	p.mu.Unlock()
	if err != nil {
		return nil, "", err
	}
	if victim != nil {
		_ = victim.Close()
	}
	k, err := p.r.Start(ctx)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.live--
		return nil, "", err
	}
	if p.closed {
		p.live--
		_ = k.Close()
		return nil, "", errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	e.k = k
	lost := e.lost
	e.lost = ""
	return k, lost, nil
}

// reserveLocked takes a slot for a new sandbox, detaching the sandbox idle the longest when all are taken; the
// caller closes it outside the lock.
func (p *Pool) reserveLocked() (*Kernel, error) {
	if p.closed {
		return nil, errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	var victim *entry
	if p.live >= p.max {
		for _, e := range p.entries {
			if e.k != nil && e.users == 0 && (victim == nil || e.lastUsed.Before(victim.lastUsed)) {
				victim = e
			}
		}
		if victim == nil {
			return nil, errs.E(errs.Unavailable, "all %d code sandboxes are busy; try again shortly", p.max)
		}
		p.live--
	}
	p.live++
	if victim == nil {
		return nil, nil
	}
	k := victim.k
	victim.k = nil
	victim.lost = "the sandbox was closed to make room for another conversation's"
	return k, nil
}

// drop forgets e's sandbox k (when it is still e's) and closes it.
func (p *Pool) drop(e *entry, k *Kernel, lost string) {
	p.mu.Lock()
	if e.k == k {
		e.k = nil
		e.lost = lost
		p.live--
	}
	p.mu.Unlock()
	_ = k.Close()
}

// endedBetweenCalls is what a key's next call is told when its sandbox ended with no call running: the limits
// on what threads a cell left running may use, or the file count, ended it.
const endedBetweenCalls = "the sandbox ended between calls (what the code left running went over a limit)"

func lostReason(res Result) string {
	if res.Limit != "" {
		return fmt.Sprintf("the sandbox was ended by the %s limit", res.Limit)
	}
	return fmt.Sprintf("the sandbox's python ended (exit status %d)", res.ExitCode)
}

func (p *Pool) acquire(key string) (*entry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	e := p.entries[key]
	if e == nil {
		e = &entry{}
		p.entries[key] = e
	}
	e.users++
	return e, nil
}

func (p *Pool) release(e *entry) {
	p.mu.Lock()
	e.users--
	e.lastUsed = time.Now()
	p.mu.Unlock()
}

// Close ends key's sandbox, if it has one, and forgets the key: its next call starts afresh, with no StateLost.
// A call running for the key ends with SandboxEnded.
func (p *Pool) Close(key string) {
	p.mu.Lock()
	e := p.entries[key]
	delete(p.entries, key)
	var k *Kernel
	if e != nil && e.k != nil {
		k = e.k
		e.k = nil
		p.live--
	}
	p.mu.Unlock()
	if k != nil {
		_ = k.Close()
	}
}

// Shutdown ends every sandbox of the pool; later calls are refused.
func (p *Pool) Shutdown() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	var ks []*Kernel
	for _, e := range p.entries {
		if e.k != nil {
			ks = append(ks, e.k)
			e.k = nil
			p.live--
		}
	}
	p.mu.Unlock()
	close(p.stop)
	<-p.done
	for _, k := range ks {
		_ = k.Close()
	}
}

// Live reports how many warm sandboxes the pool holds.
func (p *Pool) Live() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.live
}

// janitor closes sandboxes idle for longer than p.idle and forgets keys with nothing left to say.
func (p *Pool) janitor() {
	defer close(p.done)
	tick := time.NewTicker(min(max(p.idle/4, 10*time.Millisecond), time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		var idle []*Kernel
		now := time.Now()
		p.mu.Lock()
		for key, e := range p.entries {
			if e.users > 0 {
				continue
			}
			switch {
			case e.k != nil && now.Sub(e.lastUsed) > p.idle:
				idle = append(idle, e.k)
				e.k = nil
				e.lost = fmt.Sprintf("the sandbox was closed after %s without a call", p.idle)
				p.live--
			case e.k == nil && now.Sub(e.lastUsed) > rememberLost:
				delete(p.entries, key)
			}
		}
		p.mu.Unlock()
		for _, k := range idle {
			_ = k.Close()
		}
	}
}
