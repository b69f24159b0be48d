package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/contrailhq/contrail/internal/bench"
)

// newBenchStartupCmd measures what a new node costs: the time from exec to a ready /readyz on an empty data dir,
// and its resident memory once idle. It runs this very binary as `contrail serve`.
func newBenchStartupCmd() *cobra.Command {
	var runs int
	var idle time.Duration
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "startup",
		Short: "Start-to-ready time on an empty data dir and idle resident memory of `contrail serve`",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			self, err := os.Executable()
			if err != nil {
				return err
			}
			var ready []time.Duration
			var rss []float64
			for i := 0; i < runs; i++ {
				d, kb, err := measureStartup(self, idle)
				if err != nil {
					return err
				}
				ready = append(ready, d)
				rss = append(rss, kb/1024)
			}
			rep := bench.Report{Title: fmt.Sprintf("contrail bench startup: %d starts on empty data dirs, RSS after %v idle", runs, idle)}
			rep.Figures = append(rep.Figures,
				bench.Figure{Name: "exec to ready, p50", Value: float64(bench.Percentile(ready, 50)) / 1e6, Unit: "ms"},
				bench.Figure{Name: "exec to ready, max", Value: float64(bench.Percentile(ready, 100)) / 1e6, Unit: "ms"},
				bench.Figure{Name: "idle resident memory, max", Value: maxOf(rss), Unit: "MiB"},
			)
			if asJSON {
				return printJSON(cmd.OutOrStdout(), rep)
			}
			return rep.Print(cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&runs, "runs", 5, "how many starts")
	cmd.Flags().DurationVar(&idle, "idle", 3*time.Second, "how long the node idles before its memory is read")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func maxOf(v []float64) float64 {
	m := 0.0
	for _, x := range v {
		m = max(m, x)
	}
	return m
}

func measureStartup(self string, idle time.Duration) (time.Duration, float64, error) {
	dir, err := os.MkdirTemp("", "contrail-startup-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(self, "serve", "--addr", addr, "--data-dir", dir, "--nats-listen", "off", "--log-format", "json")
	cmd.Env = append(os.Environ(), "CONTRAIL_ADMIN_KEY=")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	c := &http.Client{Timeout: time.Second}
	var ready time.Duration
	for deadline := start.Add(30 * time.Second); ; {
		if resp, err := c.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ready = time.Since(start)
				break
			}
		}
		if time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("not ready after 30s")
		}
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(idle)
	kb, err := residentKB(cmd.Process.Pid)
	return ready, kb, err
}

// residentKB reads VmRSS from /proc (Linux).
func residentKB(pid int) (float64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				return strconv.ParseFloat(fields[0], 64)
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}
