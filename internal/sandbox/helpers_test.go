package sandbox

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// leftovers lists the host's processes running as the sandbox's user, when the platform runs as root (then
// bubblewrap and everything in the sandbox run as nobody on the host too).
func leftovers(t *testing.T) []string {
	t.Helper()
	if os.Geteuid() != 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var found []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(status), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == strconv.Itoa(sandboxUID) {
				found = append(found, e.Name())
			}
		}
	}
	return found
}
