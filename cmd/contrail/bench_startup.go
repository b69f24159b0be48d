package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
	"github.com/contrailhq/contrail/internal/procmem"
)

// newBenchStartupCmd measures what a new node costs: the time from exec to a ready /readyz on an empty data dir,
// what each part of the start took (the node's "startup steps" log line), and its resident memory once idle, split
// into the node's own (anonymous: heap, stacks) and the pages of the binary it has touched (file-backed: shared with
// the page cache, dropped first under memory pressure). Memory is read after --idle on every start, and the first
// start is then watched for --watch: an idle node still allocates, and its heap grows until the collector runs, so
// the figure that matters is the most it holds over minutes, not a few seconds after the start. It runs this very
// binary as `contrail serve`, or --binary.
func newBenchStartupCmd() *cobra.Command {
	var runs int
	var idle, watch, refault time.Duration
	var asJSON bool
	var binary string
	cmd := &cobra.Command{
		Use:   "startup",
		Short: "Start-to-ready time on an empty data dir, the cost of each part, and idle resident memory of `contrail serve`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self := binary
			if self == "" {
				var err error
				if self, err = os.Executable(); err != nil {
					return err
				}
			}
			self, err := installedCopy(self)
			if err != nil {
				return err
			}
			defer os.Remove(self)
			var ready, cpu, beforeServe []time.Duration
			var rss, anon, file, beginRSS, beginAnon, beginFile []float64
			var watched residence
			steps := map[string][]time.Duration{}
			heaps := map[string][]float64{}
			var order []string
			for i := 0; i < runs; i++ {
				w := time.Duration(0)
				if i == 0 {
					w = watch
				}
				m, err := measureStartup(cmd.Context(), self, idle, w, refault)
				if err != nil {
					return err
				}
				if i == 0 {
					watched = m.watched
				}
				ready, cpu = append(ready, m.ready), append(cpu, m.cpu)
				beforeServe = append(beforeServe, m.beforeServe)
				rss, anon, file = append(rss, m.idle.RSS/1024), append(anon, m.idle.Anon/1024), append(file, m.idle.File/1024)
				beginRSS, beginAnon = append(beginRSS, m.begin.RSS/1024), append(beginAnon, m.begin.Anon/1024)
				beginFile = append(beginFile, m.begin.File/1024)
				for _, st := range m.steps {
					if _, seen := steps[st.name]; !seen {
						order = append(order, st.name)
					}
					steps[st.name] = append(steps[st.name], st.took)
					heaps[st.name] = append(heaps[st.name], st.heapMiB)
				}
			}
			rep := bench.Report{Title: fmt.Sprintf("contrail bench startup: %d starts on empty data dirs, RSS after %v idle", runs, idle)}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			rep.Figures = append(rep.Figures,
				bench.Figure{Name: "exec to ready, p50", Value: ms(bench.Percentile(ready, 50)), Unit: "ms"},
				bench.Figure{Name: "exec to ready, max", Value: ms(bench.Percentile(ready, 100)), Unit: "ms"},
				bench.Figure{Name: "CPU time to ready, p50", Value: ms(bench.Percentile(cpu, 50)), Unit: "ms",
					Note: "user+system time of the node until ready: what the start costs, less the machine's other load"},
				bench.Figure{Name: "part: exec to serve, p50", Value: ms(bench.Percentile(beforeServe, 50)), Unit: "ms",
					Note: "loading the binary, package init, flags and config"},
			)
			for _, name := range order {
				rep.Figures = append(rep.Figures, bench.Figure{Name: "part: " + name + ", p50",
					Value: ms(bench.Percentile(steps[name], 50)), Unit: "ms",
					Note: fmt.Sprintf("heap %+.1f MiB (p50)", median(heaps[name]))})
			}
			rep.Figures = append(rep.Figures,
				bench.Figure{Name: "resident when serve began, p50", Value: median(beginRSS), Unit: "MiB",
					Note: "the binary loaded, every package initialized, flags and config read, before any part: what a start holds before it does anything"},
				bench.Figure{Name: "resident when serve began, anonymous, p50", Value: median(beginAnon), Unit: "MiB"},
				bench.Figure{Name: "resident when serve began, file-backed, p50", Value: median(beginFile), Unit: "MiB"},
				bench.Figure{Name: fmt.Sprintf("resident %v after ready, max", idle), Value: maxOf(rss), Unit: "MiB"},
				bench.Figure{Name: "idle resident, anonymous, max", Value: maxOf(anon), Unit: "MiB",
					Note: "the node's own memory: Go heap, stacks, the embedded server's buffers"},
				bench.Figure{Name: "idle resident, file-backed, max", Value: maxOf(file), Unit: "MiB",
					Note: "pages of the binary mapped: those touched and the neighbours the kernel mapped with them; shared with the page cache and reclaimable"},
			)
			if watch > idle {
				rep.Figures = append(rep.Figures,
					bench.Figure{Name: fmt.Sprintf("resident over %v idle, max", watch), Value: watched.peak.RSS / 1024, Unit: "MiB",
						Note: "read every second on the first start: the most an idle node held"},
					bench.Figure{Name: fmt.Sprintf("resident over %v idle, anonymous, max", watch), Value: watched.peak.Anon / 1024, Unit: "MiB"},
					bench.Figure{Name: fmt.Sprintf("resident after %v idle", watch), Value: watched.last.RSS / 1024, Unit: "MiB"},
					bench.Figure{Name: fmt.Sprintf("resident after %v idle, anonymous", watch), Value: watched.last.Anon / 1024, Unit: "MiB"},
					bench.Figure{Name: fmt.Sprintf("touched over %v idle", watch-idle), Value: watched.touched.RSS / 1024, Unit: "MiB",
						Note: "pages the node accessed while idle, its accessed bits cleared at the watch's start: the memory it uses"},
					bench.Figure{Name: fmt.Sprintf("touched over %v idle, anonymous", watch-idle), Value: watched.touched.Anon / 1024, Unit: "MiB"},
					bench.Figure{Name: fmt.Sprintf("touched over %v idle, file-backed", watch-idle), Value: watched.touched.File / 1024, Unit: "MiB"},
					bench.Figure{Name: fmt.Sprintf("CPU while idle over %v", watch), Value: 100 * watched.cpu.Seconds() / max(watched.over.Seconds(), 1e-9),
						Unit: "% of a core", Note: "what an idle node costs: lease renewals, pulls, sweeps, its collector"},
				)
			}
			if watch > idle && refault > 0 {
				if watched.pageOutErr != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "resident after a page-out: not measured: %v\n", watched.pageOutErr)
				} else {
					after := watched.refaulted
					rep.Figures = append(rep.Figures,
						bench.Figure{Name: "binary paged out after the watch", Value: watched.pagedOut / 1024, Unit: "MiB",
							Note: "what of the binary was resident when the watch ended, reclaimed at once (process_madvise MADV_PAGEOUT) as memory pressure would"},
						bench.Figure{Name: fmt.Sprintf("resident %v after the page-out", refault), Value: after.RSS / 1024, Unit: "MiB",
							Note: "what the idle node mapped back: the least it holds resident on this kernel, start-up pages dropped"},
						bench.Figure{Name: fmt.Sprintf("resident %v after the page-out, anonymous", refault), Value: after.Anon / 1024, Unit: "MiB"},
						bench.Figure{Name: fmt.Sprintf("resident %v after the page-out, file-backed", refault), Value: after.File / 1024, Unit: "MiB"},
					)
				}
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 5, "how many starts")
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "how long each node idles before its memory is read")
	cmd.Flags().DurationVar(&watch, "watch", 90*time.Second, "how long the first node is watched idle, its memory read every second (0: not watched)")
	cmd.Flags().DurationVar(&refault, "refault", 30*time.Second, "after the watch, page out the node's binary and read what it maps back over this long (0: not done)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().StringVar(&binary, "binary", "", "measure this contrail binary instead of this one (to compare builds in the same minute)")
	return cmd
}

