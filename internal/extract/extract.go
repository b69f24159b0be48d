package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format is a kind of file extract can read.
type Format string

// The formats.
const (
	Text     Format = "text" // plain text and source code
	Markdown Format = "markdown"
	JSON     Format = "json"
	CSV      Format = "csv"
	HTML     Format = "html"
	PDF      Format = "pdf"
	DOCX     Format = "docx"
)

// Code classifies a file extract cannot use, with the codes OpenAI reports in a vector store file's last_error.
type Code string

// The codes.
const (
	// UnsupportedFile is a kind of file extract cannot read (an image, a spreadsheet, a binary).
	UnsupportedFile Code = "unsupported_file"
	// InvalidFile is a file of a kind extract reads that is corrupt, empty, or holds no text.
	InvalidFile Code = "invalid_file"
)

// Error is a file extract cannot use. Message is meant for the user ("the PDF is encrypted").
type Error struct {
	Code    Code
	Message string
	Err     error // the cause, for logs
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

func unsupported(format string, args ...any) *Error {
	return &Error{Code: UnsupportedFile, Message: fmt.Sprintf(format, args...)}
}

func invalid(cause error, format string, args ...any) *Error {
	return &Error{Code: InvalidFile, Message: fmt.Sprintf(format, args...), Err: cause}
}

// CodeOf returns the code of a file error inside err, and false when err is not the file's fault.
func CodeOf(err error) (Code, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e.Code, true
	}
	return "", false
}

// byExtension maps a file name's extension to its format. The text extensions are those OpenAI's file_search
// accepts as text, plus a few common ones.
var byExtension = map[string]Format{
	".txt": Text, ".text": Text, ".log": Text, ".rst": Text, ".tex": Text, ".org": Text, ".adoc": Text,
	".c": Text, ".h": Text, ".cc": Text, ".cpp": Text, ".hpp": Text, ".cs": Text, ".css": Text, ".go": Text,
	".java": Text, ".js": Text, ".mjs": Text, ".ts": Text, ".tsx": Text, ".jsx": Text, ".py": Text, ".rb": Text,
	".php": Text, ".sh": Text, ".rs": Text, ".kt": Text, ".swift": Text, ".scala": Text, ".sql": Text,
	".yaml": Text, ".yml": Text, ".toml": Text, ".ini": Text, ".xml": Text,
	".md": Markdown, ".markdown": Markdown,
	".json": JSON, ".jsonl": JSON, ".ndjson": JSON,
	".csv": CSV, ".tsv": CSV,
	".html": HTML, ".htm": HTML, ".xhtml": HTML,
	".pdf":  PDF,
	".docx": DOCX,
}

// unreadable names extensions of files people upload that extract does not read, to say so by name.
var unreadable = map[string]string{
	".doc": "legacy Word (.doc)", ".pptx": "PowerPoint", ".ppt": "PowerPoint", ".xlsx": "Excel", ".xls": "Excel",
	".odt": "OpenDocument", ".rtf": "RTF", ".epub": "EPUB", ".zip": "zip archive", ".gz": "gzip archive",
	".png": "image", ".jpg": "image", ".jpeg": "image", ".gif": "image", ".webp": "image", ".svg": "image",
	".mp3": "audio", ".wav": "audio", ".mp4": "video", ".exe": "executable",
}

// sniffLen is how much of a file Detect looks at.
const sniffLen = 4096

var (
	pdfMagic = []byte("%PDF-")
	zipMagic = []byte("PK\x03\x04")
)

// Detect names the format of a file from its name and first bytes (up to 4 kB are looked at). The extension
// decides when it is known; the content is then checked against it (a ".pdf" that is not a PDF is invalid_file).
// Without a known extension the content decides. The file's emptiness is not judged here.
func Detect(name string, head []byte) (Format, error) {
	if len(head) > sniffLen {
		head = head[:sniffLen]
	}
	ext := strings.ToLower(path.Ext(name))
	if what, ok := unreadable[ext]; ok {
		return "", unsupported("%s files are not supported; upload text, markdown, json, csv, html, pdf or docx", what)
	}
	if f, ok := byExtension[ext]; ok {
		if len(head) == 0 {
			return f, nil
		}
		switch f {
		case PDF:
			if !bytes.Contains(head, pdfMagic) {
				return "", invalid(nil, "the file is named .pdf but is not a PDF")
			}
		case DOCX:
			if !bytes.HasPrefix(head, zipMagic) {
				return "", invalid(nil, "the file is named .docx but is not a Word document")
			}
		default:
			if binary(head) {
				return "", invalid(nil, "the file is named %s but holds binary data, not text", ext)
			}
		}
		return f, nil
	}
	switch {
	case len(head) == 0:
		return Text, nil
	case bytes.HasPrefix(head, pdfMagic):
		return PDF, nil
	case bytes.HasPrefix(head, zipMagic):
		// A docx is a zip; whether this zip is one is known once its directory is read.
		return DOCX, nil
	case binary(head):
		return "", unsupported("the file is binary data of an unsupported type; upload text, markdown, json, csv, html, pdf or docx")
	case looksHTML(head):
		return HTML, nil
	}
	return Text, nil
}

