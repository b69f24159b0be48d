package sandbox

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The escape suite: code that tries to get out of the sandbox or to hurt the platform. Each attempt must be
// contained, the test process (standing in for the server) must stay healthy, and the call must end cleanly with
// a result that says what happened.

// escapeLimits are tight enough to make the bombs quick.
// The wall-clock limit is far above the CPU limit: the machine running the tests may be busy.
var escapeLimits = Limits{
	WallTime:  60 * time.Second,
	CPUTime:   time.Second,
	Memory:    512 << 20,
	Processes: 32,
	FileSize:  8 << 20,
	Disk:      32 << 20,
	FileCount: 2000,
}

func secret(t *testing.T) string {
	t.Helper()
	return "contrail-secret-" + rand.Text()
}

// pythonList renders Go strings as a Python list literal.
func pythonList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = strconv.Quote(s) // Go's quoting of printable ASCII is valid Python
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// healthy checks that the test process can still do what a server does: start a process, use the network.
func healthy(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/true").Run(); err != nil {
		t.Errorf("the test process cannot start a process any more: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Errorf("the test process cannot listen any more: %v", err)
		return
	}
	ln.Close()
}

// searchPy defines search(secret, paths): the regular files under paths (followed when they are links, as
// /proc/N/root and /proc/N/fd/M are) that hold secret. Pipes and devices are skipped: reading one could block.
const searchPy = `
import os, stat
def search(secret, paths):
    found = []
    def check(path):
        try:
            if stat.S_ISREG(os.stat(path).st_mode):
                with open(path, "rb") as f:
                    if secret.encode() in f.read(1 << 20):
                        found.append(path)
        except OSError:
            pass
    for top in paths:
        top = top if top.startswith("/") else "/" + top
        if not os.path.isdir(top):
            check(top)
            continue
        for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
            for name in filenames:
                check(os.path.join(dirpath, name))
    return found
`

// countAccepts counts the connections ln accepts until it is closed.
func countAccepts(ln net.Listener, n *atomic.Int32) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		n.Add(1)
		c.Close()
	}
}

func TestEscapeNetwork(t *testing.T) {
	r := newRunner(t, escapeLimits)
	var reached atomic.Int32
	tcp, err := net.Listen("tcp", ":0") // every address of the host
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	go countAccepts(tcp, &reached)
	// A stand-in for a DNS server: it answers any datagram, so a query that got out would get a reply.
	udp, err := net.ListenPacket("udp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := udp.ReadFrom(buf)
			if err != nil {
				return
			}
			reached.Add(1)
			_, _ = udp.WriteTo(buf[:n], from)
		}
	}()
	abstract := "\x00contrail-escape-" + rand.Text()
	unix, err := net.Listen("unix", "@"+abstract[1:])
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	go countAccepts(unix, &reached)

	hosts := []string{"127.0.0.1", "::1"}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipnet, ok := a.(*net.IPNet); ok && !ipnet.IP.IsLoopback() && !ipnet.IP.IsLinkLocalUnicast() {
			hosts = append(hosts, ipnet.IP.String())
		}
	}
	tcpPort := tcp.Addr().(*net.TCPAddr).Port
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port
	res := run(t, r, fmt.Sprintf(`
import socket
def attempt(what, f):
    try:
        f()
        print("ESCAPED", what)
    except OSError as e:
        print("blocked", what, e)
def tcp(host):
    socket.create_connection((host, %d), timeout=2).close()
def udp(host):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(b"query", (host, %d))
    s.recvfrom(512)
def unix():
    s = socket.socket(socket.AF_UNIX)
    s.connect(%q)
for host in %s + ["1.1.1.1", "8.8.8.8"]:
    attempt("tcp " + host, lambda: tcp(host))
    attempt("udp " + host, lambda: udp(host))
attempt("dns example.com", lambda: socket.getaddrinfo("example.com", 80))
attempt("dns localhost.localdomain", lambda: socket.getaddrinfo("contrail-test.invalid", 80))
attempt("abstract unix socket", unix)
print("interfaces", [name for _, name in socket.if_nameindex()])
`, tcpPort, udpPort, abstract, pythonList(hosts)))

	if strings.Contains(res.Stdout, "ESCAPED") || res.ExitCode != 0 {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the test's listeners were reached %d times", n)
	}
	if !strings.Contains(res.Stdout, "interfaces ['lo']") {
		t.Errorf("interfaces: %s", res.Stdout)
	}
	// Every attempt was made and reported.
	if got, want := strings.Count(res.Stdout, "blocked "), 2*(len(hosts)+2)+3; got != want {
		t.Errorf("%d attempts blocked, want %d:\n%s", got, want, res.Stdout)
	}
	healthy(t)
}

