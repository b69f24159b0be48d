package procmem

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A process's file-backed resident memory holds the pages it touched only to start (package init, provisioning) as
// well as those it still uses, and the kernel drops the first kind only under memory pressure. PageOutBinary drops
// them at once, the way reclaim would, so that what the process maps back afterwards is what it uses: the least it
// holds resident. It is a measurement, for the bench: a node never does it to itself.

// PageOutBinary asks the kernel to reclaim the pages of process pid's read-only mappings of its own executable (its
// code and read-only data), as memory pressure would: process_madvise(MADV_PAGEOUT). A page that another process
// maps too is left alone. It needs the right to trace the process and, on most kernels, CAP_SYS_NICE (root). It
// returns how much of the executable was resident before, in KiB.
func PageOutBinary(pid int) (float64, error) {
	exe, err := os.Readlink(procPath(pid, "exe"))
	if err != nil {
		return 0, fmt.Errorf("page out the binary of pid %d: %w", pid, err)
	}
	maps, err := binaryMappings(pid, exe)
	if err != nil {
		return 0, err
	}
	if len(maps) == 0 {
		return 0, fmt.Errorf("page out the binary of pid %d: no read-only mapping of %s", pid, exe)
	}
	var before float64
	// The ranges are addresses in the other process, never dereferenced here: plain integers, not Go pointers.
	iov := make([]remoteRange, len(maps))
	for i, m := range maps {
		before += m.residentKiB
		iov[i] = remoteRange{base: m.start, len: m.end - m.start}
	}
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return 0, fmt.Errorf("page out the binary of pid %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	_, _, errno := unix.Syscall6(unix.SYS_PROCESS_MADVISE, uintptr(pidfd), uintptr(unsafe.Pointer(&iov[0])),
		uintptr(len(iov)), unix.MADV_PAGEOUT, 0, 0)
	if errno != 0 {
		return 0, fmt.Errorf("page out the binary of pid %d: process_madvise: %w", pid, errno)
	}
	return before, nil
}

// remoteRange is a struct iovec naming a range of another process's memory.
type remoteRange struct{ base, len uintptr }

// mapping is one mapping of a file in a process, with what of it is resident.
type mapping struct {
	start, end  uintptr
	residentKiB float64
}

// binaryMappings lists process pid's read-only mappings of the file at path (a private writable mapping holds the
// process's own copies of written data, which are its anonymous memory, not the file's).
func binaryMappings(pid int, path string) ([]mapping, error) {
	f, err := os.Open(procPath(pid, "smaps"))
	if err != nil {
		return nil, fmt.Errorf("read the mappings of pid %d: %w", pid, err)
	}
	defer f.Close()
	var out []mapping
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			// A mapping's header: "start-end perms offset dev inode [path]".
			in = false
			lo, hi, ok := strings.Cut(fields[0], "-")
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, fmt.Errorf("read the mappings of pid %d: bad header %q", pid, sc.Text())
			}
			if len(fields) >= 6 && strings.Join(fields[5:], " ") == path && !strings.Contains(fields[1], "w") {
				out = append(out, mapping{start: uintptr(start), end: uintptr(end)})
				in = true
			}
			continue
		}
		if in && fields[0] == "Rss:" && len(fields) == 3 {
			kib, err := strconv.ParseFloat(fields[1], 64)
			if err != nil {
				return nil, fmt.Errorf("read the mappings of pid %d: Rss: %w", pid, err)
			}
			out[len(out)-1].residentKiB = kib
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the mappings of pid %d: %w", pid, err)
	}
	return out, nil
}
