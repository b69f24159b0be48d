// Package npmtest installs the npm packages a compatibility test drives (an official SDK) from the lockfile in its
// testdata directory. It is imported only by tests.
package npmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Install runs npm ci in dir unless probe (a path under dir/node_modules) is there already; it skips the test,
// saying why, where Node or npm is missing or no registry can be reached (make deps installs the packages when
// npm is there).
func Install(t *testing.T, dir, probe, what string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: the compatibility test with %s needs Node and npm", tool, what)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", probe)); err == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("npm ci in %s failed (no registry reachable?): %v\n%s", dir, err, out)
	}
}

// RunJSON runs `node script` in dir with env added to the environment, and decodes the one JSON value it prints
// into out; the test fails with what node wrote when it fails.
func RunJSON(t *testing.T, dir, script string, env []string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s\n%s", script, err, raw, stderr.String())
	}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("output of node %s: %v\n%s", script, err, raw)
	}
}