// binary reports whether the start of a file is not text: it holds NUL bytes (and no UTF-16 byte-order mark) or
// control characters text does not use.
func binary(head []byte) bool {
	if bytes.HasPrefix(head, []byte{0xFF, 0xFE}) || bytes.HasPrefix(head, []byte{0xFE, 0xFF}) {
		return false // UTF-16 text has NULs in every other byte
	}
	controls := 0
	for _, b := range head {
		switch {
		case b == 0:
			return true
		case b < 0x20 && b != '\n' && b != '\r' && b != '\t' && b != '\f' && b != '\v' && b != 0x1b:
			controls++
		}
	}
	return controls*100 > len(head) // more than 1% control characters
}

func looksHTML(head []byte) bool {
	s := strings.ToLower(string(bytes.TrimLeftFunc(bytes.TrimPrefix(head, utf8BOM), unicode.IsSpace)))
	for _, p := range []string{"<!doctype html", "<html", "<head", "<body"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Options limits an extraction.
type Options struct {
	// MaxText is the most bytes of text a file may give (0: no limit); a file with more is invalid_file.
	MaxText int64
}

// Extract writes the text of a file to w and returns its format. name gives the extension; r and size give the
// bytes (a PDF or DOCX is read at random offsets, which is why this takes an io.ReaderAt: callers with a stream
// spool it to a temporary file). The text is valid UTF-8; text files in UTF-16 (with a byte-order mark) or a
// legacy 8-bit encoding are converted.
//
// The text written before an error is incomplete and should be thrown away.
func Extract(ctx context.Context, name string, r io.ReaderAt, size int64, w io.Writer, opt Options) (Format, error) {
	if size == 0 {
		if _, err := Detect(name, nil); err != nil {
			return "", err
		}
		return "", invalid(nil, "the file is empty")
	}
	head := make([]byte, min(size, sniffLen))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("extract %s: read: %w", name, err)
	}
	f, err := Detect(name, head)
	if err != nil {
		return "", err
	}
	s := &sink{ctx: ctx, w: w, max: opt.MaxText}
	src := io.NewSectionReader(r, 0, size)
	switch f {
	case PDF:
		err = extractPDF(ctx, r, size, s)
	case DOCX:
		err = extractDOCX(ctx, r, size, s, strings.EqualFold(path.Ext(name), ".docx"))
	case HTML:
		err = extractHTML(src, s)
	case JSON:
		err = extractJSON(src, s)
	default:
		err = extractText(src, s)
	}
	switch {
	case s.err != nil:
		// The writer failed or the limit was reached: what the format reader made of that is beside the point.
		return "", s.err
	case err != nil:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		var fe *Error
		if !errors.As(err, &fe) {
			err = fmt.Errorf("extract %s: %w", name, err)
		}
		return "", err
	case !s.text:
		return "", invalid(nil, "the file holds no text")
	}
	return f, nil
}

// sink is the writer extractors write text to. It keeps the first error of the caller's writer (or of the
// context, or of the size limit) apart from errors in the file, and notes whether any text other than white space
// went through.
type sink struct {
	ctx  context.Context
	w    io.Writer
	max  int64
	n    int64
	text bool
	err  error
}

func (s *sink) Write(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return 0, err
	}
	if s.max > 0 && s.n+int64(len(p)) > s.max {
		s.err = invalid(nil, "the file's text is longer than %d bytes", s.max)
		return 0, s.err
	}
	if !s.text && len(bytes.TrimSpace(p)) > 0 {
		s.text = true
	}
	n, err := s.w.Write(p)
	s.n += int64(n)
	if err != nil {
		s.err = err
		return n, err
	}
	return n, nil
}

func (s *sink) WriteString(str string) (int, error) { return s.Write([]byte(str)) }

// validUTF8 reports whether p is valid UTF-8, allowing an incomplete character at its end (p is a prefix).
func validUTF8(p []byte) bool {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				p = p[:i]
			}
			break
		}
	}
	return utf8.Valid(p)
}
