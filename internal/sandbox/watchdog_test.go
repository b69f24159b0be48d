package sandbox

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestWatchdogLooksAtTheSandboxOnly: the watchdog finds a sandbox's processes from its init down, so each look
// reads the /proc entries of the sandbox's processes and of no other process of the host, and still finds every
// one of them: a child in a session of its own, and an orphan the sandbox's init inherited.
func TestWatchdogLooksAtTheSandboxOnly(t *testing.T) {
	r := newRunner(t, DefaultLimits())
	var mu sync.Mutex
	var ns uint64
	var outside []int
	looked := map[int]bool{}
	r.started = func(k *Kernel) {
		mu.Lock()
		defer mu.Unlock()
		ns = k.pidNS
	}
	r.looked = func(pid int) {
		got, err := pidNamespace(pid)
		mu.Lock()
		defer mu.Unlock()
		if ns == 0 || err != nil {
			return // before the sandbox is known, or a process that ended meanwhile
		}
		if got != ns {
			outside = append(outside, pid)
		}
		looked[pid] = true
	}
	k := startKernel(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = k.Exec(ctx, Cell{Code: `
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(10**6)
pid = os.fork()
if pid == 0:
    if os.fork() == 0:
        time.sleep(10**6)
    os._exit(0)
os.waitpid(pid, 0)
time.sleep(10**6)
`})
	}()
	// The host's view (every process of the host, by namespace): the init, the driver, its child, and the orphan
	// whose parent ended, now the init's.
	var want []proc
	var orphan int
	for deadline := time.Now().Add(time.Minute); orphan == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the cell's processes did not start: %+v", want)
		}
		want = scanProcs(func(got uint64) bool { return got == k.pidNS }, nil)[k.pidNS]
		if len(want) != 4 {
			continue
		}
		for _, p := range want {
			if p.ppid == k.init && p.pid != k.driver {
				orphan = p.pid
			}
		}
	}
	pids := func(ps []proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.pid)
		}
		slices.Sort(out)
		return out
	}
	if got := pids(k.processes()); !slices.Equal(got, pids(want)) {
		t.Errorf("the watchdog found %v, the sandbox holds %v", got, pids(want))
	}
	// A look of the watchdog's own (every 250 ms) after the orphan was made.
	for seen, deadline := false, time.Now().Add(time.Minute); !seen; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the watchdog did not look at the orphan")
		}
		mu.Lock()
		seen = looked[orphan]
		mu.Unlock()
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(outside) > 0 {
		t.Errorf("the watchdog read the /proc entries of %d processes outside the sandbox: %v", len(outside), outside[:min(len(outside), 10)])
	}
}
