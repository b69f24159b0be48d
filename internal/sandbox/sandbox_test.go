package sandbox

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/contrailhq/contrail/internal/errs"
)

func TestRunReadsInputsAndReturnsWhatItWrote(t *testing.T) {
	r := newRunner(t, Limits{})
	res := run(t, r, `
import csv, os
rows = list(csv.DictReader(open("sales.csv")))
print(sum(int(r["amount"]) for r in rows))
print(open("notes/readme.txt").read())
print(os.getcwd(), sorted(os.listdir(".")))
with open("total.txt", "w") as f:
    f.write("60")
os.makedirs("out", exist_ok=True)
open("out/rows.csv", "w").write("n\n3\n")
`, Input{Name: "sales.csv", Data: []byte("region,amount\nnorth,10\nsouth,20\neast,30\n")},
		Input{Name: "notes/readme.txt", Reader: strings.NewReader("from a reader")})

	if res.ExitCode != 0 || res.Error != "" || res.SandboxEnded {
		t.Fatalf("exit %d, error %q, ended %v; stderr:\n%s", res.ExitCode, res.Error, res.SandboxEnded, res.Stderr)
	}
	want := []string{"60", "from a reader", "/mnt/data ['notes', 'sales.csv']"}
	if got := lines(res.Stdout); !slices.Equal(got, want) {
		t.Errorf("stdout lines %q, want %q", got, want)
	}
	// The inputs are the caller's: only what the code wrote comes back.
	if got := fileNames(res.Files); !slices.Equal(got, []string{"out/rows.csv", "total.txt"}) {
		t.Errorf("files %q, want out/rows.csv and total.txt", got)
	}
	for _, f := range res.Files {
		if f.Name == "total.txt" && (string(f.Data) != "60" || f.Image || !strings.HasPrefix(f.ContentType, "text/plain")) {
			t.Errorf("total.txt: %q %q image=%v", f.Data, f.ContentType, f.Image)
		}
	}
}

func TestChartIsReturnedAsImage(t *testing.T) {
	r := newRunner(t, Limits{})
	needModules(t, r, "numpy", "pandas", "matplotlib")
	res := run(t, r, `
import pandas as pd
import matplotlib
import matplotlib.pyplot as plt
df = pd.read_csv("sales.csv")
print(df["amount"].sum(), matplotlib.get_backend())
df.plot.bar(x="region", y="amount")
plt.savefig("chart.png")
`, Input{Name: "sales.csv", Data: []byte("region,amount\nnorth,10\nsouth,20\neast,30\n")})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d; stderr:\n%s", res.ExitCode, res.Stderr)
	}
	if got := strings.TrimSpace(res.Stdout); got != "60 agg" {
		t.Errorf("stdout %q, want the sum and the Agg backend", got)
	}
	if len(res.Files) != 1 || res.Files[0].Name != "chart.png" || !res.Files[0].Image ||
		res.Files[0].ContentType != "image/png" || len(res.Files[0].Data) < 1000 {
		t.Fatalf("files %+v, want one PNG chart.png", fileSummary(res.Files))
	}
}

func fileSummary(files []File) []string {
	var out []string
	for _, f := range files {
		out = append(out, fmt.Sprintf("%s (%d bytes, %s, image=%v)", f.Name, len(f.Data), f.ContentType, f.Image))
	}
	return out
}

