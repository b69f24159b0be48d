package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

// ErrEnded is returned by Kernel.Exec when the kernel's sandbox has ended (a limit, a timeout, Close).
var ErrEnded = errors.New("the sandbox has ended")

// Kernel is one warm sandbox: one bubblewrap with one python3 in it that runs successive cells in the same
// globals and working dir, one at a time. It belongs to one caller (one thread); never share it across threads or
// accounts.
type Kernel struct {
	r      *Runner
	cmd    *exec.Cmd
	in     *os.File // fd 3 in the sandbox
	frames chan frame
	exited chan struct{} // closed when bubblewrap has been waited for
	diag   *capped
	start  time.Time
	// quit is closed when no one will read frames any more (Close, a call given up), so that the reader, which
	// hands over one frame at a time, never waits for a reader that is gone.
	quit     chan struct{}
	quitOnce sync.Once
	readDone chan struct{} // closed when the reader has stopped

	// Set once the driver is ready, then read only: who is who on the host, for the watchdog.
	driver int      // host pid of the driver
	pidNS  uint64   // the sandbox's pid namespace
	nsFile *os.File // holds the namespace, so that its number is not given to another while k lives
	// idle is the watchdog's own (one goroutine per Runner).
	idle *idleMark

	mu sync.Mutex // one call at a time

	endMu   sync.Mutex
	init    int   // host pid of the sandbox's init, once bubblewrap has said it
	killFor Limit // why the platform killed it; "" when it did not
	// expecting is true while the driver may send frames: from the start to its ready frame, and from a cell
	// sent to its end-of-call frame. A frame at any other time breaks the protocol and ends the sandbox.
	expecting bool
	calls     int    // cells sent so far
	violation string // how the code broke the protocol, for the result
}

// Start makes a warm sandbox and waits until its python is ready for a first cell.
func (r *Runner) Start(ctx context.Context) (*Kernel, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		return nil, fmt.Errorf("sandbox: pipe: %w", err)
	}
	// ExtraFiles become fds 3, 4 and 5 in bubblewrap, which passes 3 and 4 on to the driver.
	cmd := exec.Command(r.bwrap, r.args(5)...)
	cmd.Dir = "/"
	cmd.Env = []string{}
	// frames is unbuffered: the reader holds at most one frame the caller has not taken.
	k := &Kernel{r: r, cmd: cmd, in: inW, frames: make(chan frame), exited: make(chan struct{}),
		diag: &capped{max: 16 << 10}, start: time.Now(), quit: make(chan struct{}), readDone: make(chan struct{}),
		expecting: true}
	cmd.Stdout, cmd.Stderr = k.diag, k.diag
	cmd.WaitDelay = time.Second
	cmd.ExtraFiles = []*os.File{inR, outW, infoW}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setsid:     true, // one process group: a kill reaches bubblewrap and the sandbox's init at once
		Pdeathsig:  syscall.SIGKILL,
		Credential: r.cred,
	}
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, infoR, infoW)
		return nil, unavailable("start bubblewrap: %v", err)
	}
	closeAll(inR, outW, infoW)
	go func() {
		_ = cmd.Wait()
		close(k.exited)
	}()
	go k.read(outR)
	infoc := make(chan sandboxInfo, 1)
	go readInfo(infoR, infoc)

	if err := k.send(frameLimits, r.driverConfig()); err != nil {
		k.kill("")
		k.stop()
		return nil, k.startFailed(ctx, fmt.Errorf("send limits: %w", err))
	}
	wait := time.NewTimer(r.limits.WallTime)
	defer wait.Stop()
	var info sandboxInfo
	select {
	case f, ok := <-k.frames:
		if !ok || f.kind != frameReady {
			k.kill("")
			k.stop()
			return nil, k.startFailed(ctx, errors.New("the driver did not start"))
		}
		// bubblewrap writes the info before it starts the driver, and closes it.
		info = <-infoc
		k.endMu.Lock()
		k.init = info.ChildPid
		k.endMu.Unlock()
	case <-wait.C:
		k.kill("")
		k.stop()
		return nil, k.startFailed(ctx, fmt.Errorf("not ready after %s", r.limits.WallTime))
	case <-ctx.Done():
		k.kill("")
		k.stop()
		<-k.exited
		return nil, fmt.Errorf("sandbox: start: %w", ctx.Err())
	}
	if err := k.identify(info.ChildPid); err != nil {
		_ = k.Close()
		return nil, unavailable("the sandbox's processes cannot be watched: %v", err)
	}
	if r.started != nil {
		r.started(k)
	}
	r.watchdog.add(k)
	// The sandbox's mounts are in place once the driver runs: from now on they can be watched.
	go k.watch(info)
	return k, nil
}

