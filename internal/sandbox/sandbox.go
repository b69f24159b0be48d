package sandbox

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

// WorkDir is the working dir of the code inside the sandbox, where its input files are and where the files it
// writes are taken from: the path OpenAI's code interpreter uses, which model-written code often names.
const WorkDir = "/mnt/data"

// sandboxUID is the user the code runs as inside the sandbox (nobody), and, when the platform runs as root, the
// user bubblewrap itself runs as on the host.
const sandboxUID = 65534

// Debian's paths: the sandbox mounts /usr only, so a python3 from elsewhere (a pyenv shim in $HOME) cannot run in
// it.
const (
	DefaultBwrap  = "/usr/bin/bwrap"
	DefaultPython = "/usr/bin/python3"
)

//go:embed driver.py
var driverSource string

// Config says where the sandbox's programs are and what the code may use.
type Config struct {
	// Bwrap is bubblewrap's path; DefaultBwrap when empty.
	Bwrap string
	// Python is the interpreter the code runs in, a path under /usr; DefaultPython when empty.
	Python string
	// Limits bound each sandbox; zero fields take DefaultLimits.
	Limits Limits
	// Logger receives what an operator may want to know (a sandbox that ended, a protocol violation).
	Logger *slog.Logger
}

// Runner makes sandboxes on this machine. New returns one only when a sandbox could be made and was seen
// isolated; it is safe for concurrent use.
type Runner struct {
	bwrap, python string
	limits        Limits
	// cred is the host user bubblewrap runs as: nobody when the platform is root (so that RLIMIT_NPROC applies:
	// the kernel exempts root from it), else the platform's own user.
	cred    *syscall.Credential
	system  []string // bubblewrap's arguments for the read-only system part
	log     *slog.Logger
	missing []string
	// watchdog accounts for the memory, processes and CPU time of each sandbox as a whole.
	watchdog *watchdog
	// walk says the watchdog finds a sandbox's processes from its init down (childrenListed), not by scanning
	// every process of the host.
	walk bool
	// looked, when set (by tests), is told of each pid whose /proc entry the watchdog reads.
	looked func(pid int)
	// started, when set (by tests), is told of each sandbox once it is ready.
	started func(*Kernel)
}

// New checks that sandboxes can be made here (bubblewrap and Debian's python3 are installed, and bubblewrap can
// build one with no network and the code running as nobody) and returns a Runner. When they cannot, the error
// (code errs.Unavailable) says what is missing and how to install it: code never runs unsandboxed.
func New(ctx context.Context, cfg Config) (*Runner, error) {
	r := &Runner{bwrap: cfg.Bwrap, python: cfg.Python, log: cfg.Logger, watchdog: &watchdog{}, walk: childrenListed()}
	if r.bwrap == "" {
		r.bwrap = DefaultBwrap
	}
	if r.python == "" {
		r.python = DefaultPython
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if r.limits, err = cfg.Limits.withDefaults(); err != nil {
		return nil, err
	}
	if err := checkPrograms(r.bwrap, r.python); err != nil {
		return nil, err
	}
	if os.Geteuid() == 0 {
		r.cred = &syscall.Credential{Uid: sandboxUID, Gid: sandboxUID, Groups: []uint32{}}
	}
	r.system = systemMounts()
	// The probe's code is the package's own: the limit on the size of cells is for the callers'.
	probe := *r
	probe.limits.Code = max(r.limits.Code, len(probeCode))
	if r.missing, err = probe.probe(ctx); err != nil {
		return nil, err
	}
	if len(r.missing) > 0 {
		r.log.Warn("sandbox: python modules missing (make deps installs python3-numpy, python3-pandas, python3-matplotlib)",
			"missing", r.missing)
	}
	return r, nil
}

// Check says, without starting a sandbox, what New would find missing on this machine first: bubblewrap or
// Debian's python3 not installed (wrapping ErrUnsupported), or a python outside /usr. nil means New may still
// fail, but only once it has tried a sandbox (a machine without user namespaces, say).
func Check(cfg Config) error {
	bwrap, python := cfg.Bwrap, cfg.Python
	if bwrap == "" {
		bwrap = DefaultBwrap
	}
	if python == "" {
		python = DefaultPython
	}
	return checkPrograms(bwrap, python)
}

func checkPrograms(bwrap, python string) error {
	if !strings.HasPrefix(filepath.Clean(python), "/usr/") {
		return unavailable("the sandbox's python %s is not under /usr, the only part of the system a sandbox "+
			"sees: use Debian's /usr/bin/python3", python)
	}
	var missing []string
	for _, p := range [][2]string{{bwrap, "bubblewrap"}, {python, "python3"}} {
		if problem := checkProgram(p[0], p[1]); problem != "" {
			missing = append(missing, problem)
		}
	}
	if len(missing) > 0 {
		e := unavailable("%s", strings.Join(missing, "; "))
		e.Err = ErrUnsupported
		return e
	}
	return nil
}

// checkProgram says what is wrong with the program at path, which Debian's package pkg installs, or "".
func checkProgram(path, pkg string) string {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("%s is not installed (no %s): install Debian's %s package (apt-get install %s, or make deps)",
			pkg, path, pkg, pkg)
	case err != nil:
		return fmt.Sprintf("%s at %s cannot be used: %v", pkg, path, err)
	case info.IsDir() || info.Mode()&0o111 == 0:
		return fmt.Sprintf("%s at %s is not an executable file: install Debian's %s package", pkg, path, pkg)
	}
	return ""
}