func TestEscapeReadSecrets(t *testing.T) {
	r := newRunner(t, escapeLimits)
	token := secret(t)
	// A stand-in for the data dir and its admin.key, readable by anyone on the host: only the sandbox's mounts
	// keep them out.
	dataDir, err := os.MkdirTemp("", "contrail-escape-data-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dataDir)
	if err := os.Chmod(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	adminKey := filepath.Join(dataDir, "admin.key")
	if err := os.WriteFile(adminKey, []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	targets := []string{adminKey, dataDir, "/etc/shadow", "/etc/passwd", "/root", "/home", cwd, "/work",
		"/proc/1/root" + adminKey, "/proc/self/root" + adminKey, "/sys/kernel"}
	res := run(t, r, fmt.Sprintf(`
import os
secret = %q
for path in %s:
    try:
        if os.path.isdir(path):
            print("LISTED", path, os.listdir(path))
        else:
            print("READ", path, open(path).read()[:100])
    except OSError as e:
        print("blocked", path, e.strerror)
print("root", sorted(os.listdir("/")))
# Look for the secret in every regular file the sandbox can see but /usr (the host's, read-only) and /proc.
`+searchPy+`
tops = [d for d in os.listdir("/") if d not in ("usr", "proc") and not os.path.islink("/" + d)]
print("found", search(secret, tops) +
      search(secret, ["/proc/self/environ", "/proc/self/cmdline", "/proc/1/environ", "/proc/1/cmdline"]))
`, token, pythonList(targets)))

	if res.ExitCode != 0 || strings.Contains(res.Stdout, "READ ") || strings.Contains(res.Stdout, "LISTED ") ||
		strings.Contains(res.Stdout, token) {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "found []") {
		t.Errorf("the secret was found:\n%s", res.Stdout)
	}
	// The sandbox's root holds the system links, /usr, the few /etc files, /dev, /proc, /tmp and the working dir.
	for _, line := range lines(res.Stdout) {
		if rest, ok := strings.CutPrefix(line, "root "); ok {
			for _, name := range []string{"'home'", "'root'", "'work'", "'var'", "'run'", "'srv'", "'opt'", "'sys'"} {
				if strings.Contains(rest, name) {
					t.Errorf("the sandbox's root shows %s: %s", name, rest)
				}
			}
		}
	}
	healthy(t)
}

func TestEscapeInheritedDescriptors(t *testing.T) {
	r := newRunner(t, escapeLimits)
	token := secret(t)
	path := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(path, []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	// A descriptor without close-on-exec, like one a server inherits from whatever started it: bubblewrap passes
	// such descriptors on.
	fd, err := syscall.Open(path, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	res := run(t, r, fmt.Sprintf(`
import os
secret = %q
for fd in os.listdir("/proc/self/fd"):
    try:
        print("fd", fd, os.readlink("/proc/self/fd/" + fd))
    except OSError:
        pass
for fd in range(1024):
    try:
        os.lseek(fd, 0, 0)
        if secret.encode() in os.read(fd, 4096):
            print("READ", fd)
    except OSError:
        pass
`, token))
	if strings.Contains(res.Stdout, "READ") || res.ExitCode != 0 {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	// Pipes and /dev/null only: stdin, stdout, stderr, the channel, the driver's own.
	for _, line := range lines(res.Stdout) {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "fd" && f[2] != "/dev/null" && !strings.HasPrefix(f[2], "pipe:") &&
			!strings.HasPrefix(f[2], "/proc/") {
			t.Errorf("the sandbox has descriptor %s on %s", f[1], f[2])
		}
	}
	healthy(t)
}

func TestEscapeAnotherThreadsFiles(t *testing.T) {
	r := newRunner(t, escapeLimits)
	p := NewPool(r, PoolConfig{})
	defer p.Shutdown()
	token := secret(t)
	ctx := context.Background()

	// Thread A keeps its secret in its working dir, /tmp and /dev/shm, and is running a cell while B looks.
	res, err := p.Exec(ctx, "thread-a", Cell{Code: fmt.Sprintf(`
for path in ("/mnt/data/a.txt", "/tmp/a.txt", "/dev/shm/a.txt"):
    open(path, "w").write(%q)
`, token)})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("thread A: %v %s", err, res.Stderr)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := p.Exec(ctx, "thread-a", Cell{Code: "import time\nf = open('a.txt')\ntime.sleep(3)"}); err != nil {
			t.Errorf("thread A's second call: %v", err)
		}
	}()
	time.Sleep(500 * time.Millisecond) // let A's cell start; B's search is valid whether or not it has
	res, err = p.Exec(ctx, "thread-b", Cell{Code: fmt.Sprintf(`
import os
secret = %q
print("workdir", os.listdir("."), "tmp", os.listdir("/tmp"), "shm", os.listdir("/dev/shm"))
`+searchPy+`
pids = [p for p in os.listdir("/proc") if p.isdigit()]
# Through every process the sandbox can see, into its root and its open files.
roots = ["/proc/%%s/root/%%s" %% (p, d) for p in pids for d in ("mnt/data", "tmp", "dev/shm")]
fds = ["/proc/%%s/fd" %% p for p in pids]
print("pids", sorted(int(p) for p in pids))
print("found", search(secret, ["/mnt", "/tmp", "/dev/shm"] + roots + fds))
`, token)})
	wg.Wait()
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("thread B: %v exit %d %s", err, res.ExitCode, res.Stderr)
	}
	if !strings.Contains(res.Stdout, "found []") || strings.Contains(res.Stdout, "a.txt") {
		t.Errorf("thread B saw thread A's files:\n%s", res.Stdout)
	}
	// A still has them: the two sandboxes were alive at once.
	res, err = p.Exec(ctx, "thread-a", Cell{Code: "print(open('/tmp/a.txt').read())"})
	if err != nil || strings.TrimSpace(res.Stdout) != token {
		t.Errorf("thread A lost its own file: %v %q %q", err, res.Stdout, res.Stderr)
	}
	healthy(t)
}

func TestEscapeWriteOutside(t *testing.T) {
	r := newRunner(t, escapeLimits)
	hostDir, err := os.MkdirTemp("", "contrail-escape-write-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(hostDir)
	if err := os.Chmod(hostDir, 0o777); err != nil { // writable by anyone who can see it
		t.Fatal(err)
	}
	name := "contrail-escape-" + rand.Text()
	targets := []string{"/" + name, "/usr/" + name, "/usr/lib/" + name, "/etc/" + name, "/dev/" + name,
		"/mnt/" + name, "/proc/" + name, "/bin/" + name, hostDir + "/" + name, "/proc/1/root/" + name}
	res := run(t, r, fmt.Sprintf(`
for path in %s:
    try:
        open(path, "w").write("x")
        print("WROTE", path)
    except OSError as e:
        print("blocked", path, e.strerror)
# /tmp is the sandbox's own: writing there is allowed and stays inside.
open("/tmp/%s", "w").write("x")
print("tmp ok")
`, pythonList(targets), name))
	if res.ExitCode != 0 || strings.Contains(res.Stdout, "WROTE") || !strings.Contains(res.Stdout, "tmp ok") {
		t.Errorf("exit %d; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	for _, p := range []string{"/" + name, "/usr/" + name, "/usr/lib/" + name, "/etc/" + name, "/tmp/" + name,
		filepath.Join(hostDir, name), filepath.Join(os.TempDir(), name)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s appeared on the host", p)
			os.Remove(p)
		}
	}
	healthy(t)
}

// afterBomb cleans up after a bomb (what it allocated, the files it wrote) and shows that the sandbox works:
// its state, a new process, the number of processes left in it.
const afterBomb = `
for name in [n for n in globals() if not n.startswith("__") and n != "survivor"]:
    del globals()[name]
import glob, os, subprocess, threading
for t in threading.enumerate():
    if t is not threading.main_thread() and not t.daemon:
        t.join()
for f in glob.glob("/mnt/data/*") + glob.glob("/tmp/fill*") + glob.glob("/dev/shm/*"):
    os.remove(f)
echo = subprocess.run(["echo", "ok"], capture_output=True).stdout.decode().strip()
print(survivor, echo, len([p for p in os.listdir("/proc") if p.isdigit()]))
`

func TestEscapeBombs(t *testing.T) {
	r := newRunner(t, escapeLimits)
	own := track(t, r)
	k := startKernel(t, r)
	exec1(t, k, "survivor = 'still here'")

	bombs := []struct {
		name, code string
		limit      Limit
	}{
		{"fork bomb", "import os\nwhile True:\n    os.fork()", LimitProcesses},
		// A shell's bomb runs in the background: the cell ends at once and its processes end with it.
		{"shell fork bomb", "import os, time\nos.system('b(){ b|b& }; b')\ntime.sleep(1)", ""},
		{"thread bomb", "import threading, time\nwhile True:\n    threading.Thread(target=time.sleep, args=(2,)).start()", LimitProcesses},
		// bytes(n) asks for zeroed pages the kernel need not back: the address-space limit is what stops the
		// bomb, and the machine running the tests is spared the RSS.
		{"memory bomb", "x = []\nwhile True:\n    x.append(bytes(32 << 20))", LimitMemory},
		{"one huge allocation", "x = bytearray(1 << 40)", LimitMemory},
		{"endless loop", "while True:\n    pass", LimitCPUTime},
		{"endless loop in a child", "import subprocess\nsubprocess.run(['sh', '-c', 'while :; do :; done'])\nprint('child ended')", ""},
		{"big file", "open('big', 'wb').write(b'0' * (64 << 20))", LimitFileSize},
		{"fill the working dir", "i = 0\nwhile True:\n    open('fill%d' % i, 'wb').write(b'0' * (4 << 20))\n    i += 1", LimitDisk},
		{"fill /tmp", "i = 0\nwhile True:\n    open('/tmp/fill%d' % i, 'wb').write(b'0' * (4 << 20))\n    i += 1", LimitDisk},
		{"fill /dev/shm", "i = 0\nwhile True:\n    open('/dev/shm/fill%d' % i, 'wb').write(b'0' * (4 << 20))\n    i += 1", LimitDisk},
	}
	for _, b := range bombs {
		res := exec1(t, k, b.code)
		if res.Limit != b.limit || res.SandboxEnded {
			t.Errorf("%s: limit %q (want %q), ended %v; stdout %q stderr:\n%s", b.name, res.Limit, b.limit,
				res.SandboxEnded, res.Stdout, res.Stderr)
		}
		// The sandbox recovered: what the bomb started is gone, and the next cell can start processes again.
		after := exec1(t, k, afterBomb)
		if f := strings.Fields(after.Stdout); len(f) != 4 || f[2] != "ok" {
			t.Errorf("after the %s: stdout %q stderr %q", b.name, after.Stdout, after.Stderr)
		} else if n, _ := strconv.Atoi(f[3]); n > 3 {
			t.Errorf("after the %s: %d processes left in the sandbox", b.name, n)
		}
		healthy(t)
	}

	k.Close()
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left on the host in the sandbox: %v", left)
	}
	healthy(t)
}

func TestEscapeEndlessLoopIgnoringTheCPULimit(t *testing.T) {
	limits := escapeLimits
	limits.WallTime = 2 * time.Second
	r := newRunner(t, limits)
	own := track(t, r)
	// Code that ignores the CPU limit's signal, with a child that does too, runs into the wall-clock limit, which
	// kills the sandbox with every process in it.
	res := run(t, r, `
import os, signal
signal.signal(signal.SIGXCPU, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    while True:
        pass
while True:
    pass
`)
	if !res.TimedOut || res.Limit != LimitWallTime || !res.SandboxEnded {
		t.Errorf("timed out %v, limit %q, ended %v", res.TimedOut, res.Limit, res.SandboxEnded)
	}
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left on the host in the sandbox: %v", left)
	}
	healthy(t)
}

func TestEscapeManyFilesEndsTheSandbox(t *testing.T) {
	r := newRunner(t, escapeLimits)
	res := run(t, r, "i = 0\nwhile True:\n    open('/tmp/f%d' % i, 'w').close()\n    i += 1")
	if res.Limit != LimitFileCount || !res.SandboxEnded || !strings.Contains(res.Stderr, "created more than 2000 files") {
		t.Errorf("limit %q, ended %v, stderr %q", res.Limit, res.SandboxEnded, res.Stderr)
	}
	healthy(t)
}

func TestEscapeSignalsToTheServer(t *testing.T) {
	r := newRunner(t, escapeLimits)
	k := startKernel(t, r)
	pid := os.Getpid()
	pgid, err := syscall.Getpgid(0)
	if err != nil {
		t.Fatal(err)
	}
	res := exec1(t, k, fmt.Sprintf(`
import ctypes, os, signal
libc = ctypes.CDLL(None, use_errno=True)
def ptrace_attach(pid):
    if libc.ptrace(16, pid, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "ptrace attach")
for name, f in [
    ("kill the server's pid", lambda: os.kill(%d, signal.SIGKILL)),
    ("kill the server's group", lambda: os.killpg(%d, signal.SIGKILL)),
    ("kill the server's parent", lambda: os.kill(%d, signal.SIGTERM)),
    ("kill everyone", lambda: os.kill(-1, signal.SIGKILL)),
    ("kill the sandbox's init", lambda: os.kill(1, signal.SIGKILL)),
    ("ptrace the server", lambda: ptrace_attach(%d)),
]:
    try:
        f()
        print("sent:", name)
    except OSError as e:
        print("refused:", name, e)
print("pid", os.getpid(), "ppid", os.getppid())
`, pid, pgid, os.Getppid(), pid))
	if res.ExitCode != 0 || res.SandboxEnded {
		t.Errorf("exit %d ended %v; stdout:\n%s\nstderr:\n%s", res.ExitCode, res.SandboxEnded, res.Stdout, res.Stderr)
	}
	// The sandbox's pid namespace holds its init (1) and the driver (2): the server's pids are not there.
	if !strings.Contains(res.Stdout, "pid 2 ppid 1") {
		t.Errorf("stdout:\n%s", res.Stdout)
	}
	if after := exec1(t, k, "print('alive')"); after.Stdout != "alive\n" {
		t.Errorf("the sandbox did not survive its own signals: %q %q", after.Stdout, after.Stderr)
	}
	healthy(t)
}

// The attacks below take over the driver, which shares its process with the code: what holds must be enforced
// from outside the sandbox.

// driverGlobals is Python that reaches the driver's own globals from a cell (the frame that runs it).
const driverGlobals = "import sys\ndriver = sys._getframe(1).f_globals\n"

// within waits for done, failing the test after limit: a bound on a wait, not a measure of time.
func within(t *testing.T, limit time.Duration, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("%s: not after %s", what, limit)
	}
}

func TestEscapeClosingTheChannelDoesNotOutliveTheCall(t *testing.T) {
	limits := escapeLimits
	limits.WallTime = time.Hour // so that the channel, not the wall clock, is what ends them
	r := newRunner(t, limits)
	own := track(t, r)

	// During a call: the code closes the driver's channel and sleeps for ever.
	k := startKernel(t, r)
	var res Result
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		res, _ = k.Exec(context.Background(), Cell{Code: "import os, time\nos.close(4)\ntime.sleep(10**6)"})
	}()
	within(t, 2*time.Minute, "the call whose code closed the channel returned", returned)
	if !res.SandboxEnded || !strings.Contains(res.Stderr, "closed the sandbox's channel") {
		t.Errorf("ended %v, stderr %q", res.SandboxEnded, res.Stderr)
	}

	// Between calls: a thread the cell left closes it after the call.
	k = startKernel(t, r)
	exec1(t, k, "import os, threading, time\n"+
		"def later():\n    time.sleep(0.2)\n    os.close(4)\n    time.sleep(10**6)\n"+
		"threading.Thread(target=later).start()")
	within(t, 2*time.Minute, "the sandbox whose channel closed between calls ended", k.exited)
	k.Close()
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left in the sandboxes: %v", left)
	}
	healthy(t)
}

