package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The watchdog accounts for each sandbox as a whole, from outside the code's reach: the hard rlimits the driver
// sets bound each process, so without it Limits.Processes processes of Limits.Memory each were within reach of one
// call, and the driver's own housekeeping (ending a call's leftover processes, the CPU allowance between calls) is
// code the cell can switch off. A cgroup would do this in the kernel, but a platform that is not given one
// (a container, a shell) cannot make it, so the platform looks at /proc instead: every process of a sandbox is in
// its pid namespace, which the code cannot leave (it can make no user namespace, so no pid namespace either).
//
// What it cannot see: CPU time of a process reaped without being waited for (SIGCHLD ignored) between two looks;
// memory allocated and freed between two looks. Both are still bounded per process by the rlimits and per call by
// the wall clock.

// watchEvery is how often the watchdog looks at the sandboxes.
const watchEvery = 250 * time.Millisecond

// clockTick is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on every Linux architecture Go supports.
const clockTick = time.Second / 100

// watchdog looks at every live sandbox of a Runner on each tick, at its processes only (Kernel.processes).
type watchdog struct {
	mu      sync.Mutex
	kernels map[*Kernel]struct{}
	running bool
}

func (w *watchdog) add(k *Kernel) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.kernels == nil {
		w.kernels = map[*Kernel]struct{}{}
	}
	w.kernels[k] = struct{}{}
	if !w.running {
		w.running = true
		go w.loop()
	}
}

func (w *watchdog) remove(k *Kernel) {
	w.mu.Lock()
	delete(w.kernels, k)
	w.mu.Unlock()
}

// loop runs while there are sandboxes to watch.
func (w *watchdog) loop() {
	tick := time.NewTicker(watchEvery)
	defer tick.Stop()
	for range tick.C {
		w.mu.Lock()
		live := make([]*Kernel, 0, len(w.kernels))
		for k := range w.kernels {
			if k.Ended() {
				delete(w.kernels, k)
				continue
			}
			live = append(live, k)
		}
		if len(live) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		for _, k := range live {
			k.check(k.processes())
		}
	}
}

// proc is what the watchdog reads of one process of a sandbox.
type proc struct {
	pid, ppid int
	start     uint64        // start time, in clock ticks since boot: with pid, who the process is
	own       time.Duration // CPU time of the process (all its threads)
	children  time.Duration // CPU time of the children it waited for
	threads   int
	rss       int64 // bytes
}

// pidNamespace returns the inode of the pid namespace pid is in.
func pidNamespace(pid int) (uint64, error) {
	link, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/pid")
	if err != nil {
		return 0, err
	}
	var ino uint64
	if _, err := fmt.Sscanf(link, "pid:[%d]", &ino); err != nil {
		return 0, fmt.Errorf("pid namespace %q: %w", link, err)
	}
	return ino, nil
}

// descendants lists the process init and every process descended from it that is in the pid namespace ns,
// following /proc/<pid>/task/<tid>/children (each thread lists the children it made), so that a look costs a
// sandbox's processes and not every process of the host. Every process of a sandbox is one: the code cannot leave
// the sandbox's pid namespace, and the kernel gives an orphan to the namespace's init (or to a subreaper inside
// it). A process moved to the init between the reads of its old parent's children and the init's is missed by
// this look, and seen by the next. looked, when set (tests), is told of every pid whose /proc entry is read.
func descendants(init int, ns uint64, looked func(pid int)) []proc {
	page := int64(os.Getpagesize())
	var out []proc
	queue, seen := []int{init}, map[int]bool{init: true}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if looked != nil {
			looked(pid)
		}
		// A pid outside the namespace is one that ended and was taken by another process of the host meanwhile.
		if got, err := pidNamespace(pid); err != nil || got != ns {
			continue
		}
		p, err := readProc(pid, page)
		if err != nil {
			continue // ended meanwhile
		}
		out = append(out, p)
		for _, c := range children(pid) {
			if !seen[c] {
				seen[c] = true
				queue = append(queue, c)
			}
		}
	}
	return out
}

