package sandbox

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The channel between the platform and the driver (driver.py) is two pipes, fd 3 into the sandbox and fd 4 out
// of it, carrying frames: one kind byte, a big-endian uint32 length, the payload.
//
// Into the sandbox: 'L' the limits (JSON, once, first); then per call 'F' an input file's name, 'D' chunks of its
// bytes, and 'C' the cell (JSON {"code", "cpu"}), which runs it.
// Out of it: 'R' ready (once); per call 'o' and 'e' chunks of stdout and stderr as they are written, 'O' a file
// the cell wrote (uint16 name length, name, bytes), and 'Z' the end of the call (JSON, driverDone).
//
// Everything read from the sandbox is untrusted: frames are bounded before they are read, names are checked, and
// a frame that breaks the rules ends the sandbox.
const (
	frameLimits = 'L'
	frameFile   = 'F'
	frameData   = 'D'
	frameCell   = 'C'

	frameReady  = 'R'
	frameStdout = 'o'
	frameStderr = 'e'
	frameOutput = 'O'
	frameDone   = 'Z'
)

// dataChunk is the size of the 'D' frames an input file is cut into.
const dataChunk = 256 << 10

type frame struct {
	kind    byte
	payload []byte
}

func writeFrame(w io.Writer, kind byte, payload []byte) error {
	var head [5]byte
	head[0] = kind
	binary.BigEndian.PutUint32(head[1:], uint32(len(payload)))
	if _, err := w.Write(head[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// readFrame reads one frame, refusing a payload over max bytes before reading it.
func readFrame(r *bufio.Reader, max int) (frame, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return frame{}, err
	}
	n := binary.BigEndian.Uint32(head[1:])
	if int64(n) > int64(max) {
		return frame{}, fmt.Errorf("frame %q of %d bytes is over the %d allowed", head[0], n, max)
	}
	f := frame{kind: head[0], payload: make([]byte, n)}
	if _, err := io.ReadFull(r, f.payload); err != nil {
		return frame{}, fmt.Errorf("frame %q: %w", head[0], err)
	}
	return f, nil
}

// driverDone is the 'Z' frame: how the cell ended, as the driver saw it.
type driverDone struct {
	ExitCode    int            `json:"exit_code"`
	Error       *string        `json:"error"`
	Limit       *string        `json:"limit"`
	StdoutBytes int64          `json:"stdout_bytes"`
	StderrBytes int64          `json:"stderr_bytes"`
	Omitted     []Omitted      `json:"omitted"`
	InputErrors []driverInputE `json:"input_errors"`
}

type driverInputE struct {
	Name  string  `json:"name"`
	Error string  `json:"error"`
	Limit *string `json:"limit"`
}

// maxNameBytes bounds a file name (the whole relative path), in or out.
const maxNameBytes = 1024

// checkName reports what is wrong with a file name for the working dir, or "" when it is usable: a relative path
// of valid UTF-8, without "..", empty or dot-only elements, or control characters.
func checkName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > maxNameBytes:
		return fmt.Sprintf("is longer than %d bytes", maxNameBytes)
	case !utf8.ValidString(name):
		return "is not valid UTF-8"
	case strings.ContainsFunc(name, unicode.IsControl):
		return "contains control characters"
	case !fs.ValidPath(name) || name == ".":
		return "must be a relative path inside the working dir, without '..' or empty elements"
	}
	for _, elem := range strings.Split(name, "/") {
		if len(elem) > 255 {
			return "has an element longer than 255 bytes"
		}
	}
	return ""
}
