// Package dirlock gives one process at a time a directory: an advisory lock (flock) on a file in it that holds the
// holder's pid. Two `contrail serve` on one data dir would both open the embedded server's store and corrupt it; the
// second one is refused at once, with the pid of the first.
//
// The kernel drops the lock when its holder exits, however it exits, so a crash never leaves a stale lock behind.
// It imports nothing of Contrail.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// FileName is the lock file inside a locked directory.
const FileName = "contrail.lock"

// Lock is a held directory lock.
type Lock struct {
	f *os.File
}

// HeldError is the answer when another process holds the directory.
type HeldError struct {
	Dir string
	// PID is the holder's process ID, 0 when it could not be read (it is written just after the lock is taken).
	PID int
}

func (e *HeldError) Error() string {
	holder := "another process"
	if e.PID > 0 {
		holder = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("data dir %s is in use by %s (the lock is %s): a second node on the same data dir would corrupt it; "+
		"stop that one, or give this node its own --data-dir (nodes share data through NATS: --nats-url)",
		e.Dir, holder, filepath.Join(e.Dir, FileName))
}

// Acquire locks dir (creating it when missing) for this process, or returns a *HeldError naming the holder. It does
// not wait.
func Acquire(dir string) (*Lock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, &HeldError{Dir: dir, PID: readPID(path)}
		}
		return nil, fmt.Errorf("lock data dir %s: %w", dir, err)
	}
	// The pid is for people: whoever is refused learns whom to stop. A pid left by a process that died is
	// overwritten here.
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock data dir: write pid: %w", err)
	}
	return &Lock{f: f}, nil
}

// Release gives the directory up. The file stays (removing it would race with a process about to lock it).
func (l *Lock) Release() {
	if l == nil || l.f == nil {
		return
	}
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
	l.f = nil
}

func readPID(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}
