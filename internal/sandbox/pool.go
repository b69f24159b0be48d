package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

// PoolConfig bounds a Pool; zero fields take the defaults.
type PoolConfig struct {
	// Idle is how long a warm sandbox is kept without a call before it is closed (default 10 minutes).
	Idle time.Duration
	// Max is how many warm sandboxes may live at once (default 8). When a new key needs one and none is free,
	// the one idle the longest is closed; when all are in a call, the new call waits for one (Wait).
	Max int
	// Wait is how long a call waits for a sandbox when all are in a call before it is refused (errs.Unavailable);
	// default: the runner's wall-clock limit and 10 s, by when a call holding one has ended.
	Wait time.Duration
}

// rememberLost is how long a Pool remembers why a key's sandbox ended, to tell the key's next call.
const rememberLost = 24 * time.Hour

// Pool keeps one warm sandbox per key: successive calls with a key run in the same python, with the variables and
// files earlier calls left, one call at a time. A key is one conversation (one thread) of one account: a sandbox is
// never used for two keys. A sandbox that ended (a limit, the timeout, a crash) is replaced on the key's next call,
// and that call's Result.StateLost says so.
//
// The sandboxes are shared fairly between accounts: while calls of other accounts wait for one, an account holds
// at most its share (Max divided by the accounts holding or waiting for one, at least one); a freed sandbox goes to
// the waiting account that holds the fewest, and an account over its share gives its sandboxes up as its calls end.
type Pool struct {
	r    *Runner
	idle time.Duration
	max  int
	wait time.Duration

	mu      sync.Mutex
	entries map[entryKey]*entry
	live    int            // kernels running or starting
	held    map[string]int // of live, by account
	waiters []*waiter      // calls waiting for a sandbox, oldest first
	closed  bool

	stop chan struct{}
	done chan struct{}
}

type entryKey struct{ account, key string }

type entry struct {
	account, key string
	run          sync.Mutex // one call at a time for the key; held while its sandbox starts

	// Guarded by Pool.mu.
	k        *Kernel
	lost     string // why the key's last sandbox ended, for its next call
	lastUsed time.Time
	users    int // calls holding or waiting for run
}

// waiter is a call waiting for a sandbox.
type waiter struct {
	account string
	ready   chan struct{} // closed when granted
	// Set when granted, guarded by Pool.mu.
	granted bool
	victim  *Kernel // an idle sandbox detached for it, which it closes
}

