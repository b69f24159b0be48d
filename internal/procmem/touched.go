package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Resident memory says what a process has mapped, which is not what it uses: a file-backed page is mapped when the
// kernel brings its neighbours in with it (64 KiB around each page touched, or a whole large folio of the page cache
// read ahead from disk), so the same binary doing the same work shows a resident file-backed part that varies with how
// it came into the page cache. What a process touched over a time is measured the way working-set tools do: clear
// the accessed bits of its pages (ClearTouched), let it run, then count the pages accessed since (Touched).

// ClearTouched clears the accessed bits of every page of process pid (0: this process), so that Touched later counts
// only the pages it accessed from now on. It needs to be allowed to write the process's /proc clear_refs: the same
// user, or root.
func ClearTouched(pid int) error {
	path := procPath(pid, "clear_refs")
	if err := os.WriteFile(path, []byte("1"), 0); err != nil {
		return fmt.Errorf("clear the accessed bits of pid %d: %w", pid, err)
	}
	return nil
}

// Touched is the memory of process pid (0: this process) accessed since ClearTouched, in KiB, split as Of splits
// resident memory: Anon is the process's own pages (heap, stacks, and the copies it wrote of its binary's data),
// File the pages of its binary and other mapped files that it read.
func Touched(pid int) (Resident, error) {
	f, err := os.Open(procPath(pid, "smaps"))
	if err != nil {
		return Resident{}, fmt.Errorf("read the touched memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	var r Resident
	// Each mapping's lines follow its header; a mapping's referenced pages count as anonymous up to the anonymous
	// pages it holds (a file's data segment once written holds private copies), and as file-backed beyond them.
	var referenced, anonymous float64
	mappings := 0
	flush := func() {
		a := min(referenced, anonymous)
		r.Anon += a
		r.File += referenced - a
		referenced, anonymous = 0, 0
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		key, rest, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(key, " ") || strings.Contains(key, "-") {
			// A mapping's header: "start-end perms offset dev inode path".
			flush()
			mappings++
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		var into *float64
		switch key {
		case "Referenced":
			into = &referenced
		case "Anonymous":
			into = &anonymous
		default:
			continue
		}
		if *into, err = strconv.ParseFloat(fields[0], 64); err != nil {
			return Resident{}, fmt.Errorf("read the touched memory of pid %d: %s: %w", pid, key, err)
		}
	}
	if err := sc.Err(); err != nil {
		return Resident{}, fmt.Errorf("read the touched memory of pid %d: %w", pid, err)
	}
	flush()
	if mappings == 0 {
		return Resident{}, fmt.Errorf("no mappings in the smaps of pid %d", pid)
	}
	r.RSS = r.Anon + r.File
	return r, nil
}

func procPath(pid int, name string) string {
	if pid == 0 {
		return "/proc/self/" + name
	}
	return fmt.Sprintf("/proc/%d/%s", pid, name)
}
