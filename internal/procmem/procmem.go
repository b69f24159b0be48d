// Package procmem reads a process's resident memory from /proc (Linux): all of it, and its anonymous part (the
// process's own: heap, stacks) and file-backed part (pages of its binary and other mapped files).
package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Resident is a process's resident memory, in KiB.
type Resident struct{ RSS, Anon, File float64 }

// Of reads the resident memory of process pid (0: this process) from its /proc status.
func Of(pid int) (Resident, error) {
	path := "/proc/self/status"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	f, err := os.Open(path)
	if err != nil {
		return Resident{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	var r Resident
	found := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, rest, ok := strings.Cut(sc.Text(), ":")
		fields := strings.Fields(rest)
		if !ok || len(fields) == 0 {
			continue
		}
		var into *float64
		switch key {
		case "VmRSS":
			into = &r.RSS
		case "RssAnon":
			into = &r.Anon
		case "RssFile":
			into = &r.File
		default:
			continue
		}
		if *into, err = strconv.ParseFloat(fields[0], 64); err != nil {
			return Resident{}, fmt.Errorf("read memory of pid %d: %s: %w", pid, key, err)
		}
		found++
	}
	if found < 3 {
		return Resident{}, fmt.Errorf("no VmRSS, RssAnon and RssFile for pid %d", pid)
	}
	return r, nil
}