// NewPool returns a Pool making its sandboxes with r. Close it to end them all.
func NewPool(r *Runner, cfg PoolConfig) *Pool {
	if cfg.Idle <= 0 {
		cfg.Idle = 10 * time.Minute
	}
	if cfg.Max <= 0 {
		cfg.Max = 8
	}
	if cfg.Wait <= 0 {
		cfg.Wait = r.limits.WallTime + 10*time.Second
	}
	p := &Pool{r: r, idle: cfg.Idle, max: cfg.Max, wait: cfg.Wait, entries: map[entryKey]*entry{},
		held: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go p.janitor()
	return p
}

// Exec is ExecFor with no account: all its calls share one account's share of the sandboxes.
func (p *Pool) Exec(ctx context.Context, key string, cell Cell) (Result, error) {
	return p.ExecFor(ctx, "", key, cell)
}

// ExecFor runs a cell in the warm sandbox of account's key, starting one when the key has none. Errors are
// Kernel.Exec's, plus errs.Unavailable when no sandbox can be started or none was free within PoolConfig.Wait.
func (p *Pool) ExecFor(ctx context.Context, account, key string, cell Cell) (Result, error) {
	if key == "" {
		return Result{}, errs.Missing("key")
	}
	e, err := p.acquire(account, key)
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
	if k := e.k; k != nil && p.overShareLocked(e.account) {
		// Other accounts wait while this one holds more than its share: it gives this sandbox up and waits its
		// turn like them.
		e.k = nil
		e.lost = "the sandbox was closed to give other accounts their share of the code sandboxes"
		p.logClose(e, e.lost)
		p.freeLocked(e.account)
		p.grantLocked()
		p.mu.Unlock()
		_ = k.Close()
		p.mu.Lock()
	}
	if e.k != nil {
		k := e.k
		p.mu.Unlock()
		return k, "", nil
	}
	p.mu.Unlock()
	victim, err := p.reserve(ctx, e.account)
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
		p.freeLocked(e.account)
		p.grantLocked()
		return nil, "", err
	}
	if p.closed {
		p.freeLocked(e.account)
		_ = k.Close()
		return nil, "", errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	e.k = k
	lost := e.lost
	e.lost = ""
	return k, lost, nil
}

// reserve takes a slot for a new sandbox of account, waiting for one (fairly between accounts) when all are in a
// call. It returns the idle sandbox detached to make room, if any, for the caller to close.
func (p *Pool) reserve(ctx context.Context, account string) (*Kernel, error) {
	w := &waiter{account: account, ready: make(chan struct{})}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	p.waiters = append(p.waiters, w)
	p.grantLocked()
	p.mu.Unlock()

	timer := time.NewTimer(p.wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return w.victim, nil
	case <-ctx.Done():
		err = fmt.Errorf("sandbox: wait for a sandbox: %w", ctx.Err())
	case <-timer.C:
		err = errs.E(errs.Unavailable, "all %d code sandboxes are busy; try again shortly", p.max)
	case <-p.stop:
		err = errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	p.mu.Lock()
	if w.granted {
		// Granted meanwhile: give the slot back.
		p.freeLocked(account)
		p.grantLocked()
	} else {
		p.waiters = slices.DeleteFunc(p.waiters, func(x *waiter) bool { return x == w })
	}
	p.mu.Unlock()
	if w.victim != nil {
		_ = w.victim.Close()
	}
	return nil, err
}

// grantLocked hands free slots to waiting calls: first to the account holding the fewest sandboxes, the oldest
// call first among equals. A slot is free when fewer than Max sandboxes live, or when one is idle (not in a call):
// that one is detached for the waiter to close, from the account holding the most, idle the longest among equals.
func (p *Pool) grantLocked() {
	for len(p.waiters) > 0 {
		best := 0
		for i, w := range p.waiters {
			if p.held[w.account] < p.held[p.waiters[best].account] {
				best = i
			}
		}
		w := p.waiters[best]
		var victim *Kernel
		if p.live >= p.max {
			var idle *entry
			for _, e := range p.entries {
				if e.k == nil || e.users > 0 {
					continue
				}
				if idle == nil || p.held[e.account] > p.held[idle.account] ||
					p.held[e.account] == p.held[idle.account] && e.lastUsed.Before(idle.lastUsed) {
					idle = e
				}
			}
			if idle == nil {
				return
			}
			victim = idle.k
			idle.k = nil
			idle.lost = "the sandbox was closed to make room for another conversation's"
			p.logClose(idle, idle.lost)
			p.freeLocked(idle.account)
		}
		p.live++
		p.held[w.account]++
		w.granted, w.victim = true, victim
		close(w.ready)
		p.waiters = slices.Delete(p.waiters, best, best+1)
	}
}

// overShareLocked says whether account holds more than its share of the sandboxes while another account waits.
func (p *Pool) overShareLocked(account string) bool {
	accounts := map[string]bool{}
	othersWait := false
	for _, w := range p.waiters {
		accounts[w.account] = true
		othersWait = othersWait || w.account != account
	}
	if !othersWait {
		return false
	}
	for a, n := range p.held {
		if n > 0 {
			accounts[a] = true
		}
	}
	return p.held[account] > max(1, p.max/len(accounts))
}

// freeLocked gives a slot of account's back.
func (p *Pool) freeLocked(account string) {
	p.live--
	if p.held[account]--; p.held[account] <= 0 {
		delete(p.held, account)
	}
}

// drop forgets e's sandbox k (when it is still e's) and closes it.
func (p *Pool) drop(e *entry, k *Kernel, lost string) {
	p.mu.Lock()
	if e.k == k {
		e.k = nil
		e.lost = lost
		p.freeLocked(e.account)
		p.grantLocked()
	}
	p.mu.Unlock()
	_ = k.Close()
}

// logClose says why the pool closed e's warm sandbox, once per close (a caller's CloseFor is the caller's to
// explain; a sandbox that ended by itself was logged by what ended it).
func (p *Pool) logClose(e *entry, why string) {
	p.r.log.Info("closed a warm code sandbox", "account", e.account, "session", e.key, "why", why)
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

func (p *Pool) acquire(account, key string) (*entry, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errs.E(errs.Unavailable, "the sandbox pool is closed")
	}
	ek := entryKey{account, key}
	e := p.entries[ek]
	if e == nil {
		e = &entry{account: account, key: key}
		p.entries[ek] = e
	}
	e.users++
	return e, nil
}

func (p *Pool) release(e *entry) {
	p.mu.Lock()
	e.users--
	e.lastUsed = time.Now()
	// Its sandbox may be idle now: a waiting call may take it.
	p.grantLocked()
	p.mu.Unlock()
}

// Close is CloseFor with no account, the account of Exec.
func (p *Pool) Close(key string) { p.CloseFor("", key) }

// CloseFor ends the sandbox of account's key, if it has one, and forgets the key: its next call starts afresh,
// with no StateLost. A call running for the key ends with SandboxEnded. It reports whether a sandbox was closed,
// so that a caller says why once, and only when there was one.
func (p *Pool) CloseFor(account, key string) bool {
	p.mu.Lock()
	ek := entryKey{account, key}
	e := p.entries[ek]
	delete(p.entries, ek)
	var k *Kernel
	if e != nil && e.k != nil {
		k = e.k
		e.k = nil
		p.freeLocked(account)
		p.grantLocked()
	}
	p.mu.Unlock()
	if k != nil {
		_ = k.Close()
	}
	return k != nil
}

// Holds reports whether account's key holds a sandbox now (one that may have ended since: the key's next call
// replaces it). A key that holds none starts its next call in a fresh sandbox, with only that call's inputs.
func (p *Pool) Holds(account, key string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[entryKey{account, key}]
	return e != nil && e.k != nil
}

// Warm is a key holding a warm sandbox.
type Warm struct {
	Account, Key string
	// InCall is true while a call runs in it or waits for it.
	InCall bool
}

// Warm lists the keys holding a sandbox, for a caller that closes those whose owner is gone (a container expired
// or deleted): the pool knows its keys, not what they stand for.
func (p *Pool) Warm() []Warm {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Warm
	for ek, e := range p.entries {
		if e.k != nil {
			out = append(out, Warm{Account: ek.account, Key: ek.key, InCall: e.users > 0})
		}
	}
	return out
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
			p.freeLocked(e.account)
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
				p.logClose(e, e.lost)
				p.freeLocked(e.account)
			case e.k == nil && now.Sub(e.lastUsed) > rememberLost:
				delete(p.entries, key)
			}
		}
		p.grantLocked()
		p.mu.Unlock()
		for _, k := range idle {
			_ = k.Close()
		}
	}
}