func TestEscapeFramesBetweenCallsEndTheSandbox(t *testing.T) {
	r := newRunner(t, escapeLimits)
	k := startKernel(t, r)
	// A thread the cell left writes large frames of stdout once the call has ended, which no call reads: the
	// server must neither hold them nor a goroutine waiting to hand them over.
	exec1(t, k, `
import os, struct, threading, time
def flood():
    time.sleep(0.2)
    chunk = b"x" * (8 << 20)
    while True:
        os.write(4, b"o" + struct.pack(">I", len(chunk)) + chunk)
threading.Thread(target=flood).start()
`)
	within(t, 2*time.Minute, "the sandbox writing between calls ended", k.exited)
	within(t, 2*time.Minute, "the reader of the sandbox's frames stopped", k.readDone)
	if _, err := k.Exec(context.Background(), Cell{Code: "print(1)"}); err != ErrEnded {
		t.Errorf("Exec after: %v, want ErrEnded", err)
	}
	healthy(t)
}

func TestEscapeProcessesOutlivingTheCall(t *testing.T) {
	r := newRunner(t, escapeLimits)
	own := track(t, r)
	k := startKernel(t, r)
	// The cell switches off the driver's clean-up and leaves a child burning CPU in a session of its own.
	res := exec1(t, k, driverGlobals+`
import os
driver["kill_leftovers"] = lambda: None
if os.fork() == 0:
    os.setsid()
    while True:
        pass
print("forked")
`)
	if res.Stdout != "forked\n" || res.SandboxEnded {
		t.Fatalf("stdout %q ended %v stderr %q", res.Stdout, res.SandboxEnded, res.Stderr)
	}
	// Its child ended with the call: the sandbox holds its init and this call's python only.
	after := exec1(t, k, `import os
# A process that ended is a zombie until the driver, which the cell switched off, waits for it.
print(sorted(int(p) for p in os.listdir("/proc") if p.isdigit() and open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[0] != "Z"))`)
	if after.Stdout != "[1, 2]\n" {
		t.Errorf("processes in the sandbox after the call: %q (stderr %q)", after.Stdout, after.Stderr)
	}
	k.Close()
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left in the sandbox: %v", left)
	}
	healthy(t)
}