// identify finds the sandbox's pid namespace and its driver, the only process its init has started before any
// code runs, and holds the namespace for the watchdog.
func (k *Kernel) identify(init int) error {
	if init <= 0 {
		return errors.New("bubblewrap did not say the sandbox's pid")
	}
	ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/pid", init))
	if err != nil {
		return err
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(ns.Fd()), &st); err != nil {
		ns.Close()
		return err
	}
	k.nsFile, k.pidNS = ns, st.Ino
	for _, p := range k.processes() {
		if p.ppid == init {
			k.driver = p.pid
		}
	}
	if k.driver == 0 {
		return errors.New("the driver is not in the sandbox's pid namespace")
	}
	return nil
}

// stop tells the reader that no one will take frames any more.
func (k *Kernel) stop() { k.quitOnce.Do(func() { close(k.quit) }) }

func closeAll(files ...*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// startFailed waits for bubblewrap to end and reports what it said.
func (k *Kernel) startFailed(ctx context.Context, cause error) error {
	select {
	case <-k.exited:
	case <-ctx.Done():
	}
	msg := strings.TrimSpace(string(k.diag.buf))
	if msg == "" {
		msg = cause.Error()
	}
	return unavailable("bubblewrap could not make a sandbox: %s", msg)
}

// sandboxInfo is what bubblewrap's --info-fd says: the host pid of the sandbox's init and its mount namespace.
type sandboxInfo struct {
	ChildPid int    `json:"child-pid"`
	MntNS    uint64 `json:"mnt-namespace"`
}

func readInfo(r *os.File, out chan<- sandboxInfo) {
	defer r.Close()
	var info sandboxInfo
	_ = json.NewDecoder(io.LimitReader(r, 4096)).Decode(&info)
	out <- info
}

// read turns what the driver writes into frames, handing them over one at a time, until the pipe ends or the
// driver breaks the rules. Either ends the sandbox: the code can close the channel or write frames of its own,
// and a sandbox the platform can no longer hear from, or that writes when no call is waiting, must not run on.
func (k *Kernel) read(out *os.File) {
	defer close(k.readDone)
	defer out.Close()
	defer close(k.frames)
	l := k.r.limits
	maxFrame := max(int(l.OutputFileSize)+2+maxNameBytes, 1<<20)
	br := bufio.NewReaderSize(out, 64<<10)
	for {
		f, err := readFrame(br, maxFrame)
		if errors.Is(err, io.EOF) {
			// The python exited (its exit status is for the result), or the code closed the channel and runs
			// on: a moment for the first (generous, for a busy host), then the sandbox is ended.
			select {
			case <-k.exited:
			case <-time.After(5 * time.Second):
				k.violate("the code closed the sandbox's channel", nil)
			}
			return
		}
		if err != nil {
			k.violate("the sandbox broke its protocol", err)
			return
		}
		k.endMu.Lock()
		expected := k.expecting
		if f.kind == frameReady || f.kind == frameDone {
			k.expecting = false
		}
		k.endMu.Unlock()
		if !expected {
			k.violate("the sandbox wrote to its channel between calls", fmt.Errorf("frame %q", f.kind))
			return
		}
		select {
		case k.frames <- f:
		case <-k.quit:
			return
		}
	}
}

// violate ends the sandbox for breaking the protocol, recording what it did for the call's result.
func (k *Kernel) violate(what string, err error) {
	k.endMu.Lock()
	if k.violation == "" {
		k.violation = what
	}
	k.endMu.Unlock()
	select {
	case <-k.exited:
		return
	default:
	}
	k.r.log.Warn("sandbox: ending a sandbox that broke the protocol", "what", what, "err", err)
	k.kill("")
}

// watch ends the sandbox when its writable tmpfs hold more than Limits.FileCount inodes, which no mount option
// bubblewrap offers can bound. It looks through /proc/<init>/root, checking that the mount namespace there is
// still the sandbox's.
func (k *Kernel) watch(info sandboxInfo) {
	if info.ChildPid <= 0 {
		return
	}
	root := fmt.Sprintf("/proc/%d/root", info.ChildPid)
	nsLink := fmt.Sprintf("/proc/%d/ns/mnt", info.ChildPid)
	wantNS := fmt.Sprintf("mnt:[%d]", info.MntNS)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-k.exited:
			return
		case <-tick.C:
		}
		if ns, err := os.Readlink(nsLink); err != nil || ns != wantNS {
			return
		}
		var used uint64
		for _, dir := range []string{WorkDir, "/tmp", "/dev/shm"} {
			var st syscall.Statfs_t
			if err := syscall.Statfs(root+dir, &st); err != nil {
				return
			}
			used += st.Files - st.Ffree
		}
		if used > uint64(k.r.limits.FileCount) {
			k.kill(LimitFileCount)
			return
		}
	}
}

