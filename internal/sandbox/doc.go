// Package sandbox runs model-written Python (the Assistants API's code_interpreter) in a bubblewrap sandbox:
// detecting whether one can be made on the machine (New; Check without starting one), running one cell in a
// fresh sandbox (Runner.Run), keeping a warm sandbox that runs successive cells in the same globals like a
// notebook (Kernel), and keeping one warm sandbox per conversation (Pool), shared fairly between accounts
// (Pool.ExecFor). There is no fallback: when no sandbox can be made, New says what is
// missing and how to install it, and no code runs.
//
// It must not import the event log, the read models, handlers or any face: the run worker calls it with code and
// files and turns the Result into run steps, Files and messages.
//
// # What a sandbox is
//
// One bubblewrap (Debian's bubblewrap, found at /usr/bin/bwrap) holding one python3 (Debian's, /usr/bin/python3:
// the sandbox mounts only /usr, so a pyenv shim cannot run in it) that runs driver.py. The code runs:
//
//   - as uid/gid 65534 (nobody) in a user namespace of its own, with no capabilities and no way to make further
//     user namespaces (--disable-userns). When the platform runs as root, bubblewrap itself runs as 65534 on the
//     host too: the kernel exempts root from RLIMIT_NPROC.
//   - in new pid, network, ipc, uts and cgroup namespaces: it sees only its own processes and has only a loopback
//     interface of its own, so no network at all (no DNS either: there is no resolver to ask and nothing to reach).
//     Abstract unix sockets belong to the network namespace, so the host's are out of reach too.
//   - on a root of its own: /usr read-only, the /bin, /lib... links into it, a handful of /etc files python needs
//     (alternatives, ld.so.cache, fonts, matplotlibrc, localtime, mime.types) read-only, a fresh /proc for its pid
//     namespace, a minimal /dev (null, zero, full, random, urandom, tty, pts), and three writable tmpfs bounded by
//     Limits.Disk: the working dir /mnt/data (WorkDir), /tmp and /dev/shm. The root and /dev are read-only. The
//     platform's data dir, admin.key, /etc/shadow, /home, /root, /var, /run and other sandboxes' files are not in
//     it at all.
//   - with a cleared environment (PATH, HOME=/tmp, LANG, MPLBACKEND=Agg, one BLAS thread; the driver puts
//     MPLCONFIGDIR under TMPDIR),
//     in a new session (no TIOCSTI into a terminal), with stdin on /dev/null and no other descriptor of the
//     platform's: bubblewrap passes on whatever the platform's process holds without close-on-exec (some it
//     may have inherited), so the driver closes everything but its channel before any code runs.
//   - under hard rlimits the driver sets before any cell runs, which the code cannot raise: address space per
//     process (Limits.Memory), processes and threads (Limits.Processes, counted in the sandbox's own user
//     namespace, so that one sandbox's fork bomb does not starve another), file size (Limits.FileSize), open
//     files, no core dumps, and CPU time: a soft limit moved before each call (the code gets an exception past
//     Limits.CPUTime) and a hard one over the sandbox's life (Limits.SandboxCPUTime).
//   - under a wall-clock limit per call (Limits.WallTime) enforced by the platform, which then kills the
//     sandbox's init: the kernel kills every process of its pid namespace with it, whatever session or process
//     group they made. bubblewrap is started with Pdeathsig and --die-with-parent, so the sandbox dies with the
//     platform.
//   - watched by the platform for the number of files in its tmpfs (Limits.FileCount), which no mount option
//     bubblewrap offers can bound and which costs kernel memory; past it the sandbox is killed.
//   - watched as a whole by the platform's watchdog (watchdog.go), which looks every quarter of a second at the
//     processes of the sandbox's pid namespace in /proc (its init and the init's descendants, not every process
//     of the host): past Limits.SandboxMemory of resident memory in all,
//     Limits.Processes processes and threads, Limits.SandboxCPUTime of CPU time in all, or 5 s of CPU time
//     between calls, it kills the sandbox. (A cgroup would do this in the kernel; the hosts Contrail runs on
//     mostly do not delegate one.)
//
// After each call every process the call left running is killed, by the driver and then from outside by the
// platform (through pidfds, after checking each is still the sandbox's): a cell's processes end with it. Threads
// it left running in python go on, under a small CPU allowance between calls.
//
// The channel is the platform's too: the reader takes frames only while the start or a call awaits one, hands
// them over one at a time (each bounded in size), and ends the sandbox when the channel closes, when a frame
// comes between calls, or when a frame breaks the protocol. So code that takes over the driver can lie about its
// own call, but cannot outlive the call's wall clock, hold the platform's memory, or keep a sandbox running.
//
// # Results
//
// A call returns stdout and stderr (each cut at Limits.Output, with a note saying how much was written), the exit
// status, the exception that ended the code, whether it timed out, which limit stopped it (as far as can be told:
// an exception of the kind a limit raises, a signal, or the platform's own kill), whether the sandbox ended, and
// the files in the working dir the call created or changed (bounded in count and size; the rest are listed as
// omitted), with images (PNG, JPEG, GIF, WebP) flagged. Output written before a timeout is kept: the driver
// forwards it as it is written.
//
// # What it does not protect against
//
//   - Kernel bugs. The code talks to the host kernel directly; there is no seccomp filter and no virtual machine.
//     A kernel exploit reachable from an unprivileged user namespace escapes. For hostile multi-tenant use, run
//     Contrail itself in a VM (or replace bubblewrap with gVisor or Firecracker).
//   - Total memory between two looks of the watchdog. RLIMIT_AS bounds each process; the watchdog bounds the
//     sum, a quarter of a second late at worst (a sandbox may briefly hold up to Limits.Processes processes of
//     Limits.Memory each), plus up to three tmpfs of Limits.Disk (which live in RAM). On a small host, lower
//     Limits.Processes or Limits.Memory, and size Pool's Max accordingly. CPU time of a process reaped without
//     being waited for escapes the watchdog's sum; RLIMIT_CPU and the wall clock still bound it.
//   - CPU share. Nothing gives a sandbox a share of the CPU smaller than any other process's: a busy sandbox
//     slows the host for up to Limits.WallTime per call (Limits.Processes processes at once).
//   - Information about the host. /usr is the host's (installed packages and their versions are visible), and
//     /proc shows host-wide figures (cpuinfo, meminfo, loadavg, uptime, mounts of the sandbox) and the kernel
//     version. Host processes, files outside /usr and the few /etc files, and the network are not visible.
//   - Timing side channels between sandboxes and the host, which share CPUs and caches.
//   - The code's own results, and the driver's housekeeping. The driver runs in the same process as the code,
//     which can forge what the driver reports (its output, its files, its exit status) or undo what the driver
//     does for it (ending a call's leftover processes, the per-call CPU limit, which it may raise up to the
//     sandbox's hard limit): a sandbox's results are only as trustworthy as the code that ran in it. What holds
//     whatever the code does is enforced from outside its reach: the namespaces and mounts, the hard rlimits,
//     the wall clock of each call, the channel's rules, the end of a call's leftover processes, the watchdog,
//     the file-count watch, and the idle timeout of a warm sandbox. The platform
//     bounds every frame it reads, checks every file name, and ends a sandbox that breaks the protocol, so a
//     forged result can lie only about that sandbox's own call.
//   - Another call with the same key. A warm sandbox keeps everything earlier calls left, on purpose; a key must
//     be one conversation (one thread of one account), never shared.
package sandbox