func TestExceptionsAndExitCodes(t *testing.T) {
	r := newRunner(t, Limits{})
	k := startKernel(t, r)

	res := exec1(t, k, "print('before')\nx = 1/0")
	if res.ExitCode != 1 || res.Error != "ZeroDivisionError" || res.Stdout != "before\n" || res.SandboxEnded {
		t.Errorf("1/0: exit %d, error %q, stdout %q, ended %v", res.ExitCode, res.Error, res.Stdout, res.SandboxEnded)
	}
	// The traceback shows the cell's line, not the driver.
	if !strings.Contains(res.Stderr, "File \"<cell 1>\", line 2, in <module>\n    x = 1/0\n") ||
		strings.Contains(res.Stderr, "driver") {
		t.Errorf("traceback:\n%s", res.Stderr)
	}

	res = exec1(t, k, "import sys\nsys.exit(3)")
	if res.ExitCode != 3 || res.SandboxEnded {
		t.Errorf("sys.exit(3): exit %d, ended %v", res.ExitCode, res.SandboxEnded)
	}
	res = exec1(t, k, "raise SystemExit('bye')")
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "bye") {
		t.Errorf("SystemExit('bye'): exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	res = exec1(t, k, "def f(:\n  pass")
	if res.Error != "SyntaxError" {
		t.Errorf("syntax error: error %q, stderr %q", res.Error, res.Stderr)
	}
	// input() has no terminal to read: it fails rather than waiting.
	res = exec1(t, k, "input()")
	if res.Error != "EOFError" {
		t.Errorf("input(): error %q", res.Error)
	}
	// Still the same sandbox after all of that.
	if res = exec1(t, k, "print('alive')"); res.Stdout != "alive\n" {
		t.Errorf("after the errors: stdout %q", res.Stdout)
	}

	// os._exit ends the sandbox's python itself: the sandbox has ended, with its status.
	res = exec1(t, k, "import os\nos._exit(7)")
	if !res.SandboxEnded || res.ExitCode != 7 || !strings.Contains(res.Stderr, "exit status 7") {
		t.Errorf("os._exit(7): ended %v, exit %d, stderr %q", res.SandboxEnded, res.ExitCode, res.Stderr)
	}
	if _, err := k.Exec(context.Background(), Cell{Code: "print(1)"}); !errors.Is(err, ErrEnded) {
		t.Errorf("Exec after the end: %v, want ErrEnded", err)
	}
}

func TestOutputIsCutWithANote(t *testing.T) {
	r := newRunner(t, Limits{Output: 1000})
	res := run(t, r, "import sys\nprint('x' * 5000)\nsys.stderr.write('e' * 3000)")
	if !strings.HasPrefix(res.Stdout, strings.Repeat("x", 1000)+"\n[stdout cut: 5001 bytes were written, the first 1000 are shown]") {
		t.Errorf("stdout %q", res.Stdout)
	}
	if res.StdoutBytes != 5001 || res.StderrBytes != 3000 {
		t.Errorf("byte counts %d and %d, want 5001 and 3000", res.StdoutBytes, res.StderrBytes)
	}
	if !strings.Contains(res.Stderr, "[stderr cut: 3000 bytes were written, the first 1000 are shown]") {
		t.Errorf("stderr %q", res.Stderr)
	}
}

func TestWarmKernelKeepsStateAndReportsOnlyChanges(t *testing.T) {
	r := newRunner(t, Limits{})
	k := startKernel(t, r)

	res := exec1(t, k, "x = 41\nopen('a.txt', 'w').write('one')\nopen('b.txt', 'w').write('two')")
	if got := fileNames(res.Files); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Fatalf("first cell files %q", got)
	}
	res = exec1(t, k, "print(x + 1)\nopen('b.txt', 'a').write('!')\nimport os\nprint(sorted(os.listdir('.')))",
		Input{Name: "c.csv", Data: []byte("1\n")})
	if got := lines(res.Stdout); !slices.Equal(got, []string{"42", "['a.txt', 'b.txt', 'c.csv']"}) {
		t.Errorf("second cell stdout %q", got)
	}
	if len(res.Files) != 1 || res.Files[0].Name != "b.txt" || string(res.Files[0].Data) != "two!" {
		t.Errorf("second cell files %q, want only the changed b.txt", fileSummary(res.Files))
	}
	// Classes defined in a cell live in a __main__ of the cells' own, so pickle finds them.
	res = exec1(t, k, "import pickle\nclass P:\n    v = 5\nprint(pickle.loads(pickle.dumps(P())).v)")
	if res.Stdout != "5\n" {
		t.Errorf("pickle of a cell's class: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func TestProcessesStartedByACellEndWithIt(t *testing.T) {
	r := newRunner(t, Limits{})
	k := startKernel(t, r)
	res := exec1(t, k, "import subprocess\np = subprocess.Popen(['sleep', '600'])\nprint(p.pid)")
	if res.ExitCode != 0 {
		t.Fatalf("start sleep: %s", res.Stderr)
	}
	pid := strings.TrimSpace(res.Stdout)
	res = exec1(t, k, "import os\nprint(os.path.exists('/proc/"+pid+"'))")
	if res.Stdout != "False\n" {
		t.Errorf("the sleep the first cell started is still there: %q", res.Stdout)
	}
}

func TestOutputFileLimits(t *testing.T) {
	r := newRunner(t, Limits{OutputFiles: 2, OutputFileSize: 1000})
	res := run(t, r, "for n in 'abc':\n    open(n + '.txt', 'w').write(n)\nopen('big.bin', 'wb').write(b'0' * 5000)")
	if got := fileNames(res.Files); !slices.Equal(got, []string{"a.txt", "b.txt"}) {
		t.Errorf("files %q, want the first two", got)
	}
	reasons := map[string]string{}
	for _, o := range res.Omitted {
		reasons[o.Name] = o.Reason
	}
	if !strings.Contains(reasons["big.bin"], "larger than 1000 bytes") || !strings.Contains(reasons["c.txt"], "more than 2 files") {
		t.Errorf("omitted %+v", res.Omitted)
	}
}

func TestBadCellsAreRefusedWithTheField(t *testing.T) {
	r := newRunner(t, Limits{FileSize: 100, Code: 50})
	cases := []struct {
		cell  Cell
		code  errs.Code
		field string
	}{
		{Cell{Code: "1", Inputs: []Input{{Name: "../escape.txt", Data: []byte("x")}}}, errs.Invalid, "inputs[0].name"},
		{Cell{Code: "1", Inputs: []Input{{Name: "ok.txt"}, {Name: "/etc/passwd", Data: []byte("x")}}}, errs.Invalid, "inputs[1].name"},
		{Cell{Code: "1", Inputs: []Input{{Name: "a\x00b", Data: []byte("x")}}}, errs.Invalid, "inputs[0].name"},
		{Cell{Code: "1", Inputs: []Input{{Name: "big.bin", Data: make([]byte, 101)}}}, errs.TooLarge, "inputs[0]"},
		{Cell{Code: "1", Inputs: []Input{{Name: "big.bin", Reader: strings.NewReader(strings.Repeat("x", 101))}}}, errs.TooLarge, "inputs[0]"},
		{Cell{Code: strings.Repeat("#", 51)}, errs.TooLarge, "code"},
	}
	for _, c := range cases {
		_, err := r.Run(context.Background(), c.cell)
		e := errs.As(err)
		if e == nil || e.Code != c.code || e.Field != c.field {
			t.Errorf("%.40q: error %v, want %s on %s", c.cell.Inputs, err, c.code, c.field)
		}
	}
	// A name an earlier call took for a directory is refused when the driver writes it.
	k := startKernel(t, r)
	exec1(t, k, "import os\nos.mkdir('taken')")
	_, err := k.Exec(context.Background(), Cell{Code: "1", Inputs: []Input{{Name: "taken", Data: []byte("x")}}})
	if e := errs.As(err); e == nil || e.Code != errs.Invalid || e.Field != "inputs" || !strings.Contains(e.Message, "taken: Is a directory") {
		t.Errorf("input over a directory: %v", err)
	}
	// A reader that fails is the caller's problem, said as such.
	_, err = r.Run(context.Background(), Cell{Code: "1", Inputs: []Input{{Name: "a", Reader: iotest.ErrReader(errors.New("blob gone"))}}})
	if err == nil || !strings.Contains(err.Error(), "blob gone") {
		t.Errorf("failing reader: %v", err)
	}
}

func TestLimitsStopTheCodeAndSayWhich(t *testing.T) {
	// The wall-clock limit is far above the CPU limit: the machine running the tests may be busy.
	r := newRunner(t, Limits{WallTime: time.Minute, CPUTime: time.Second, Memory: 256 << 20, FileSize: 1 << 20, Disk: 4 << 20})
	k := startKernel(t, r)
	exec1(t, k, "kept = 'state'")

	cases := []struct {
		name, code string
		limit      Limit
		error      string
	}{
		// (An endless loop is in the escape suite.)
		// The handler raising the exception is the driver's; except Exception does not swallow it.
		{"cpu caught", "while True:\n    try:\n        sum(range(10**6))\n    except Exception:\n        pass", LimitCPUTime, "CPUTimeExceeded"},
		{"memory", "chunks = []\nwhile True:\n    chunks.append(bytes(64 << 20))", LimitMemory, "MemoryError"},
		{"file size", "open('big', 'wb').write(b'0' * (2 << 20))", LimitFileSize, "OSError"},
		{"disk", "import os\nfor i in range(10):\n    open('f%d' % i, 'wb').write(b'0' * (900 << 10))", LimitDisk, "OSError"},
	}
	for _, c := range cases {
		res := exec1(t, k, c.code)
		if res.Limit != c.limit || res.Error != c.error || res.SandboxEnded {
			t.Errorf("%s: limit %q error %q ended %v; stderr:\n%s", c.name, res.Limit, res.Error, res.SandboxEnded, res.Stderr)
		}
		if !strings.Contains(res.Stderr, "[sandbox: ") {
			t.Errorf("%s: no note for the model in stderr:\n%s", c.name, res.Stderr)
		}
	}
	// Each of those was reported to the code as an exception: the sandbox and its state survived.
	if res := exec1(t, k, "print(kept)"); res.Stdout != "state\n" {
		t.Errorf("after the limits: stdout %q stderr %q", res.Stdout, res.Stderr)
	}
}

func TestWallTimeKillsTheSandboxAndKeepsPartialOutput(t *testing.T) {
	r := newRunner(t, Limits{WallTime: 2 * time.Second})
	k := startKernel(t, r)
	res := exec1(t, k, "import time\nprint('started')\ntime.sleep(3600)")
	if !res.TimedOut || res.Limit != LimitWallTime || !res.SandboxEnded {
		t.Fatalf("timed out %v, limit %q, ended %v", res.TimedOut, res.Limit, res.SandboxEnded)
	}
	if res.Stdout != "started\n" || !strings.Contains(res.Stderr, "time limit") {
		t.Errorf("stdout %q, stderr %q", res.Stdout, res.Stderr)
	}
	if !k.Ended() {
		t.Error("the kernel has not ended")
	}
}

func TestCancelledContextKillsTheSandbox(t *testing.T) {
	r := newRunner(t, Limits{})
	k := startKernel(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(500 * time.Millisecond)
		cancel()
	}()
	res, err := k.Exec(ctx, Cell{Code: "import time\nprint('waiting', flush=True)\ntime.sleep(3600)"})
	if !errors.Is(err, context.Canceled) || !res.SandboxEnded {
		t.Errorf("err %v, ended %v", err, res.SandboxEnded)
	}
}

func TestNewSaysWhatIsMissing(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		cfg  Config
		want string
	}{
		{Config{Bwrap: "/nonexistent/bwrap"}, "bubblewrap is not installed (no /nonexistent/bwrap): install Debian's bubblewrap package (apt-get install bubblewrap, or make deps)"},
		{Config{Python: "/usr/nonexistent/python3"}, "python3 is not installed (no /usr/nonexistent/python3)"},
		{Config{Python: "/root/.pyenv/shims/python3"}, "is not under /usr"},
	}
	for _, c := range cases {
		_, err := New(ctx, c.cfg)
		if errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.MessageOf(err), c.want) {
			t.Errorf("%+v: %v, want unavailable saying %q", c.cfg, err, c.want)
		}
		if !strings.HasPrefix(errs.MessageOf(err), "code_interpreter is not available on this server: ") {
			t.Errorf("message %q does not say what is unavailable", errs.MessageOf(err))
		}
		// Check says the same without starting a sandbox (a readiness check asks it).
		if err := Check(c.cfg); errs.CodeOf(err) != errs.Unavailable || !strings.Contains(errs.MessageOf(err), c.want) {
			t.Errorf("Check %+v: %v, want unavailable saying %q", c.cfg, err, c.want)
		}
	}
	if err := Check(Config{}); err != nil {
		t.Errorf("Check on a machine where New works: %v", err)
	}
	// Everything missing is said at once.
	_, err := New(ctx, Config{Bwrap: "/nonexistent/bwrap", Python: "/usr/nonexistent/python3"})
	if msg := errs.MessageOf(err); !strings.Contains(msg, "bubblewrap is not installed") || !strings.Contains(msg, "python3 is not installed") {
		t.Errorf("both missing: %q", msg)
	}
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("both missing: %v does not wrap ErrUnsupported", err)
	}
	if _, err := New(ctx, Config{Limits: Limits{Memory: -1}}); err == nil || !strings.Contains(err.Error(), "Memory") {
		t.Errorf("negative memory limit: %v", err)
	}
}
