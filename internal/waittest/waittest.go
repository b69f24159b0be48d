// Package waittest holds the one polling wait the tests share. It imports nothing from the project, so any test
// package can use it without an import cycle.
package waittest

import (
	"testing"
	"time"
)

// deadline is generous: it only bounds a test whose condition never comes, on a loaded machine, and asserts no
// timing.
const deadline = 30 * time.Second

// Until polls cond until it holds, failing the test, naming what was awaited, if it never does.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
