package sandbox

import (
	"errors"
	"fmt"
	"time"
)

// Limits bound what the code in one sandbox may use. The zero value of a field takes its default
// (DefaultLimits); a negative value is invalid.
type Limits struct {
	// WallTime is how long one call may take, inputs and outputs included. Past it the sandbox is killed with
	// every process in it.
	WallTime time.Duration
	// CPUTime is the CPU time one call may use (RLIMIT_CPU's soft limit, moved before each call): past it the code
	// gets an exception, and a process that ignores it runs into WallTime.
	CPUTime time.Duration
	// SandboxCPUTime is the CPU time a warm sandbox may use over its whole life (RLIMIT_CPU's hard limit, which
	// cannot be moved again): past it the kernel kills it and the next call starts a fresh one.
	SandboxCPUTime time.Duration
	// Memory is the address space of each process (RLIMIT_AS), in bytes.
	Memory int64
	// SandboxMemory is the memory (resident) all the processes of a sandbox may use together, in bytes: Memory
	// bounds each process, and a sandbox may run Processes of them. Past it the platform's watchdog, which looks
	// every quarter of a second, kills the sandbox.
	SandboxMemory int64
	// Processes is how many processes and threads the sandbox may have at once (RLIMIT_NPROC, counted inside
	// the sandbox's own user namespace, so sandboxes do not share it).
	Processes int
	// FileSize is the largest file the code may write (RLIMIT_FSIZE), in bytes.
	FileSize int64
	// Disk is the size of each writable tmpfs (the working dir and /tmp), in bytes.
	Disk int64
	// FileCount is how many files and directories the writable tmpfs may hold in all: a tmpfs bounds bytes but
	// not inodes, which cost kernel memory, so the platform watches the count and ends a sandbox that passes it.
	FileCount int
	// OpenFiles is RLIMIT_NOFILE.
	OpenFiles int
	// Output is how many bytes of stdout, and of stderr, one call returns; the rest is counted and cut.
	Output int
	// OutputFiles, OutputFileSize and OutputBytes bound the files one call returns (count, each, all together);
	// files past them are listed in Result.Omitted.
	OutputFiles    int
	OutputFileSize int64
	OutputBytes    int64
	// Code is the largest cell of code accepted, in bytes.
	Code int
}

// DefaultLimits are the limits of a field left zero: enough for pandas on a CSV of some megabytes and a chart.
func DefaultLimits() Limits {
	return Limits{
		WallTime:       60 * time.Second,
		CPUTime:        30 * time.Second,
		SandboxCPUTime: 30 * time.Minute,
		Memory:         1 << 30,
		SandboxMemory:  2 << 30,
		Processes:      32,
		FileSize:       64 << 20,
		Disk:           256 << 20,
		FileCount:      10000,
		OpenFiles:      256,
		Output:         64 << 10,
		OutputFiles:    20,
		OutputFileSize: 32 << 20,
		OutputBytes:    64 << 20,
		Code:           1 << 20,
	}
}

// idleCPU is the CPU time a warm sandbox may use between calls (threads a cell left running) before it is ended.
const idleCPU = 5 * time.Second

// withDefaults fills zero fields from DefaultLimits and checks the rest.
func (l Limits) withDefaults() (Limits, error) {
	d := DefaultLimits()
	errs := []error{
		fill("WallTime", &l.WallTime, d.WallTime),
		fill("CPUTime", &l.CPUTime, d.CPUTime),
		fill("SandboxCPUTime", &l.SandboxCPUTime, d.SandboxCPUTime),
		fill("Memory", &l.Memory, d.Memory),
		fill("SandboxMemory", &l.SandboxMemory, d.SandboxMemory),
		fill("Processes", &l.Processes, d.Processes),
		fill("FileSize", &l.FileSize, d.FileSize),
		fill("Disk", &l.Disk, d.Disk),
		fill("FileCount", &l.FileCount, d.FileCount),
		fill("OpenFiles", &l.OpenFiles, d.OpenFiles),
		fill("Output", &l.Output, d.Output),
		fill("OutputFiles", &l.OutputFiles, d.OutputFiles),
		fill("OutputFileSize", &l.OutputFileSize, d.OutputFileSize),
		fill("OutputBytes", &l.OutputBytes, d.OutputBytes),
		fill("Code", &l.Code, d.Code),
	}
	if err := errors.Join(errs...); err != nil {
		return l, err
	}
	if l.SandboxCPUTime < l.CPUTime {
		return l, fmt.Errorf("sandbox limits: SandboxCPUTime (%s) is less than CPUTime (%s)", l.SandboxCPUTime, l.CPUTime)
	}
	return l, nil
}

func fill[T int | int64 | time.Duration](name string, v *T, fallback T) error {
	switch {
	case *v < 0:
		return fmt.Errorf("sandbox limits: %s must not be negative", name)
	case *v == 0:
		*v = fallback
	}
	return nil
}
