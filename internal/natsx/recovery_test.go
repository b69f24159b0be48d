package natsx_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/logtest"
	"github.com/contrailhq/contrail/internal/natsx"
)

// A store recovered at start (its state files older than its messages, as after a kill) is said in one line that
// names the streams, not in two or three warnings for each.
func TestAStoreRecoveredAtStartIsSaidInOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	streams := []string{"A", "B", "C"}
	start := func(log *logtest.Buffer) func() {
		t.Helper()
		ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: dir, Logger: slog.New(slog.NewTextHandler(log, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return ns.Shutdown
	}
	publish := func() {
		t.Helper()
		ns, err := natsx.StartEmbedded(natsx.EmbeddedConfig{StoreDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer ns.Shutdown()
		nc, err := natsx.ConnectEmbedded(ns, "test")
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, name := range streams {
			if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, name+".x", []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	index := func(name string) string {
		return filepath.Join(dir, "jetstream", "$G", "streams", name, "msgs", "index.db")
	}

	// A clean stop: the state files are what the messages are.
	publish()
	old := map[string][]byte{}
	for _, name := range streams {
		b, err := os.ReadFile(index(name))
		if err != nil {
			t.Fatal(err)
		}
		old[name] = b
	}
	var clean logtest.Buffer
	start(&clean)()
	if strings.Contains(clean.String(), "level=WARN") {
		t.Fatalf("a clean start warned:\n%s", clean.String())
	}

	// More messages, then the state files of before them: what a kill between a write and the state's flush leaves.
	publish()
	for _, name := range streams {
		if err := os.WriteFile(index(name), old[name], 0o640); err != nil {
			t.Fatal(err)
		}
	}
	var log logtest.Buffer
	start(&log)()
	var warnings []string
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "level=WARN") {
			warnings = append(warnings, line)
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "not closed cleanly") ||
		!strings.Contains(warnings[0], fmt.Sprintf("rebuilt the state of %d streams", len(streams))) ||
		!strings.Contains(warnings[0], "stores=A,B,C") {
		t.Fatalf("the recovery's warnings:\n%s", log.String())
	}
}