// children lists the children of every thread of pid.
func children(pid int) []int {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		b, err := os.ReadFile(dir + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// childrenListed reports whether this kernel lists a thread's children in /proc (CONFIG_PROC_CHILDREN, set by
// every major distribution's kernel): without it the watchdog scans all of /proc.
func childrenListed() bool {
	_, err := os.Stat("/proc/thread-self/children")
	return err == nil
}

// scanProcs lists the processes of the host whose pid namespace want accepts, by namespace: what the watchdog
// does on a kernel that does not list children (see childrenListed), and the tests' view of what is left.
func scanProcs(want func(ns uint64) bool, looked func(pid int)) map[uint64][]proc {
	found := map[uint64][]proc{}
	dir, err := os.Open("/proc")
	if err != nil {
		return found
	}
	defer dir.Close()
	names, _ := dir.Readdirnames(-1)
	page := int64(os.Getpagesize())
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if looked != nil {
			looked(pid)
		}
		ns, err := pidNamespace(pid)
		if err != nil || !want(ns) {
			continue
		}
		p, err := readProc(pid, page)
		if err != nil {
			continue // ended meanwhile
		}
		found[ns] = append(found[ns], p)
	}
	return found
}

// readProc reads /proc/<pid>/stat.
func readProc(pid int, page int64) (proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, err
	}
	// The command name is in parentheses and may hold anything, parentheses and spaces too: the fields are what
	// follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return proc{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 22 {
		return proc{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	num := func(j int) int64 { n, _ := strconv.ParseInt(f[j], 10, 64); return n }
	ticks := func(j int) time.Duration { return time.Duration(num(j)) * clockTick }
	// f[0] is field 3 of proc(5): state 3, ppid 4, utime 14, stime 15, cutime 16, cstime 17, num_threads 20,
	// starttime 22, rss 24.
	return proc{
		pid:      pid,
		ppid:     int(num(1)),
		own:      ticks(11) + ticks(12),
		children: ticks(13) + ticks(14),
		threads:  int(num(17)),
		start:    uint64(num(19)),
		rss:      num(21) * page,
	}, nil
}

// killProc kills one process of the sandbox whose pid namespace is ns, making sure through a pidfd that the pid
// has not been taken by a process of someone else meanwhile. It returns the pidfd, which tells when the process
// has ended, or -1.
func killProc(p proc, ns uint64) int {
	fd, err := unix.PidfdOpen(p.pid, 0)
	if err != nil {
		return -1 // ended
	}
	// The pidfd holds the process seen from now on: when it is still in the sandbox's namespace, with the start
	// time scanned, it is the one to kill.
	if got, err := pidNamespace(p.pid); err != nil || got != ns {
		unix.Close(fd)
		return -1
	}
	if q, err := readProc(p.pid, 1); err != nil || q.start != p.start {
		unix.Close(fd)
		return -1
	}
	if err := unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0); err != nil {
		unix.Close(fd)
		return -1
	}
	return fd
}

// usage sums what a sandbox's processes use.
type usage struct {
	rss     int64
	threads int
	cpu     time.Duration
}

func sum(ps []proc) usage {
	var u usage
	for _, p := range ps {
		u.rss += p.rss
		u.threads += p.threads
		// What the processes waited for used counts too: a cell's children, and whatever the sandbox's init
		// reaped.
		u.cpu += p.own + p.children
	}
	return u
}

// idleMark is where a sandbox's processes stood when the watchdog first saw it between two calls.
type idleMark struct {
	call int // the number of the call it follows
	cpu  map[int]time.Duration
}

