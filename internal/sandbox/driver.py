# The code-interpreter driver: the one long-lived python3 process inside a Contrail sandbox (see doc.go).
#
# It reads frames from fd 3 and writes frames to fd 4 (protocol.go describes them), runs each cell of code in one
# globals dict like a notebook, and reports the cell's stdout, stderr, exit status and the files it wrote in the
# working dir. It runs inside the sandbox next to the code it runs, so the Go side trusts nothing it says: this
# script is a convenience for well-behaved code, not a security boundary. The boundary is bubblewrap and the limits
# set here before any cell runs (hard limits, which the code cannot raise again).
import errno
import json
import linecache
import math
import os
import resource
import select
import signal
import stat
import struct
import sys
import tempfile
import threading
import time
import traceback
import types

IN_FD, OUT_FD = 3, 4
PID = os.getpid()
# The name this script's frames carry (sandbox.go compiles it so), left out of the tracebacks the cells get.
DRIVER_FILE = "<sandbox driver>"


def read_exact(n):
    buf = bytearray()
    while len(buf) < n:
        chunk = os.read(IN_FD, n - len(buf))
        if not chunk:
            raise EOFError("the platform closed the channel")
        buf += chunk
    return bytes(buf)


def read_frame():
    head = read_exact(5)
    return head[:1], read_exact(struct.unpack(">I", head[1:])[0])


_send_lock = threading.Lock()


def send(kind, payload):
    data = memoryview(kind + struct.pack(">I", len(payload)) + payload)
    with _send_lock:
        while data:
            data = data[os.write(OUT_FD, data):]


def send_json(kind, obj):
    send(kind, json.dumps(obj).encode())


class CPUTimeExceeded(BaseException):
    # A BaseException, so that the usual `except Exception` in the cell does not swallow it.
    pass


class Cell:
    """The state of the cell being run, read by the SIGXCPU handler."""

    running = False
    cpu = 0


def on_sigxcpu(signum, frame):
    if Cell.running:
        raise CPUTimeExceeded("the code used more than %d s of CPU time" % Cell.cpu)


def cpu_used():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def set_cpu_soft(seconds_from_now, hard):
    soft = math.ceil(cpu_used() + seconds_from_now)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def apply_limits(cfg):
    def hard(res, value):
        if value > 0:
            cur = resource.getrlimit(res)[1]
            if cur != resource.RLIM_INFINITY:
                value = min(value, cur)
            resource.setrlimit(res, (value, value))

    hard(resource.RLIMIT_AS, cfg["memory"])
    hard(resource.RLIMIT_NPROC, cfg["processes"])
    hard(resource.RLIMIT_FSIZE, cfg["file_size"])
    hard(resource.RLIMIT_NOFILE, cfg["open_files"])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (0, 0))
    total = cfg["cpu_total"] if cfg["cpu_total"] > 0 else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_CPU, (total, total))


class Capture:
    """Points fds 1 and 2 at pipes for one cell and forwards what arrives as 'o'/'e' frames, up to a cap each.

    Pipes rather than files, so that the platform has the output written so far when it kills a cell that runs too
    long."""

    def __init__(self, cap, quiet_out, quiet_err):
        self.cap = cap
        self.quiet = (quiet_out, quiet_err)
        self.total = [0, 0]
        self.sent = [0, 0]
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        os.dup2(w1, 1)
        os.dup2(w2, 2)
        os.close(w1)
        os.close(w2)
        self.fds = {r1: 0, r2: 1}
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        self.thread = threading.Thread(target=self.pump, daemon=True)
        self.thread.start()

    def pump(self):
        fds = dict(self.fds)
        while fds:
            ready, _, _ = select.select(list(fds), [], [])
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    chunk = b""
                if not chunk:
                    del fds[fd]
                    os.close(fd)
                    continue
                i = fds[fd]
                self.total[i] += len(chunk)
                room = self.cap - self.sent[i]
                if room > 0:
                    part = chunk[:room]
                    self.sent[i] += len(part)
                    send(b"o" if i == 0 else b"e", part)

    def finish(self):
        for stream in (sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:
                pass
        # Closing the write ends lets the pump see the end of both pipes; processes the cell started were killed
        # before this, so nothing else holds them.
        os.dup2(self.quiet[0], 1)
        os.dup2(self.quiet[1], 2)
        self.thread.join(timeout=2)


def exception_limit(exc):
    """Which limit, if any, an exception (or one it was raised from) reports."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, CPUTimeExceeded):
            return "cpu_time"
        if isinstance(exc, MemoryError):
            return "memory"
        if isinstance(exc, OSError):
            if exc.errno == errno.EFBIG:
                return "file_size"
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                return "disk"
            if exc.errno == errno.EAGAIN and raised_by_fork(exc):
                return "processes"
            if exc.errno == errno.EMFILE:
                return "open_files"
        if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
            return "processes"
        exc = exc.__cause__ or exc.__context__
    return None


def raised_by_fork(exc):
    """Whether exc came from starting a process (EAGAIN is also what a non-blocking read says)."""
    tb, last = exc.__traceback__, None
    while tb is not None:
        last, tb = tb, tb.tb_next
    if last is None:
        return False
    code = last.tb_frame.f_code
    line = linecache.getline(code.co_filename, last.tb_lineno)
    return "fork" in line or code.co_name in ("_execute_child", "_fork_exec", "spawnv", "_spawnvef")


def strip_driver(te, seen=None):
    """Removes this script's frames from a TracebackException and the ones chained to it."""
    seen = seen if seen is not None else set()
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != DRIVER_FILE])
    strip_driver(te.__cause__, seen)
    strip_driver(te.__context__, seen)