// ErrUnsupported is wrapped by New's error when this machine cannot make sandboxes at all: bubblewrap or python3
// is not installed, or bubblewrap cannot create namespaces here. Any other error from New is a fault of this
// package's sandbox, not of the machine.
var ErrUnsupported = errors.New("this machine cannot make code sandboxes")

func unavailable(format string, args ...any) *errs.Error {
	return errs.E(errs.Unavailable, "code_interpreter is not available on this server: "+format, args...)
}

// probeCode checks, inside a fresh sandbox, what the package promises (the code's user, the network) and lists
// the modules a code interpreter is expected to have that are missing.
const probeCode = `
import os, socket, importlib.util
print(os.getuid(), os.getgid())
print(",".join(sorted(name for _, name in socket.if_nameindex())))
print(",".join(m for m in ("numpy", "pandas", "matplotlib") if importlib.util.find_spec(m) is None))
`

func (r *Runner) probe(ctx context.Context) (missing []string, err error) {
	res, err := r.Run(ctx, Cell{Code: probeCode})
	if err != nil {
		if msg, bare := r.bareBwrap(ctx); bare != nil {
			e := unavailable("bubblewrap cannot create namespaces on this machine: %s (it needs user namespaces: "+
				"sysctl user.max_user_namespaces above 0, and kernel.unprivileged_userns_clone=1 or, on Ubuntu, "+
				"kernel.apparmor_restrict_unprivileged_userns=0 where those exist)", msg)
			e.Err = ErrUnsupported
			return nil, e
		}
		return nil, unavailable("bubblewrap works here but the sandbox could not be made: %s", errs.MessageOf(err))
	}
	lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if res.ExitCode != 0 || len(lines) != 3 {
		return nil, unavailable("a test sandbox did not run as expected (exit %d): %s", res.ExitCode, res.Stdout+res.Stderr)
	}
	if want := fmt.Sprintf("%d %d", sandboxUID, sandboxUID); lines[0] != want {
		return nil, unavailable("code in a test sandbox ran as uid/gid %q, not %q", lines[0], want)
	}
	if lines[1] != "lo" {
		return nil, unavailable("a test sandbox has network interfaces %q, not only lo", lines[1])
	}
	if lines[2] != "" {
		missing = strings.Split(lines[2], ",")
	}
	return missing, nil
}

// bareBwrap runs bubblewrap with the fewest options that still need its namespaces, to tell a machine that
// cannot make sandboxes from a sandbox profile that fails; it returns bubblewrap's message when it fails.
func (r *Runner) bareBwrap(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "--",
		r.python, "-c", "pass")
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return msg, err
	}
	return "", nil
}

// Missing lists the modules a code interpreter is expected to have (numpy, pandas, matplotlib) that the sandbox's
// python lacks; `make deps` installs them from Debian's packages.
func (r *Runner) Missing() []string { return append([]string(nil), r.missing...) }

// Limits returns the limits every sandbox of r has.
func (r *Runner) Limits() Limits { return r.limits }

// Run runs one cell in a fresh sandbox and ends it: nothing is kept.
func (r *Runner) Run(ctx context.Context, cell Cell) (Result, error) {
	k, err := r.Start(ctx)
	if err != nil {
		return Result{}, err
	}
	defer k.Close()
	return k.Exec(ctx, cell)
}

