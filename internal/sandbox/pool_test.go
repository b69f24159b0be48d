package sandbox

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/logtest"
)

func poolExec(t *testing.T, p *Pool, key, code string) Result {
	t.Helper()
	res, err := p.Exec(context.Background(), key, Cell{Code: code})
	if err != nil {
		t.Fatalf("%s: Exec: %v", key, err)
	}
	return res
}

func TestPoolKeepsOneSandboxPerKey(t *testing.T) {
	p := NewPool(newRunner(t, Limits{}), PoolConfig{})
	defer p.Shutdown()

	poolExec(t, p, "thread-a", "x = 'a'\nopen('a.txt', 'w').write('a')")
	poolExec(t, p, "thread-b", "x = 'b'")
	if res := poolExec(t, p, "thread-a", "import os\nprint(x, os.listdir('.'))"); res.Stdout != "a ['a.txt']\n" || res.StateLost != "" {
		t.Errorf("thread-a: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}
	if res := poolExec(t, p, "thread-b", "import os\nprint(x, os.listdir('.'))"); res.Stdout != "b []\n" {
		t.Errorf("thread-b: stdout %q", res.Stdout)
	}
	if n := p.Live(); n != 2 {
		t.Errorf("%d sandboxes live, want 2", n)
	}

	// Closed on request: the key's next call starts afresh, and that is no news to tell.
	p.Close("thread-a")
	if n := p.Live(); n != 1 {
		t.Errorf("%d sandboxes live after Close, want 1", n)
	}
	res := poolExec(t, p, "thread-a", "print('x' in globals())")
	if res.Stdout != "False\n" || res.StateLost != "" {
		t.Errorf("after Close: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}
	if _, err := p.Exec(context.Background(), "", Cell{Code: "1"}); errs.CodeOf(err) != errs.Invalid {
		t.Errorf("empty key: %v", err)
	}
}

func TestPoolReplacesAnEndedSandboxAndSaysStateWasLost(t *testing.T) {
	p := NewPool(newRunner(t, Limits{WallTime: 2 * time.Second}), PoolConfig{})
	defer p.Shutdown()

	poolExec(t, p, "t", "x = 1")
	if res := poolExec(t, p, "t", "import os\nos._exit(3)"); !res.SandboxEnded {
		t.Fatalf("os._exit: ended %v", res.SandboxEnded)
	}
	res := poolExec(t, p, "t", "print('x' in globals())")
	if res.Stdout != "False\n" || !strings.Contains(res.StateLost, "exit status 3") {
		t.Errorf("after the crash: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}
	// Told once: the call after carries on in the new sandbox.
	poolExec(t, p, "t", "y = 2")
	if res := poolExec(t, p, "t", "print(y)"); res.StateLost != "" || res.Stdout != "2\n" {
		t.Errorf("the call after: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}

	if res := poolExec(t, p, "t", "import time\ntime.sleep(60)"); !res.TimedOut {
		t.Fatalf("sleep: timed out %v", res.TimedOut)
	}
	if res := poolExec(t, p, "t", "print(1)"); !strings.Contains(res.StateLost, "wall_time") {
		t.Errorf("after the timeout: state lost %q", res.StateLost)
	}
}

func TestPoolClosesIdleSandboxes(t *testing.T) {
	p := NewPool(newRunner(t, Limits{}), PoolConfig{Idle: 200 * time.Millisecond})
	defer p.Shutdown()
	poolExec(t, p, "t", "x = 1")
	deadline := time.Now().Add(30 * time.Second)
	for p.Live() != 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := p.Live(); n != 0 {
		t.Fatalf("%d sandboxes still live", n)
	}
	res := poolExec(t, p, "t", "print('x' in globals())")
	if res.Stdout != "False\n" || !strings.Contains(res.StateLost, "without a call") {
		t.Errorf("after idling: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}
}

func TestPoolMakesRoomOrRefusesWhenFull(t *testing.T) {
	// A call waits a millisecond at most for a sandbox: while a's call runs, b's is refused at once.
	p := NewPool(newRunner(t, Limits{}), PoolConfig{Max: 1, Wait: time.Millisecond})
	defer p.Shutdown()
	poolExec(t, p, "a", "x = 1")
	poolExec(t, p, "b", "x = 2") // a was idle: closed to make room
	if n := p.Live(); n != 1 {
		t.Errorf("%d sandboxes live, want 1", n)
	}
	if res := poolExec(t, p, "a", "print('x' in globals())"); res.Stdout != "False\n" || !strings.Contains(res.StateLost, "make room") {
		t.Errorf("a after eviction: stdout %q, state lost %q", res.Stdout, res.StateLost)
	}

	// While a's call runs, there is no room for b.
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		poolExec(t, p, "a", "import time\ntime.sleep(2)")
	}()
	go func() {
		for {
			p.mu.Lock()
			e := p.entries[entryKey{"", "a"}]
			busy := e != nil && e.users > 0 && e.k != nil
			p.mu.Unlock()
			if busy {
				close(started)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	<-started
	_, err := p.Exec(context.Background(), "b", Cell{Code: "print(1)"})
	if e := errs.As(err); e == nil || e.Code != errs.Unavailable || !strings.Contains(e.Message, "busy") {
		t.Errorf("b while a runs: %v", err)
	}
	wg.Wait()
}

func TestPoolRunsAKeysCallsOneAtATime(t *testing.T) {
	p := NewPool(newRunner(t, Limits{}), PoolConfig{})
	defer p.Shutdown()
	poolExec(t, p, "t", "n = 0")
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Read, wait, write: two of these at once in one python would lose an increment.
			poolExec(t, p, "t", "import time\nv = n\ntime.sleep(0.2)\nn = v + 1")
		}()
	}
	wg.Wait()
	if res := poolExec(t, p, "t", "print(n)"); res.Stdout != "3\n" {
		t.Errorf("n = %q, want 3", res.Stdout)
	}
	if n := p.Live(); n != 1 {
		t.Errorf("%d sandboxes for one key", n)
	}
}

func TestPoolShutdown(t *testing.T) {
	r := newRunner(t, Limits{})
	own := track(t, r)
	p := NewPool(r, PoolConfig{})
	poolExec(t, p, "t", "x = 1")
	// A sandbox of someone else's (a server on this machine, another test) runs on as the same user: it is not
	// this pool's to end.
	startKernel(t, newRunner(t, Limits{}))
	p.Shutdown()
	if n := p.Live(); n != 0 {
		t.Errorf("%d sandboxes live after Shutdown", n)
	}
	if _, err := p.Exec(context.Background(), "t", Cell{Code: "1"}); errs.CodeOf(err) != errs.Unavailable {
		t.Errorf("Exec after Shutdown: %v", err)
	}
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left in the pool's sandboxes: %v", left)
	}
}

// TestPoolListsItsWarmKeys: Warm names each key holding a sandbox with its account, and CloseFor says whether it
// closed one, so that its caller logs a close once.
func TestPoolListsItsWarmKeys(t *testing.T) {
	p := NewPool(newRunner(t, Limits{}), PoolConfig{})
	defer p.Shutdown()
	for _, k := range []struct{ account, key string }{{"acct-a", "cntr_1"}, {"acct-b", "thread_2"}} {
		if _, err := p.ExecFor(context.Background(), k.account, k.key, Cell{Code: "x = 1"}); err != nil {
			t.Fatalf("%s: %v", k.key, err)
		}
	}
	got := map[string]Warm{}
	for _, w := range p.Warm() {
		got[w.Key] = w
	}
	if len(got) != 2 || got["cntr_1"].Account != "acct-a" || got["thread_2"].Account != "acct-b" || got["cntr_1"].InCall {
		t.Fatalf("warm: %+v", got)
	}
	if !p.CloseFor("acct-a", "cntr_1") {
		t.Fatal("closing a warm sandbox reported none")
	}
	if p.CloseFor("acct-a", "cntr_1") || p.CloseFor("acct-b", "cntr_1") {
		t.Fatal("closing a key with no sandbox reported one")
	}
	if w := p.Warm(); len(w) != 1 || w[0].Key != "thread_2" {
		t.Fatalf("warm after a close: %+v", w)
	}
}

// TestPoolLogsWhyItClosesASandbox: a sandbox the pool closes to make room, or after idling, is logged once with
// why.
func TestPoolLogsWhyItClosesASandbox(t *testing.T) {
	r := newRunner(t, Limits{})
	logs := &logtest.Buffer{}
	r.log = slog.New(slog.NewTextHandler(logs, nil))
	closes := func(key, why string) int { return logs.Count("closed a warm code sandbox", "session="+key+" ", why) }
	p := NewPool(r, PoolConfig{Max: 1, Idle: 200 * time.Millisecond})
	defer p.Shutdown()
	poolExec(t, p, "a", "x = 1")
	poolExec(t, p, "b", "x = 2") // a was idle: closed to make room
	if n := closes("a", "make room"); n != 1 {
		t.Fatalf("the close of a's sandbox to make room is logged %d times:\n%s", n, logs)
	}
	deadline := time.Now().Add(30 * time.Second)
	for closes("b", "without a call") == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("b's idle close is not logged:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := closes("b", "without a call"); n != 1 {
		t.Fatalf("b's idle close is logged %d times", n)
	}
}