def kill_leftovers():
    """Ends every other process in the sandbox: what a cell starts does not outlive it."""
    try:
        os.kill(-1, signal.SIGKILL)  # everyone this process may signal but itself and the sandbox's init
    except OSError:
        pass
    # SIGKILL ends them at once, and none can fork any more; reaping them keeps zombies from counting against the
    # process limit in the next call. This process reaps its own children, the sandbox's init the others.
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) not in (1, PID)]
        if not others:
            return
        time.sleep(0.01)


def snapshot(work, limit):
    """Regular files under work, by relative name, with what tells a change; symlinks are not followed."""
    seen = {}
    stack = [""]
    while stack and len(seen) < limit:
        rel = stack.pop()
        try:
            entries = os.scandir(os.path.join(work, rel))
        except OSError:
            continue
        with entries:
            for ent in entries:
                name = rel + "/" + ent.name if rel else ent.name
                try:
                    st = ent.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if ent.name != "__pycache__":
                        stack.append(name)
                elif stat.S_ISREG(st.st_mode):
                    seen[name] = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
                    if len(seen) >= limit:
                        break
    return seen


def send_outputs(cfg, before):
    after = snapshot(cfg["work"], cfg["scan_limit"])
    omitted = []
    count = total = 0
    for name in sorted(after):
        if before.get(name) == after[name]:
            continue
        size = after[name][0]
        reason = None
        if size > cfg["max_file_size"]:
            reason = "larger than %d bytes" % cfg["max_file_size"]
        elif count >= cfg["max_files"]:
            reason = "more than %d files were written" % cfg["max_files"]
        elif total + size > cfg["max_total"]:
            reason = "the files written exceed %d bytes in all" % cfg["max_total"]
        if reason is None:
            try:
                with open(os.path.join(cfg["work"], name), "rb") as f:
                    data = f.read(cfg["max_file_size"] + 1)
            except OSError as e:
                reason = "unreadable: %s" % e.strerror
            except MemoryError:
                reason = "too large to read in the memory the code left"
            else:
                if len(data) > cfg["max_file_size"]:
                    reason = "larger than %d bytes" % cfg["max_file_size"]
        if reason is not None:
            omitted.append({"name": name, "size": size, "reason": reason})
            continue
        raw = name.encode("utf-8", "surrogateescape")
        send(b"O", struct.pack(">H", len(raw)) + raw + data)
        count += 1
        total += len(data)
    return omitted


def receive_inputs(cfg, first):
    """Writes the cell's input files ('F' name, 'D' data..., until the 'C' frame) and returns that frame."""
    errors = []
    out = None
    kind, payload = first
    while kind != b"C":
        if kind == b"F":
            if out is not None:
                out.close()
            out = None
            name = payload.decode("utf-8", "surrogateescape")
            path = os.path.normpath(os.path.join(cfg["work"], name))
            if not path.startswith(cfg["work"] + "/"):
                errors.append({"name": name, "error": "not a path inside the working dir"})
            else:
                try:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    out = open(path, "wb")
                except OSError as e:
                    errors.append({"name": name, "error": e.strerror, "limit": exception_limit(e)})
        elif kind == b"D" and out is not None:
            try:
                out.write(payload)
            except OSError as e:
                errors.append({"name": out.name[len(cfg["work"]) + 1:], "error": e.strerror, "limit": exception_limit(e)})
                out.close()
                out = None
        kind, payload = read_frame()
    if out is not None:
        try:
            out.close()
        except OSError as e:
            errors.append({"name": out.name, "error": e.strerror, "limit": exception_limit(e)})
    return json.loads(payload), errors