// systemMounts are bubblewrap's arguments for the read-only system: /usr, the top-level links into it (or the
// directories themselves where /usr is not merged), and the few files of /etc that python and its libraries read.
// Nothing else of the host is visible: no /home, /root, /var, /run, /srv, the platform's data dir, or /etc/shadow.
func systemMounts() []string {
	args := []string{"--ro-bind", "/usr", "/usr"}
	for _, dir := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		info, err := os.Lstat(dir)
		if err != nil {
			continue
		}
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err := os.Readlink(dir); err == nil {
				args = append(args, "--symlink", target, dir)
			}
			continue
		}
		args = append(args, "--ro-bind", dir, dir)
	}
	for _, f := range []string{
		"/etc/alternatives", // Debian's BLAS and LAPACK for numpy are links through it
		"/etc/ld.so.cache",
		"/etc/fonts",        // matplotlib's font lookup
		"/etc/matplotlibrc", // Debian's matplotlib reads its defaults here
		"/etc/localtime",
		"/etc/mime.types",
	} {
		args = append(args, "--ro-bind-try", f, f)
	}
	return args
}

// args are bubblewrap's arguments for one sandbox; infoFD is where bubblewrap writes the pid of the sandbox's
// init and its namespaces.
func (r *Runner) args(infoFD int) []string {
	l := r.limits
	size := func(n int64) string { return strconv.FormatInt(n, 10) }
	shm := min(l.Disk, 64<<20)
	args := []string{
		// A new user, pid, network, ipc, uts and cgroup namespace: the network has only its own lo.
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--uid", strconv.Itoa(sandboxUID), "--gid", strconv.Itoa(sandboxUID),
		"--hostname", "sandbox",
		"--new-session", // no TIOCSTI into the platform's terminal
		"--die-with-parent",
		"--clearenv",
		"--info-fd", strconv.Itoa(infoFD),
	}
	args = append(args, r.system...)
	args = append(args,
		"--proc", "/proc",
		"--dev", "/dev",
		"--size", size(shm), "--tmpfs", "/dev/shm",
		"--size", size(l.Disk), "--tmpfs", "/tmp",
		"--size", size(l.Disk), "--tmpfs", WorkDir,
		// The root and /dev are tmpfs too, with no size: read-only, so that nothing can be written outside the
		// three bounded ones above.
		"--remount-ro", "/dev",
		"--remount-ro", "/",
		"--chdir", WorkDir,
	)
	for _, kv := range [][2]string{
		{"PATH", "/usr/local/bin:/usr/bin:/bin"},
		{"HOME", "/tmp"},
		{"TMPDIR", "/tmp"},
		{"USER", "sandbox"},
		{"LANG", "C.UTF-8"},
		{"MPLBACKEND", "Agg"},
		{"PYTHONUNBUFFERED", "1"},        // output written before a kill still reaches the platform
		{"PYTHONDONTWRITEBYTECODE", "1"}, // no __pycache__ among the output files
		// One BLAS thread: each thread counts against the process limit, and a many-core host would otherwise
		// start one per core at `import numpy`.
		{"OPENBLAS_NUM_THREADS", "1"},
		{"OMP_NUM_THREADS", "1"},
		{"MKL_NUM_THREADS", "1"},
		// glibc reserves 64 MiB of address space per thread's malloc arena: without a cap a few threads exhaust
		// the address-space limit while using little memory.
		{"MALLOC_ARENA_MAX", "2"},
	} {
		args = append(args, "--setenv", kv[0], kv[1])
	}
	// Compiled under a name of its own, so that the driver can leave its frames out of the cells' tracebacks.
	return append(args, "--", r.python, "-c",
		`import sys; exec(compile(sys.argv[1], "<sandbox driver>", "exec"))`, driverSource)
}

// driverConfig is the 'L' frame: the limits the driver sets before any code runs, and the bounds of its reports.
func (r *Runner) driverConfig() map[string]any {
	l := r.limits
	return map[string]any{
		"work":          WorkDir,
		"memory":        l.Memory,
		"processes":     l.Processes,
		"file_size":     l.FileSize,
		"open_files":    l.OpenFiles,
		"cpu_total":     seconds(l.SandboxCPUTime),
		"idle_cpu":      seconds(idleCPU),
		"output":        l.Output,
		"max_files":     l.OutputFiles,
		"max_file_size": l.OutputFileSize,
		"max_total":     l.OutputBytes,
		"scan_limit":    l.FileCount + 1,
	}
}

// seconds rounds d up to whole seconds, the unit of RLIMIT_CPU.
func seconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}
