package platform_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
	"github.com/contrailhq/contrail/internal/dirlock"
	"github.com/contrailhq/contrail/internal/platform"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// A second node on a data dir in use is refused before it opens anything, with the holder's pid; the first one
// keeps serving, and once it stops the data dir is free again.
func TestASecondNodeOnTheSameDataDirIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := platformtest.Start(t, platformtest.WithDataDir(dir))
	_, key := first.NewAccount(t, "alice")

	cfg := config.Defaults()
	cfg.DataDir, cfg.NATSListen, cfg.Addr = dir, "off", "127.0.0.1:0"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	second, err := platform.Start(ctx, cfg, platform.Options{})
	if err == nil {
		second.Stop(ctx)
		t.Fatal("a second node started on a data dir in use")
	}
	var held *dirlock.HeldError
	if !errors.As(err, &held) || held.PID != os.Getpid() || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("the refusal should name the holder's pid: %v", err)
	}
	if r := first.Do(t, key, "GET", "/admin/whoami", nil); r.Status != 200 {
		t.Fatalf("the first node after the refusal: %d %s", r.Status, r.Body)
	}
	if err := first.Ready(ctx); err != nil {
		t.Fatalf("the first node is no longer ready: %v", err)
	}

	first.Stop()
	again := platformtest.Start(t, platformtest.WithDataDir(dir))
	if r := again.Do(t, key, "GET", "/admin/whoami", nil); r.Status != 200 {
		t.Fatalf("alice's key on the next node: %d %s", r.Status, r.Body)
	}
	if _, err := os.Stat(filepath.Join(dir, dirlock.FileName)); err != nil {
		t.Fatal(err)
	}
}

// Stop ends every goroutine of the node, the routing feed included: left running, it followed a closed connection
// and warned every second.
func TestStopEndsTheRoutingFeed(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	if n.RoutingFeedStopped() {
		t.Fatal("the routing feed is not running on a started node")
	}
	n.Stop()
	if !n.RoutingFeedStopped() {
		t.Fatal("the routing feed still runs after Stop")
	}
	if strings.Contains(n.Logs.String(), "routing index: follow agents") {
		t.Fatalf("the routing feed warned while stopping:\n%s", n.Logs)
	}
}

// A crash in a test (Kill) stops it too, and frees the data dir for the next node, as the kernel does for a
// process that dies.
func TestKillEndsTheRoutingFeedAndFreesTheDataDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := platformtest.Start(t, platformtest.WithDataDir(dir))
	n.Crash()
	if !n.RoutingFeedStopped() {
		t.Fatal("the routing feed still runs after Kill")
	}
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("the data dir after a crash: %v", err)
	}
	l.Release()
}

// Nodes on an external NATS may share a data dir. The docs index's scratch files are one node's: the first takes a
// locked directory of its own under the data dir, a second one sharing it works in a temporary directory and leaves
// the first one's files alone, and what a killed node left there is wiped by the next start, not left in /tmp.
func TestNodesOnExternalNATSKeepTheirDocsScratchApart(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	platformtest.Start(t, platformtest.WithConfig(func(c *config.Config) { c.NATSListen, c.NATSListenSet = addr, true }))
	external := platformtest.WithConfig(func(c *config.Config) { c.NATSURL = "nats://" + addr })
	shared := t.TempDir()
	scratch := filepath.Join(shared, "docindex", "docindex-scratch")

	a := platformtest.Start(t, external, platformtest.WithDataDir(shared))
	if _, err := os.Stat(scratch); err != nil {
		t.Fatalf("the first node on an external NATS has no scratch under its data dir: %v", err)
	}
	marker := filepath.Join(scratch, "first-node-was-here")
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	b := platformtest.Start(t, external, platformtest.WithDataDir(shared))
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("a second node on the same data dir wiped the first one's scratch: %v", err)
	}
	if !strings.Contains(b.Logs.String(), "using a temporary one") {
		t.Fatalf("the second node did not fall back to a temporary scratch; its log:\n%s", b.Logs.String())
	}
	b.Stop()

	// A node killed leaves its scratch behind (here: files put where it was); the next start on the data dir
	// takes the directory over and wipes them, where a temporary directory would stay in /tmp for good.
	a.Stop()
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	platformtest.Start(t, external, platformtest.WithDataDir(shared))
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Fatalf("the next node kept a dead node's scratch files: %v", err)
	}
}
