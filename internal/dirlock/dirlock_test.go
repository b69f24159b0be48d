package dirlock_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/dirlock"
)

func TestASecondHolderIsRefusedWithTheFirstsPID(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	first, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open files, not processes: a second open in this process conflicts like another
	// process would.
	_, err = dirlock.Acquire(dir)
	var held *dirlock.HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire: %v, want a HeldError", err)
	}
	if held.PID != os.Getpid() || !strings.Contains(err.Error(), "process "+strconv.Itoa(os.Getpid())) ||
		!strings.Contains(err.Error(), "--data-dir") {
		t.Fatalf("the refusal should name the holder's pid and what to do: %v", err)
	}
	first.Release()
	again, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("after Release: %v", err)
	}
	again.Release()
}

func TestAStalePIDIsReplaced(t *testing.T) {
	dir := t.TempDir()
	// What a holder killed with -9 leaves: the file with its pid, and no lock.
	if err := os.WriteFile(filepath.Join(dir, dirlock.FileName), []byte("999999999\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := dirlock.Acquire(dir)
	if err != nil {
		t.Fatalf("a lock file without a holder: %v", err)
	}
	defer l.Release()
	b, _ := os.ReadFile(filepath.Join(dir, dirlock.FileName))
	if strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("lock file holds %q, want this pid", b)
	}
}