func TestEscapeCPUBetweenCalls(t *testing.T) {
	limits := escapeLimits
	limits.SandboxCPUTime = time.Hour // the sandbox's hard CPU limit is not what ends it
	r := newRunner(t, limits)
	k := startKernel(t, r)
	// A thread the cell left spins between calls, and keeps lifting the driver's allowance for it.
	exec1(t, k, `
import resource, threading
def spin():
    while True:
        hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
        for _ in range(100000):
            pass
threading.Thread(target=spin, daemon=True).start()
`)
	within(t, 3*time.Minute, "the sandbox spinning between calls ended", k.exited)
	healthy(t)
}

func TestEscapeMemoryOfManyProcesses(t *testing.T) {
	limits := escapeLimits
	limits.Memory = 256 << 20
	limits.SandboxMemory = 384 << 20
	r := newRunner(t, limits)
	own := track(t, r)
	// Each child stays under the per-process limit; together they pass the sandbox's. Without a watchdog the call
	// would run into the wall clock.
	res := run(t, r, `
import os, time
for _ in range(4):
    if os.fork() == 0:
        x = b"x" * (150 << 20)
        time.sleep(10**6)
time.sleep(10**6)
`)
	if res.Limit != LimitMemory || !res.SandboxEnded {
		t.Errorf("limit %q (want memory), ended %v; stderr %q", res.Limit, res.SandboxEnded, res.Stderr)
	}
	if left := own.leftovers(); len(left) > 0 {
		t.Errorf("processes left in the sandbox: %v", left)
	}
	healthy(t)
}