// kill ends the sandbox and every process in it; why is recorded for the result when not "".
//
// It kills the sandbox's init: the kernel then kills every process of its pid namespace and reaps them before
// the init is reaped, by bubblewrap, which then exits; so once Wait has returned, nothing of the sandbox runs.
// (Killing bubblewrap first would let Wait return while the namespace is still being torn down.) Before the init
// is known, and should bubblewrap not exit, its process group is killed: --die-with-parent ends the init then.
func (k *Kernel) kill(why Limit) {
	k.endMu.Lock()
	if k.killFor == "" {
		k.killFor = why
	}
	init := k.init
	k.endMu.Unlock()
	select {
	case <-k.exited:
		return // waited for: the pids may be reused
	default:
	}
	// The init's pid cannot have been reused: bubblewrap, its parent, has not exited, so has not reaped it.
	if init > 0 && syscall.Kill(init, syscall.SIGKILL) == nil {
		select {
		case <-k.exited:
			return
		case <-time.After(5 * time.Second):
		}
	}
	_ = syscall.Kill(-k.cmd.Process.Pid, syscall.SIGKILL)
}

// Ended reports whether the sandbox has ended (its next Exec would return ErrEnded).
func (k *Kernel) Ended() bool {
	select {
	case <-k.exited:
		return true
	default:
		return false
	}
}

// Close ends the sandbox, killing whatever runs in it, and waits until it has.
func (k *Kernel) Close() error {
	k.kill("")
	k.stop()
	<-k.exited
	_ = k.in.Close()
	k.r.watchdog.remove(k)
	if k.nsFile != nil {
		_ = k.nsFile.Close()
	}
	return nil
}

func (k *Kernel) send(kind byte, v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFrame(k.in, kind, payload)
}