// installedCopy copies the binary to a new temporary file, written as an installer writes it, and returns its path.
// The file-backed part of a node's memory depends on how its binary came into the page cache, not only on what it
// runs: the very same binary measured 39-44 MiB file-backed when just written by the Go linker (which writes through
// a mapping) and 35 MiB once copied. Measuring a copy gives what an installed node holds, whatever built it.
func installedCopy(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open the binary to measure: %w", err)
	}
	defer src.Close()
	// Beside the binary, where it is installed: a temporary directory may be a tmpfs, whose mapped pages count as
	// shared memory rather than file-backed.
	dst, err := os.CreateTemp(filepath.Dir(path), ".contrail-bench-startup-*")
	if err != nil {
		dst, err = os.CreateTemp("", "contrail-bench-startup-*")
	}
	if err != nil {
		return "", fmt.Errorf("copy the binary to measure: %w", err)
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(dst.Name(), 0o755)
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copy the binary to measure: %w", err)
	}
	return dst.Name(), nil
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// startup is one start measured.
type startup struct {
	ready, cpu, beforeServe time.Duration
	begin                   procmem.Resident // when serve began: the binary loaded and package init run
	idle                    procmem.Resident // after the idle time
	watched                 residence
	steps                   []startStep
}

// residence is what a watch of an idle node read: the most of each part, the last reading, the memory the node
// touched, and the CPU time it used over the watch.
type residence struct {
	peak, last procmem.Resident
	touched    procmem.Resident
	cpu        time.Duration
	over       time.Duration
	// pagedOut is what of the binary was resident when the watch ended and was paged out (KiB); refaulted is the
	// node's resident memory after it idled --refault since; pageOutErr says why neither was measured.
	pagedOut   float64
	refaulted  procmem.Resident
	pageOutErr error
}

