package clustertest

import "syscall"

// sysProcAttr makes the kernel kill a child when the test process dies (a go test timeout, a Ctrl-C), so that no
// nats-server or contrail outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
