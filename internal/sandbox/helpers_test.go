package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

// newRunner returns a Runner with the given limits, skipping the test (saying what is missing) only when this
// machine cannot make sandboxes at all; `make deps` installs bubblewrap, so in CI the tests run.
func newRunner(tb testing.TB, limits Limits) *Runner {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := New(ctx, Config{Limits: limits, Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if errors.Is(err, ErrUnsupported) {
		tb.Skipf("no sandbox can be made on this machine: %s", errs.MessageOf(err))
	}
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return r
}

// needModules skips a test that needs python modules the sandbox lacks.
func needModules(tb testing.TB, r *Runner, modules ...string) {
	tb.Helper()
	for _, m := range modules {
		if slices.Contains(r.Missing(), m) {
			tb.Skipf("the sandbox's /usr/bin/python3 has no %s: `make deps` installs Debian's python3-%s", m, m)
		}
	}
}

// run runs code in a fresh sandbox and fails the test on an error: every call of the suites below must end with
// a readable result.
func run(tb testing.TB, r *Runner, code string, inputs ...Input) Result {
	tb.Helper()
	res, err := r.Run(context.Background(), Cell{Code: code, Inputs: inputs})
	if err != nil {
		tb.Fatalf("Run: %v", err)
	}
	return res
}

// startKernel starts a warm sandbox, closed when the test ends.
func startKernel(tb testing.TB, r *Runner) *Kernel {
	tb.Helper()
	k, err := r.Start(context.Background())
	if err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(func() { k.Close() })
	return k
}

func exec1(tb testing.TB, k *Kernel, code string, inputs ...Input) Result {
	tb.Helper()
	res, err := k.Exec(context.Background(), Cell{Code: code, Inputs: inputs})
	if err != nil {
		tb.Fatalf("Exec: %v", err)
	}
	return res
}

func fileNames(files []File) []string {
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	return names
}

// lines splits stdout into its lines.
func lines(s string) []string {
	return strings.Split(strings.TrimRight(s, "\n"), "\n")
}

// ownSandboxes are the sandboxes a test started: leftovers looks at these only, since other sandboxes (a server
// running on this machine, another package's tests) may run as the same user at the same time.
type ownSandboxes struct {
	mu  sync.Mutex
	ns  map[uint64]bool
	fds []int
}

// track records the pid namespace of each sandbox r starts from now on, holding it open until the test ends so
// that its number is given to no other namespace meanwhile.
func track(t *testing.T, r *Runner) *ownSandboxes {
	t.Helper()
	o := &ownSandboxes{ns: map[uint64]bool{}}
	r.started = func(k *Kernel) {
		fd, err := syscall.Dup(int(k.nsFile.Fd()))
		o.mu.Lock()
		defer o.mu.Unlock()
		if err == nil {
			o.fds = append(o.fds, fd)
		}
		o.ns[k.pidNS] = true
	}
	t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		for _, fd := range o.fds {
			syscall.Close(fd)
		}
	})
	return o
}

// leftovers lists the host's processes still in one of the test's sandboxes.
func (o *ownSandboxes) leftovers() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var found []string
	for _, ps := range scanProcs(func(ns uint64) bool { return o.ns[ns] }, nil) {
		for _, p := range ps {
			found = append(found, strconv.Itoa(p.pid))
		}
	}
	return found
}