// check enforces, for one look at a sandbox's processes, the limits of the whole sandbox and, between calls, that
// only its init and the driver run (threads a cell left in the driver may go on, within idleCPU).
func (k *Kernel) check(ps []proc) {
	k.endMu.Lock()
	killed := k.killFor != ""
	k.endMu.Unlock()
	if killed || k.Ended() || len(ps) == 0 {
		return // ending already
	}
	l := k.r.limits
	u := sum(ps)
	var why Limit
	var what string
	switch {
	case u.rss > l.SandboxMemory:
		why, what = LimitMemory, fmt.Sprintf("its processes used %d MiB of memory in all", u.rss>>20)
	case u.threads > l.Processes+1: // +1: the sandbox's init, which runs before the limit is set
		why, what = LimitProcesses, fmt.Sprintf("it ran %d processes and threads", u.threads)
	case u.cpu > l.SandboxCPUTime:
		why, what = LimitCPUTime, fmt.Sprintf("its processes used %s of CPU time in all", u.cpu.Round(time.Second))
	}
	if why == "" {
		k.endMu.Lock()
		inCall, calls := k.expecting, k.calls
		k.endMu.Unlock()
		if !inCall {
			if k.hasLeftovers(ps) {
				// Signalled, not waited for: a wait here would hold every other sandbox's check, and the next look
				// signals what is still there.
				for _, fd := range k.signalLeftovers(ps) {
					unix.Close(int(fd.Fd))
				}
			}
			if k.idle == nil || k.idle.call != calls {
				k.idle = &idleMark{call: calls, cpu: map[int]time.Duration{}}
				for _, p := range ps {
					k.idle.cpu[p.pid] = p.own
				}
				return
			}
			var grew time.Duration
			for _, p := range ps {
				grew += max(0, p.own-k.idle.cpu[p.pid])
			}
			if grew > idleCPU {
				why, what = LimitCPUTime, fmt.Sprintf("it used %s of CPU time between calls", grew.Round(time.Second))
			}
		}
	}
	if why == "" {
		return
	}
	k.r.log.Warn("sandbox: ending a sandbox over its limits", "limit", why, "why", what)
	// kill waits for the sandbox to end: the other sandboxes are looked at meanwhile.
	go k.kill(why)
}

// hasLeftovers says whether ps holds a process other than the sandbox's init and its driver.
func (k *Kernel) hasLeftovers(ps []proc) bool {
	for _, p := range ps {
		if p.pid != k.init && p.pid != k.driver {
			return true
		}
	}
	return false
}

// killLeftovers kills every process of the sandbox but its init and the driver, and waits a moment for them to
// end: what a call started does not outlive it, whatever the code did to the driver's own clean-up.
func (k *Kernel) killLeftovers(ps []proc) {
	fds := k.signalLeftovers(ps)
	// A pidfd is readable once its process has ended. SIGKILL cannot be caught: the wait is bounded for a
	// process stuck in the kernel.
	deadline := time.Now().Add(2 * time.Second)
	for _, fd := range fds {
		for left := time.Until(deadline); left > 0; left = time.Until(deadline) {
			if _, err := unix.Poll([]unix.PollFd{fd}, int(left/time.Millisecond)+1); err != unix.EINTR {
				break
			}
		}
		unix.Close(int(fd.Fd))
	}
}

// signalLeftovers sends SIGKILL to every process of ps but the sandbox's init and driver, and returns the pidfds
// of those it signalled, for a caller that waits for them to end.
func (k *Kernel) signalLeftovers(ps []proc) []unix.PollFd {
	var fds []unix.PollFd
	for _, p := range ps {
		if p.pid != k.init && p.pid != k.driver {
			if fd := killProc(p, k.pidNS); fd >= 0 {
				fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
			}
		}
	}
	return fds
}

// processes lists the sandbox's processes now: its init and the init's descendants.
func (k *Kernel) processes() []proc {
	if !k.r.walk {
		return scanProcs(func(ns uint64) bool { return ns == k.pidNS }, k.r.looked)[k.pidNS]
	}
	return descendants(k.init, k.pidNS, k.r.looked)
}
