package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// run runs the binary to its end (bounded, so that a hang fails the test rather than stalls it) and returns its
// combined output and exit code.
func run(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("contrail %s did not end: %s", strings.Join(args, " "), out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// A second node on a data dir in use (what a user tries when the first one's port is busy) exits at once, naming
// the first one's pid, and leaves the first one serving.
func TestASecondServeOnTheSameDataDirIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startNode(t, dir)
	waitReady(t, first)
	out, code := run(t, []string{"CONTRAIL_ADMIN_KEY="}, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--nats-listen", "off")
	if code == 0 || !strings.Contains(out, "process "+strconv.Itoa(first.cmd.Process.Pid)) || !strings.Contains(out, "--data-dir") {
		t.Fatalf("a second serve on the same data dir: exit %d\n%s", code, out)
	}
	if strings.Contains(out, "contrail ready") {
		t.Fatalf("the second node got as far as ready:\n%s", out)
	}
	waitReady(t, first)
	if strings.Contains(first.logs.String(), "Critical write error") {
		t.Fatalf("the first node's store was written by another:\n%s", first.logs)
	}
	if code := first.get(t, first.adminKey(t), "/admin/whoami", nil); code != 200 {
		t.Fatalf("the first node after the refusal: %d", code)
	}
}

// A second node on an HTTP address in use (a second `make run`) names the holder: another Contrail, its process and
// command line, the data dir it holds; and says how to choose another port.
func TestASecondServeOnTheSameAddressNamesTheHolder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	first := startNode(t, dir)
	addr := strings.TrimPrefix(first.url, "http://")
	out, code := run(t, []string{"CONTRAIL_ADMIN_KEY="}, "serve", "--addr", addr, "--data-dir", dir, "--nats-listen", "off")
	pid := strconv.Itoa(first.cmd.Process.Pid)
	for _, want := range []string{"address is in use", "another Contrail answers there", "process " + pid + " holds it",
		"data dir " + dir + " is in use by process " + pid, "make run ADDR=", "--addr"} {
		if code == 0 || !strings.Contains(out, want) {
			t.Fatalf("a second serve on %s: exit %d, want %q in:\n%s", addr, code, want, out)
		}
	}
	// Something that is not Contrail on the port is not called one.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, code = run(t, []string{"CONTRAIL_ADMIN_KEY="}, "serve", "--addr", ln.Addr().String(), "--data-dir", t.TempDir(), "--nats-listen", "off")
	if code == 0 || strings.Contains(out, "Contrail answers") || !strings.Contains(out, "process "+strconv.Itoa(os.Getpid())+" holds it") {
		t.Fatalf("serve on a port this test holds: exit %d\n%s", code, out)
	}
}

// A NATS port in use ends the start at once with the port and what to do, instead of a 30 s wait.
func TestServeOnABusyNATSPortSaysWhatToDo(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	out, code := run(t, []string{"CONTRAIL_ADMIN_KEY="}, "serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--nats-listen", ln.Addr().String())
	if code == 0 || !strings.Contains(out, strconv.Itoa(port)) || !strings.Contains(out, "--nats-listen off") {
		t.Fatalf("serve with its NATS port in use: exit %d\n%s", code, out)
	}
	// The same through the environment twin.
	out, code = run(t, []string{"CONTRAIL_ADMIN_KEY=", "CONTRAIL_NATS_LISTEN=" + ln.Addr().String()}, "serve", "--addr", "127.0.0.1:0",
		"--data-dir", t.TempDir())
	if code == 0 || !strings.Contains(out, strconv.Itoa(port)) {
		t.Fatalf("CONTRAIL_NATS_LISTEN on a port in use: exit %d\n%s", code, out)
	}
}

func TestVersionAndUsageErrors(t *testing.T) {
	t.Parallel()
	if out, code := run(t, nil, "--version"); code != 0 || !strings.HasPrefix(out, "contrail "+testVersion) {
		t.Fatalf("contrail --version: exit %d %q", code, out)
	}
	for _, c := range []struct {
		args  []string
		usage string
	}{
		{[]string{"agents", "register", "only-a-handle"}, "Usage: contrail agents register HANDLE URL [flags]"},
		{[]string{"accounts", "limits"}, "Usage: contrail accounts limits ACCOUNT_ID [flags]"},
		{[]string{"accounts", "limits", "acct_x", "--rate", "many"}, "Usage: contrail accounts limits ACCOUNT_ID [flags]"},
		{[]string{"serve", "--no-such-flag"}, "Usage: contrail serve [flags]"},
		{[]string{"serve", "extra"}, "Usage: contrail serve [flags]"},
		{[]string{"acounts"}, "Usage: contrail [flags]"},
		{[]string{"accounts", "lsit"}, "Usage: contrail accounts [flags]"},
	} {
		out, code := run(t, nil, c.args...)
		if code != 2 || !strings.Contains(out, c.usage) || !strings.HasPrefix(out, "contrail: ") {
			t.Errorf("contrail %s: exit %d, want 2, the error and %q:\n%s", strings.Join(c.args, " "), code, c.usage, out)
		}
	}
	// A bad value in an environment twin names the variable.
	out, code := run(t, []string{"CONTRAIL_RUN_TIMEOUT=soon"}, "serve", "--data-dir", t.TempDir())
	if code == 0 || !strings.Contains(out, "CONTRAIL_RUN_TIMEOUT") || !strings.Contains(out, "--run-timeout") {
		t.Fatalf("a bad CONTRAIL_RUN_TIMEOUT: exit %d\n%s", code, out)
	}
}

// serve --help shows a placeholder for each value and the environment twin of every flag.
func TestServeHelpShowsPlaceholdersAndEnvTwins(t *testing.T) {
	t.Parallel()
	out, code := run(t, nil, "serve", "--help")
	if code != 0 {
		t.Fatalf("serve --help: exit %d\n%s", code, out)
	}
	for _, want := range []string{"--models-dir DIR", "--addr HOST:PORT", "--nats-listen HOST:PORT", "[CONTRAIL_MODELS_DIR]"} {
		if !strings.Contains(out, want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
	serve := newServeCmd()
	for _, name := range serveFlags(serve) {
		if twin := serve.Flags().Lookup(name).Annotations[envTwinKey]; len(twin) != 1 || !strings.Contains(out, "["+twin[0]+"]") {
			t.Errorf("--%s has no environment twin in serve --help", name)
		}
	}
}

// New accounts list the limits that apply to them, not the read model's 0; `accounts limits ID` alone shows them,
// and --rate changes the rate.
func TestCLIShowsAndChangesAccountLimits(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir(), "--daily-queries", "250")
	admin := n.adminKey(t)
	n.cli(t, admin, "accounts", "create", "script")
	var accts struct {
		Accounts []struct{ ID, Name string } `json:"accounts"`
	}
	n.get(t, admin, "/admin/accounts", &accts)
	var id string
	for _, a := range accts.Accounts {
		if a.Name == "script" {
			id = a.ID
		}
	}
	list := n.cli(t, admin, "accounts", "list")
	if !strings.Contains(list, "250 (default)") || !strings.Contains(list, "600 (default)") || strings.Contains(list, " 0 ") {
		t.Fatalf("accounts list should show the limits that apply:\n%s", list)
	}
	shown := n.cli(t, admin, "accounts", "limits", id)
	if !strings.Contains(shown, "250 (default), 0 used today") || !strings.Contains(shown, "600 (default), per key") {
		t.Fatalf("accounts limits with no flag should show the limits:\n%s", shown)
	}
	changed := n.cli(t, admin, "accounts", "limits", id, "--rate", "5000")
	if !strings.Contains(changed, "5000, per key") || !strings.Contains(changed, "250 (default)") {
		t.Fatalf("accounts limits --rate 5000:\n%s", changed)
	}
	if list := n.cli(t, admin, "accounts", "list"); !strings.Contains(list, "5000") {
		t.Fatalf("accounts list after raising the rate:\n%s", list)
	}
}

// Registering an agent whose URL does not answer registers it (it may be starting) and says so; the list shows it
// as not yet reachable, and a refresh before it answers fails instead of pretending.
func TestCLIRegisteringAnUnreachableAgentWarns(t *testing.T) {
	t.Parallel()
	n := startNode(t, t.TempDir())
	admin := n.adminKey(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/", freePort(t))
	out := n.cli(t, admin, "agents", "register", "later", url)
	if !strings.Contains(out, "registered later") || !strings.Contains(out, "not yet reachable") ||
		!strings.Contains(out, "warning: agent later is not yet reachable at "+url) || !strings.Contains(out, "contrail agents refresh later") {
		t.Fatalf("agents register of an unreachable URL:\n%s", out)
	}
	list := n.cli(t, admin, "agents", "list")
	found := false
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "later ") {
			found = strings.Contains(line, "not yet reachable")
		}
	}
	if !found {
		t.Fatalf("agents list should show the agent as not yet reachable:\n%s", list)
	}
	out, code := run(t, []string{"CONTRAIL_URL=" + n.url, "CONTRAIL_API_KEY=" + admin}, "agents", "refresh", "later")
	if code == 0 || !strings.Contains(out, "not reachable") {
		t.Fatalf("agents refresh of an unreachable agent: exit %d\n%s", code, out)
	}
}

// `make run | tee log` stopped with Ctrl-C: the terminal sends SIGINT to the whole pipeline, tee is gone before the
// node logs that it is stopping, and that line meets a closed pipe. The node still stops cleanly, so that the next
// start has nothing to recover. SIGHUP (a closed terminal) stops it cleanly too.
func TestServeStopsCleanlyWhenItsLogPipeCloses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGHUP} {
		cmd := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--data-dir", dir, "--nats-listen", "off", "--log-format", "json")
		cmd.Env = append(os.Environ(), "CONTRAIL_ADMIN_KEY=")
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() && !strings.Contains(sc.Text(), "contrail ready") {
		}
		r.Close() // the reader of the pipe is gone
		_ = cmd.Process.Signal(sig)
		err = cmd.Wait()
		if err != nil || !cmd.ProcessState.Success() {
			t.Fatalf("on %v with its log pipe closed, serve ended: %v (%v)", sig, err, cmd.ProcessState)
		}
	}
	n := startNode(t, dir)
	if strings.Contains(n.logs.String(), "not closed cleanly") {
		t.Fatalf("the start after a clean stop recovered the store:\n%s", n.logs)
	}
}
