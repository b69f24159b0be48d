package sandbox

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Cell is one piece of code to run, with the files it needs.
type Cell struct {
	// Code is Python source, run like a notebook cell: in a warm sandbox, in the globals earlier cells left.
	Code string
	// Inputs are written into WorkDir before the code runs (a file of the same name is replaced).
	Inputs []Input
}

// Input is a file given to the code: Data, or when Data is nil, what Reader yields.
type Input struct {
	// Name is a relative path inside WorkDir ("sales.csv", "data/q1.csv").
	Name   string
	Data   []byte
	Reader io.Reader
}

// Limit names a limit that stopped the code.
type Limit string

// The limits, as Result.Limit reports them.
const (
	LimitWallTime  Limit = "wall_time"
	LimitCPUTime   Limit = "cpu_time"
	LimitMemory    Limit = "memory"
	LimitProcesses Limit = "processes"
	LimitFileSize  Limit = "file_size"
	LimitDisk      Limit = "disk"
	LimitFileCount Limit = "file_count"
	LimitOpenFiles Limit = "open_files"
)

// Result is what a call produced. Stdout and Stderr are meant for the model and the user (the run step's logs);
// when a limit or the end of the sandbox cut the call short, Stderr ends with a line saying so.
type Result struct {
	Stdout, Stderr string
	// StdoutBytes and StderrBytes count what was written, including what was cut.
	StdoutBytes, StderrBytes int64
	// ExitCode is 0 when the code ran to its end, 1 for an uncaught exception, the code given to sys.exit, or,
	// when the sandbox ended during the call, its python's exit status (128+signal for a signal).
	ExitCode int
	// Error names the exception that ended the code ("ZeroDivisionError"), when one did.
	Error string
	// TimedOut is true when the call ran past Limits.WallTime and the sandbox was killed.
	TimedOut bool
	// Limit names the limit that stopped the code, when one did (it may have been reported to the code as an
	// exception, or have ended the sandbox).
	Limit Limit
	// SandboxEnded is true when the sandbox ended during the call (killed for a limit or the timeout, or its
	// python exited): what earlier calls left in it is gone, and the next call starts a fresh one.
	SandboxEnded bool
	// StateLost says why the variables and files of this key's earlier calls are gone, when they are and this
	// call is the first in a fresh sandbox (Pool only): the previous one ended, or was closed after idling.
	StateLost string
	// Files are the files in WorkDir the call created or changed (not its inputs), by name.
	Files []File
	// Omitted are files the call wrote that are not in Files, with why.
	Omitted []Omitted
	// Duration is how long the call took, sandbox start included for Runner.Run.
	Duration time.Duration
}

// File is a file the code wrote.
type File struct {
	// Name is its path relative to WorkDir.
	Name string
	Data []byte
	// ContentType is sniffed from the bytes (net/http's rules).
	ContentType string
	// Image is true for a PNG, JPEG, GIF or WebP image: the kinds a message can show.
	Image bool
}

// Omitted is a file the code wrote that was not returned.
type Omitted struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
}

func newFile(name string, data []byte) File {
	ct := http.DetectContentType(data)
	switch ct {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return File{Name: name, Data: data, ContentType: ct, Image: true}
	}
	return File{Name: name, Data: data, ContentType: ct}
}

// stream collects one of stdout and stderr, keeping the first max bytes.
type stream struct {
	max   int
	buf   []byte
	total int64
}

func (s *stream) add(p []byte) {
	s.total += int64(len(p))
	if room := s.max - len(s.buf); room > 0 {
		s.buf = append(s.buf, p[:min(room, len(p))]...)
	}
}

// text is the stream as text, with a note when it was cut; total is the count the driver reported, when larger
// than what reached the platform (it stops sending past the limit).
func (s *stream) text(total int64, name string) (string, int64) {
	total = max(total, s.total)
	text := strings.ToValidUTF8(string(s.buf), "\uFFFD")
	if total > int64(len(s.buf)) {
		text += fmt.Sprintf("\n[%s cut: %d bytes were written, the first %d are shown]\n", name, total, len(s.buf))
	}
	return text, total
}

// capped is an io.Writer keeping the first max bytes written to it (bubblewrap's own messages).
type capped struct {
	max int
	buf []byte
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// describe says, for the logs a model reads, why a call was cut short.
func describe(res *Result, l Limits) string {
	var what string
	switch res.Limit {
	case LimitWallTime:
		what = fmt.Sprintf("the code ran longer than the %s time limit and was stopped", l.WallTime)
	case LimitCPUTime:
		what = fmt.Sprintf("the code used more than the %s CPU time limit", l.CPUTime)
		if res.SandboxEnded {
			what = "the sandbox used more than its CPU time limit and was stopped"
		}
	case LimitMemory:
		what = fmt.Sprintf("the code ran out of memory (the limit is %d MiB per process)", l.Memory>>20)
		if res.SandboxEnded {
			what = fmt.Sprintf("the code's processes used more than %d MiB of memory in all and were stopped",
				l.SandboxMemory>>20)
		}
	case LimitProcesses:
		what = fmt.Sprintf("the code tried to run more than %d processes and threads", l.Processes)
	case LimitFileSize:
		what = fmt.Sprintf("the code tried to write a file larger than %d MiB", l.FileSize>>20)
	case LimitDisk:
		what = fmt.Sprintf("the code filled the disk (%d MiB)", l.Disk>>20)
	case LimitFileCount:
		what = fmt.Sprintf("the code created more than %d files and was stopped", l.FileCount)
	case LimitOpenFiles:
		what = fmt.Sprintf("the code opened more than %d files at once", l.OpenFiles)
	default:
		if !res.SandboxEnded {
			return ""
		}
		what = fmt.Sprintf("the sandbox's python ended with exit status %d", res.ExitCode)
	}
	if res.SandboxEnded {
		what += "; variables and files from earlier calls are gone"
	}
	return "[sandbox: " + what + "]\n"
}