def run_cell(cfg, code, cpu, user_globals, number):
    result = {"exit_code": 0, "error": None, "limit": None}
    # Each cell's source stays known under its own name, so that tracebacks show its lines, also for a function
    # defined in one cell and called in a later one.
    filename = "<cell %d>" % number
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    Cell.cpu = cpu
    signal.signal(signal.SIGXCPU, on_sigxcpu)
    set_cpu_soft(cpu, cfg["cpu_total"] or resource.RLIM_INFINITY)
    Cell.running = True
    try:
        exec(compile(code, filename, "exec"), user_globals)
        Cell.running = False
        if os.getpid() != PID:
            os._exit(0)  # a process the cell forked has come back here: it must not read the channel
    except BaseException as exc:
        Cell.running = False
        if os.getpid() != PID:
            os._exit(1)
        if isinstance(exc, SystemExit):
            code = exc.code
            if code is None:
                code = 0
            elif not isinstance(code, int):
                print(code, file=sys.stderr)
                code = 1
            result["exit_code"] = code
            if code != 0:
                result["error"] = "SystemExit"
        else:
            result["exit_code"] = 1
            result["error"] = type(exc).__name__
            result["limit"] = exception_limit(exc)
            # The traceback without the driver's frames: the cell's code is what the reader wrote.
            try:
                te = traceback.TracebackException.from_exception(exc)
                strip_driver(te)
                sys.__stderr__.write("".join(te.format()))
            except Exception:
                pass
    finally:
        Cell.running = False
    # Processes a cell left running would otherwise keep its output pipes open and keep running between calls.
    kill_leftovers()
    # Threads the cell left running may use a little CPU between calls; past that the sandbox is ended. The soft
    # limit moves first, so that a cell that just went over it is not ended by the next SIGXCPU.
    set_cpu_soft(cfg["idle_cpu"], cfg["cpu_total"] or resource.RLIM_INFINITY)
    signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    return result


def main():
    # bubblewrap passes on every descriptor the platform's process had without close-on-exec, which may include
    # ones it inherited itself: only stdin, stdout, stderr and the channel may stay, before any cell runs.
    os.closerange(OUT_FD + 1, 2**31 - 1)
    for fd in (IN_FD, OUT_FD):
        os.set_inheritable(fd, False)
    kind, payload = read_frame()
    if kind != b"L":
        raise SystemExit("driver: expected the limits frame first")
    cfg = json.loads(payload)
    apply_limits(cfg)
    # matplotlib's cache goes in the sandbox's own temporary directory (TMPDIR), made before any cell imports it.
    os.environ["MPLCONFIGDIR"] = os.path.join(tempfile.gettempdir(), "matplotlib")
    os.makedirs(os.environ["MPLCONFIGDIR"], exist_ok=True)
    # Output between cells (this script's own failures) goes where it went at start: the platform's diagnostics.
    quiet_out, quiet_err = os.dup(1), os.dup(2)
    # The cells get a __main__ module of their own (pickle and dataclasses look classes up there), not this one.
    main_module = types.ModuleType("__main__")
    sys.modules["__main__"] = main_module
    user_globals = main_module.__dict__
    sys.argv = [""]
    send(b"R", b"")
    number = 0
    while True:
        try:
            frame = read_frame()
        except EOFError:
            return
        request, input_errors = receive_inputs(cfg, frame)
        number += 1
        try:
            result = call(cfg, request, input_errors, user_globals, number, quiet_out, quiet_err)
        except BaseException as exc:
            # The cell left too little (memory, file descriptors) for this script to report on it: say so rather
            # than end the sandbox.
            result = {"exit_code": 1, "error": "SandboxError", "limit": exception_limit(exc), "omitted": [],
                      "input_errors": [], "stdout_bytes": 0, "stderr_bytes": 0}
            send(b"e", ("the sandbox could not report on this call: %r\n" % exc).encode())
        send_json(b"Z", result)


def call(cfg, request, input_errors, user_globals, number, quiet_out, quiet_err):
    before = snapshot(cfg["work"], cfg["scan_limit"])
    capture = Capture(cfg["output"], quiet_out, quiet_err)
    try:
        if input_errors:
            limit = next((e["limit"] for e in input_errors if e.get("limit")), None)
            result = {"exit_code": 1, "error": "InputError", "limit": limit}
        else:
            result = run_cell(cfg, request["code"], request["cpu"], user_globals, number)
    finally:
        capture.finish()
    result["omitted"] = send_outputs(cfg, before)
    result["input_errors"] = input_errors
    result["stdout_bytes"], result["stderr_bytes"] = capture.total
    return result


if __name__ == "__main__":
    main()
