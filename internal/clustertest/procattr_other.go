//go:build !linux

package clustertest

import "syscall"

// sysProcAttr: elsewhere than Linux there is no parent-death signal; the test's cleanup stops every child.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
