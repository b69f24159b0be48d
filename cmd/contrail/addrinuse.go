package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/contrailhq/contrail/internal/dirlock"
)

// listenError is the error of a failed listen on the HTTP address. A port in use names its holder where it can
// (another Contrail, which process, which data dir) and says how to choose another port, since the usual cause is a
// second `make run` beside a first.
func listenError(ctx context.Context, addr, dataDir string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	var holder []string
	if isContrail(ctx, addr) {
		holder = append(holder, "another Contrail answers there (http://"+addr+"/healthz)")
	}
	if pid, cmdline := portHolder(addr); pid > 0 {
		holder = append(holder, fmt.Sprintf("process %d holds it (%s)", pid, cmdline))
	}
	// The lock is probed only on a data dir that exists: this node is not starting, and must leave nothing behind.
	if _, serr := os.Stat(filepath.Join(dataDir, dirlock.FileName)); serr == nil {
		if l, lerr := dirlock.Acquire(dataDir); lerr == nil {
			l.Release()
		} else if held := (*dirlock.HeldError)(nil); errors.As(lerr, &held) && held.PID > 0 {
			holder = append(holder, fmt.Sprintf("data dir %s is in use by process %d too", dataDir, held.PID))
		}
	}
	who := "another program holds it"
	if len(holder) > 0 {
		who = strings.Join(holder, "; ")
	}
	return fmt.Errorf("listen on %s: the address is in use: %s. Stop that one, or start this node on another port "+
		"and data dir: `make run ADDR=127.0.0.1:8081 DATA_DIR=./contrail-data-2 NATS_LISTEN=off`, or `contrail serve "+
		"--addr 127.0.0.1:8081 --data-dir ./contrail-data-2 --nats-listen off` (CONTRAIL_ADDR, CONTRAIL_DATA_DIR)", addr, who)
}

// isContrail says whether what listens on addr answers /healthz as Contrail does.
func isContrail(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+addr+"/healthz", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		Status string `json:"status"`
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&h) == nil && h.Status != ""
}

// portHolder finds the process listening on addr's port through /proc (Linux; the process must be this user's for
// its file descriptors to be readable), with its command line. It returns 0 when it cannot tell.
func portHolder(addr string) (int, string) {
	_, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, ""
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port <= 0 {
		return 0, ""
	}
	inodes := map[string]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			// local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
			if len(f) < 10 || f[3] != "0A" {
				continue
			}
			if i := strings.LastIndexByte(f[1], ':'); i >= 0 {
				if p, err := strconv.ParseUint(f[1][i+1:], 16, 16); err == nil && int(p) == port {
					inodes["socket:["+f[9]+"]"] = true
				}
			}
		}
	}
	if len(inodes) == 0 {
		return 0, ""
	}
	procs, _ := os.ReadDir("/proc")
	for _, d := range procs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", d.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(filepath.Join("/proc", d.Name(), "fd", fd.Name())); err == nil && inodes[link] {
				cmd, _ := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
				return pid, clip(strings.ReplaceAll(strings.TrimRight(string(cmd), "\x00"), "\x00", " "), 200)
			}
		}
	}
	return 0, ""
}
