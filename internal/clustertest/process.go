package clustertest

import (
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
)

// Process is one program of the topology. It can be killed, stopped and started again with the same arguments and
// files; everything it prints, over all its starts, goes to one log file.
type Process struct {
	// Name is how logs and reports call it ("n1", "contrail-2").
	Name    string
	path    string
	args    []string
	env     []string
	logPath string

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	exitErr error
	starts  int
}

func newProcess(name, path, logPath string, args, env []string) *Process {
	done := make(chan struct{})
	close(done)
	return &Process{Name: name, path: path, args: args, env: env, logPath: logPath, exited: done}
}

// Start runs the program. It is an error to start a process that runs.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
	default:
		return fmt.Errorf("start %s: it runs (pid %d)", p.Name, p.cmd.Process.Pid)
	}
	log, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start %s: open its log: %w", p.Name, err)
	}
	p.starts++
	fmt.Fprintf(log, "=== clustertest: start %d of %s at %s\n", p.starts, p.Name, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(p.path, p.args...)
	cmd.Env = p.env
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	exited := make(chan struct{})
	p.cmd, p.exited, p.exitErr = cmd, exited, nil
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(log, "=== clustertest: %s exited at %s: %v\n", p.Name, time.Now().Format(time.RFC3339Nano), exitStatus(err))
		log.Close()
		p.mu.Lock()
		p.exitErr = err
		p.mu.Unlock()
		close(exited)
	}()
	return nil
}

// Running reports whether the process runs.
func (p *Process) Running() bool {
	select {
	case <-p.Exited():
		return false
	default:
		return true
	}
}

// Exited is closed when the process has exited (at once when it does not run).
func (p *Process) Exited() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// ExitStatus says how the last run ended ("exit status 1", "signal: killed"), or "" while it runs.
func (p *Process) ExitStatus() string {
	if p.Running() {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return exitStatus(p.exitErr)
}

func exitStatus(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// Kill sends SIGKILL, as a crash or kill -9 would, and waits for the process to be gone.
func (p *Process) Kill() error {
	if err := p.signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-p.Exited()
	return nil
}

// Stop sends SIGTERM and waits up to timeout for a clean exit, then kills it. It reports whether the exit was
// clean (without the kill).
func (p *Process) Stop(timeout time.Duration) (clean bool, err error) {
	if err := p.signal(syscall.SIGTERM); err != nil {
		return false, err
	}
	select {
	case <-p.Exited():
		return true, nil
	case <-time.After(timeout):
		return false, p.Kill()
	}
}

func (p *Process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.exited:
		return fmt.Errorf("signal %s: %s does not run", sig, p.Name)
	default:
	}
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s to %s: %w", sig, p.Name, err)
	}
	return nil
}

// LogPath is the file holding everything the process printed.
func (p *Process) LogPath() string { return p.logPath }

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string {
	f, err := os.Open(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	// The tail of a big log is in its last few hundred kB.
	const window = 512 << 10
	if st, err := f.Stat(); err == nil && st.Size() > window {
		_, _ = f.Seek(st.Size()-window, io.SeekStart)
	}
	raw, _ := io.ReadAll(f)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// LogContains counts how often s appears in the process's log.
func (p *Process) LogContains(s string) int {
	raw, err := os.ReadFile(p.logPath)
	if err != nil {
		return 0
	}
	return strings.Count(string(raw), s)
}

// LogLines returns up to n lines of the process's log that contain s, the first ones.
func (p *Process) LogLines(s string, n int) []string {
	raw, err := os.ReadFile(p.logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
			if len(out) == n {
				break
			}
		}
	}
	return out
}

// LogLinesBetween returns up to n lines of the process's log, from its JSON lines timed within [from, to], that
// contain any of subs.
func (p *Process) LogLinesBetween(from, to time.Time, n int, subs ...string) []string {
	raw, err := os.ReadFile(p.logPath)
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		var head struct {
			Time time.Time `json:"time"`
		}
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &head) != nil ||
			head.Time.Before(from) || head.Time.After(to) {
			continue
		}
		for _, sub := range subs {
			if strings.Contains(line, sub) {
				out = append(out, line)
				break
			}
		}
		if len(out) == n {
			break
		}
	}
	return out
}