// Exec runs one cell. A cell that fails, even for a limit, is a Result, not an error; the error is for a bad cell
// (errs.Invalid, errs.TooLarge), a sandbox that has ended (ErrEnded) and a ctx that ended first (then the sandbox
// is killed too, and the Result holds what the code printed until then).
func (k *Kernel) Exec(ctx context.Context, cell Cell) (Result, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l := k.r.limits
	inputs, err := readInputs(cell, l)
	if err != nil {
		return Result{}, err
	}
	if k.Ended() {
		return Result{}, ErrEnded
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("sandbox: run code: %w", err)
	}
	begin := time.Now()
	k.endMu.Lock()
	k.expecting = true
	k.calls++
	k.endMu.Unlock()
	sent := make(chan error, 1)
	go func() { sent <- k.sendCell(cell.Code, inputs) }()

	out, errOut := &stream{max: l.Output}, &stream{max: l.Output}
	var res Result
	var outBytes int64
	var done *driverDone
	wall := time.NewTimer(l.WallTime)
	defer wall.Stop()
	var ctxErr error
loop:
	for {
		select {
		case f, ok := <-k.frames:
			if !ok {
				// The reader has stopped (the python ended, or the sandbox broke the protocol) and ends the
				// sandbox if need be.
				break loop
			}
			switch f.kind {
			case frameStdout:
				out.add(f.payload)
			case frameStderr:
				errOut.add(f.payload)
			case frameOutput:
				k.addFile(&res, f.payload, &outBytes)
			case frameDone:
				done = new(driverDone)
				if err := json.Unmarshal(f.payload, done); err != nil {
					k.violate("the sandbox sent a malformed end of call", err)
					done = nil
				}
				break loop
			default:
				k.violate("the sandbox sent a frame it may not send", fmt.Errorf("frame %q", f.kind))
			}
		case <-wall.C:
			k.kill(LimitWallTime)
		case <-ctx.Done():
			ctxErr = ctx.Err()
			k.kill("")
			break loop
		}
	}
	if done != nil {
		// The cell was sent in full unless the code took over the channel and answered for the driver: then the
		// writer may wait on a pipe no one reads, until the wall clock ends the sandbox.
		var err error
		select {
		case err = <-sent:
		case <-wall.C:
			k.kill(LimitWallTime)
			err = <-sent
		case <-ctx.Done():
			ctxErr = ctx.Err()
			k.kill("")
			err = <-sent
		}
		if err != nil {
			// The driver answered without reading the whole cell: it is not the driver this package wrote.
			k.violate("the sandbox answered before reading its cell", err)
			done = nil
		}
	}
	if done == nil {
		k.stop()
	} else {
		// What the call started ends with it, whatever the code did to the driver's own clean-up.
		k.killLeftovers(k.processes())
	}
	if done != nil {
		if err := inputError(done); err != nil {
			return Result{}, err
		}
		res.ExitCode = done.ExitCode
		if done.Error != nil {
			res.Error = *done.Error
		}
		if done.Limit != nil {
			res.Limit = Limit(*done.Limit)
		}
		res.Omitted = append(res.Omitted, done.Omitted...)
	}
	var note string
	if done == nil {
		note = k.ended(&res)
	}
	res.Stdout, res.StdoutBytes = out.text(doneBytes(done, true), "stdout")
	res.Stderr, res.StderrBytes = errOut.text(doneBytes(done, false), "stderr")
	res.Stderr += note + describe(&res, l)
	res.Duration = time.Since(begin)
	if ctxErr != nil {
		return res, fmt.Errorf("sandbox: run code: %w", ctxErr)
	}
	return res, nil
}

func doneBytes(d *driverDone, stdout bool) int64 {
	switch {
	case d == nil:
		return 0
	case stdout:
		return d.StdoutBytes
	default:
		return d.StderrBytes
	}
}

// ended fills res for a sandbox that ended during the call: why, as far as the platform can tell. It returns what
// the platform has to add to stderr.
func (k *Kernel) ended(res *Result) (note string) {
	<-k.exited
	res.SandboxEnded = true
	k.endMu.Lock()
	why, violation := k.killFor, k.violation
	k.endMu.Unlock()
	if violation != "" && why == "" {
		note = "[sandbox: " + violation + "; it was ended]\n"
	}
	ps := k.cmd.ProcessState
	ws, _ := ps.Sys().(syscall.WaitStatus)
	switch {
	case ws.Exited():
		res.ExitCode = ws.ExitStatus() // bubblewrap passes on python's, 128+signal for a signal
	case ws.Signaled():
		res.ExitCode = 128 + int(ws.Signal())
	}
	cpu := ps.UserTime() + ps.SystemTime()
	switch {
	case why != "":
		res.Limit = why
	case res.ExitCode == 128+int(syscall.SIGXCPU):
		res.Limit = LimitCPUTime
	case res.ExitCode == 128+int(syscall.SIGKILL) && cpu >= k.r.limits.SandboxCPUTime-time.Second:
		res.Limit = LimitCPUTime // RLIMIT_CPU's hard limit
	}
	res.TimedOut = res.Limit == LimitWallTime
	if diag := strings.TrimSpace(string(k.diag.buf)); diag != "" && res.Limit == "" {
		// What the driver or bubblewrap printed on the way out: written by code of this same sandbox at worst.
		note = diag + "\n" + note
	}
	return note
}