func TestEscapeOneAccountTakingEverySlot(t *testing.T) {
	p := NewPool(newRunner(t, escapeLimits), PoolConfig{Max: 2, Wait: 2 * time.Minute})
	defer p.Shutdown()

	// Account a keeps every sandbox in a call: two callers per key, each asking again as soon as its call ends,
	// so that a's sandboxes are never idle.
	var wg sync.WaitGroup
	stopA := make(chan struct{})
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stopA:
					return
				default:
				}
				_, _ = p.ExecFor(context.Background(), "a", fmt.Sprintf("a-%d", i%2), Cell{Code: "import time\ntime.sleep(0.5)"})
			}
		}()
	}
	full := make(chan struct{})
	go func() {
		defer close(full)
		for {
			p.mu.Lock()
			n := p.held["a"]
			p.mu.Unlock()
			if n == 2 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	within(t, 2*time.Minute, "account a holds every sandbox", full)

	// Account b gets one, though a asks again at once: a holds no more than its share while b waits.
	res, err := p.ExecFor(context.Background(), "b", "b-1", Cell{Code: "print('b ran')"})
	close(stopA)
	if err != nil || res.Stdout != "b ran\n" {
		t.Errorf("b: %v, stdout %q", err, res.Stdout)
	}
	wg.Wait()
	healthy(t)
}