// startStep is one part of the start as the node's "startup steps" line gives it.
type startStep struct {
	name    string
	took    time.Duration
	heapMiB float64
}

func measureStartup(ctx context.Context, self string, idle, watch, refault time.Duration) (startup, error) {
	var m startup
	dir, err := os.MkdirTemp("", "contrail-startup-")
	if err != nil {
		return m, err
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return m, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(self, "serve", "--addr", addr, "--data-dir", dir, "--nats-listen", "off", "--log-format", "json")
	cmd.Env = append(os.Environ(), "CONTRAIL_ADMIN_KEY=")
	logs, err := cmd.StderrPipe()
	if err != nil {
		return m, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return m, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	lines := make(chan startupLog, 2)
	go readStartupLog(logs, lines)
	c := &http.Client{Timeout: time.Second}
	for deadline := start.Add(30 * time.Second); ; {
		if resp, err := c.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				m.ready = time.Since(start)
				break
			}
		}
		if time.Now().After(deadline) {
			return m, fmt.Errorf("not ready after 30s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if m.cpu, err = cpuTime(cmd.Process.Pid); err != nil {
		return m, err
	}
	// The node logs its parts and then "contrail ready" with the time since serve began.
	wait := time.NewTimer(5 * time.Second)
	defer wait.Stop()
	for got := 0; got < 2; got++ {
		select {
		case l := <-lines:
			if l.steps != nil {
				m.steps, m.begin = l.steps, l.begin
			} else {
				m.beforeServe = max(0, m.ready-l.startup)
			}
		case <-wait.C:
			return m, fmt.Errorf("the node did not log its startup steps")
		case <-ctx.Done():
			return m, ctx.Err()
		}
	}
	time.Sleep(idle)
	if m.idle, err = procmem.Of(cmd.Process.Pid); err != nil || watch <= idle {
		return m, err
	}
	m.watched.peak = m.idle
	// What the node touches while idle, from here to the watch's end: the memory it uses, which its resident
	// memory overstates by the pages the kernel mapped beside those it touched.
	if err := procmem.ClearTouched(cmd.Process.Pid); err != nil {
		return m, err
	}
	cpuFrom, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	from := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for end := time.Now().Add(watch - idle); time.Now().Before(end); {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return m, ctx.Err()
		}
		r, err := procmem.Of(cmd.Process.Pid)
		if err != nil {
			return m, err
		}
		m.watched.last = r
		m.watched.peak = procmem.Resident{RSS: max(m.watched.peak.RSS, r.RSS), Anon: max(m.watched.peak.Anon, r.Anon),
			File: max(m.watched.peak.File, r.File)}
	}
	touched, err := procmem.Touched(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	m.watched.touched = touched
	cpu, err := cpuTime(cmd.Process.Pid)
	if err != nil {
		return m, err
	}
	m.watched.cpu, m.watched.over = cpu-cpuFrom, time.Since(from)
	if refault <= 0 {
		return m, nil
	}
	// What the node touched only to start stays mapped until memory runs short. Reclaimed now, what the idle node
	// maps back is what it uses: the floor of its resident memory.
	if m.watched.pagedOut, m.watched.pageOutErr = procmem.PageOutBinary(cmd.Process.Pid); m.watched.pageOutErr != nil {
		return m, nil
	}
	select {
	case <-time.After(refault):
	case <-ctx.Done():
		return m, ctx.Err()
	}
	m.watched.refaulted, err = procmem.Of(cmd.Process.Pid)
	return m, err
}

// startupLog is what the node's log says of its start: the parts and what it held before them, or the time from
// serve to ready.
type startupLog struct {
	steps   []startStep
	begin   procmem.Resident
	startup time.Duration
}

// readStartupLog reads the node's JSON log for its "startup steps" and "contrail ready" lines, and reads on (to the
// end) so that the node never blocks on a full pipe.
func readStartupLog(r io.Reader, out chan<- startupLog) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var line struct {
			Msg       string  `json:"msg"`
			StartupMS float64 `json:"startup_ms"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch line.Msg {
		case "startup steps":
			var begin struct {
				RSS  float64 `json:"begin_rss_mib"`
				Anon float64 `json:"begin_anon_mib"`
				File float64 `json:"begin_file_mib"`
			}
			_ = json.Unmarshal(sc.Bytes(), &begin)
			out <- startupLog{steps: startSteps(sc.Bytes()), begin: procmem.Resident{RSS: begin.RSS * 1024, Anon: begin.Anon * 1024, File: begin.File * 1024}}
		case "contrail ready":
			out <- startupLog{startup: time.Duration(line.StartupMS * 1e6)}
		}
	}
	_, _ = io.Copy(io.Discard, r)
}

// startSteps reads the parts of a "startup steps" line in the order logged: each is an object {"ms", "heap_mib"}.
func startSteps(line []byte) []startStep {
	var parts map[string]json.RawMessage
	if json.Unmarshal(line, &parts) != nil {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	var steps []startStep
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return steps
		}
		switch t := tok.(type) {
		case json.Delim:
			if t == '{' {
				depth++
			} else if t == '}' {
				depth--
			}
		case string:
			raw, ok := parts[t]
			if depth != 1 || !ok || len(raw) == 0 || raw[0] != '{' {
				continue
			}
			var part struct {
				MS      float64 `json:"ms"`
				HeapMiB float64 `json:"heap_mib"`
			}
			if json.Unmarshal(raw, &part) == nil {
				steps = append(steps, startStep{name: t, took: time.Duration(part.MS * 1e6), heapMiB: part.HeapMiB})
			}
		}
	}
}

// cpuTime reads the user and system time a process has used so far from /proc (Linux; in ticks of 1/100 s).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	// The command name may hold spaces: the fields that follow it start after its closing parenthesis.
	end := bytes.LastIndexByte(b, ')')
	fields := strings.Fields(string(b[end+1:]))
	if end < 0 || len(fields) < 13 {
		return 0, fmt.Errorf("read CPU time of pid %d: unexpected /proc stat", pid)
	}
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("read CPU time of pid %d: %w", pid, err)
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}