// addFile takes one 'O' frame, keeping it when it is within the limits.
func (k *Kernel) addFile(res *Result, payload []byte, total *int64) {
	l := k.r.limits
	if len(payload) < 2 || len(payload) < 2+int(binary.BigEndian.Uint16(payload)) {
		k.r.log.Warn("sandbox: malformed output file frame")
		return
	}
	n := int(binary.BigEndian.Uint16(payload))
	name, data := string(payload[2:2+n]), payload[2+n:]
	size := int64(len(data))
	var reason string
	switch {
	case checkName(name) != "":
		reason = "its name " + checkName(name)
		name = strings.ToValidUTF8(name, "\uFFFD")
	case size > l.OutputFileSize:
		reason = fmt.Sprintf("larger than %d bytes", l.OutputFileSize)
	case len(res.Files) >= l.OutputFiles:
		reason = fmt.Sprintf("more than %d files were written", l.OutputFiles)
	case *total+size > l.OutputBytes:
		reason = fmt.Sprintf("the files written exceed %d bytes in all", l.OutputBytes)
	}
	if reason != "" {
		res.Omitted = append(res.Omitted, Omitted{Name: name, Size: size, Reason: reason})
		return
	}
	*total += size
	res.Files = append(res.Files, newFile(name, bytes.Clone(data)))
}

// readInputs checks the cell and reads its inputs, so that a bad one is refused before anything is sent.
func readInputs(cell Cell, l Limits) ([]Input, error) {
	if len(cell.Code) > l.Code {
		return nil, &errs.Error{Code: errs.TooLarge, Field: "code",
			Message: fmt.Sprintf("the code is %d bytes; at most %d are accepted", len(cell.Code), l.Code)}
	}
	inputs := make([]Input, len(cell.Inputs))
	var total int64
	for i, in := range cell.Inputs {
		field := fmt.Sprintf("inputs[%d]", i)
		if why := checkName(in.Name); why != "" {
			return nil, errs.InvalidField(field+".name", "file name %q %s", in.Name, why)
		}
		inputs[i] = Input{Name: in.Name, Data: in.Data}
		if in.Data == nil && in.Reader != nil {
			b, err := io.ReadAll(io.LimitReader(in.Reader, l.FileSize+1))
			if err != nil {
				return nil, fmt.Errorf("sandbox: read input %q: %w", in.Name, err)
			}
			inputs[i].Data = b
		}
		size := int64(len(inputs[i].Data))
		if size > l.FileSize {
			return nil, &errs.Error{Code: errs.TooLarge, Field: field, Message: fmt.Sprintf(
				"file %q is larger than the sandbox's file size limit (%d bytes)", in.Name, l.FileSize)}
		}
		if total += size; total > l.Disk {
			return nil, &errs.Error{Code: errs.TooLarge, Field: field, Message: fmt.Sprintf(
				"the input files exceed the sandbox's disk (%d bytes)", l.Disk)}
		}
	}
	return inputs, nil
}

// inputError is the error for input files the driver could not write: the disk full of earlier calls' files
// (too large), or a name taken by a directory an earlier call made (invalid).
func inputError(d *driverDone) error {
	if len(d.InputErrors) == 0 {
		return nil
	}
	code := errs.Invalid
	var msgs []string
	for _, e := range d.InputErrors {
		msgs = append(msgs, fmt.Sprintf("%s: %s", e.Name, e.Error))
		if e.Limit != nil {
			code = errs.TooLarge
		}
	}
	return &errs.Error{Code: code, Field: "inputs",
		Message: "the input files could not be written in the sandbox: " + strings.Join(msgs, "; ")}
}

// sendCell writes the cell's input files and then the cell, which runs it.
func (k *Kernel) sendCell(code string, inputs []Input) error {
	w := bufio.NewWriterSize(k.in, 64<<10)
	for _, in := range inputs {
		if err := writeFrame(w, frameFile, []byte(in.Name)); err != nil {
			return err
		}
		for off := 0; off < len(in.Data); off += dataChunk {
			if err := writeFrame(w, frameData, in.Data[off:min(off+dataChunk, len(in.Data))]); err != nil {
				return err
			}
		}
	}
	payload, err := json.Marshal(map[string]any{"code": code, "cpu": seconds(k.r.limits.CPUTime)})
	if err != nil {
		return err
	}
	if err := writeFrame(w, frameCell, payload); err != nil {
		return err
	}
	return w.Flush()
}
