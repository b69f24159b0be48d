package procmem_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/contrailhq/contrail/internal/procmem"
)

// TestPageOutBinaryDropsTheBinarysPages starts a copy of this test binary as a process of its own (so that no other
// process maps its pages), pages its binary out, and reads its file-backed resident memory from /proc status: it
// must fall by most of what the binary held.
func TestPageOutBinaryDropsTheBinarysPages(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "child")
	copyFile(t, self, exe)
	child := exec.Command(exe, "-test.run=^TestPageOutChildProcess$")
	child.Env = append(os.Environ(), "PROCMEM_TEST_CHILD=1")
	stdin, err := child.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = child.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("the child said %q, %v; want ready", line, err)
	}
	pid := child.Process.Pid

	before, err := procmem.Of(pid)
	if err != nil {
		t.Fatal(err)
	}
	binary, err := procmem.PageOutBinary(pid)
	if errors.Is(err, unix.EPERM) {
		t.Skipf("this user may not page out another process's memory (CAP_SYS_NICE): %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	after, err := procmem.Of(pid)
	if err != nil {
		t.Fatal(err)
	}
	if binary < 256 || binary > before.File {
		t.Fatalf("the binary held %.0f KiB before, of %.0f KiB file-backed: want a share of it", binary, before.File)
	}
	if dropped := before.File - after.File; dropped < binary/2 {
		t.Errorf("file-backed resident went from %.0f to %.0f KiB: want most of the binary's %.0f KiB dropped",
			before.File, after.File, binary)
	}
}

// TestPageOutChildProcess is the process TestPageOutBinaryDropsTheBinarysPages pages out: it says it is ready and
// waits for its stdin to close.
func TestPageOutChildProcess(t *testing.T) {
	if os.Getenv("PROCMEM_TEST_CHILD") != "1" {
		t.Skip("run by TestPageOutBinaryDropsTheBinarysPages")
	}
	os.Stdout.WriteString("ready\n")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func TestPageOutBinaryOfAProcessThatDoesNotExist(t *testing.T) {
	if _, err := procmem.PageOutBinary(1 << 30); err == nil {
		t.Error("the binary of a pid that does not exist was paged out")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
