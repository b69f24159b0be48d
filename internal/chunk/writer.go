package chunk

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/llm/tokens"
)

// Writer cuts the text written to it into chunks and hands each to emit as soon as it is complete; Close hands out
// the last ones. It holds the text of about one chunk plus one segment of untokenized text, whatever the length of
// the whole. The text must be valid UTF-8 (what the extractor writes). A Writer is not safe for concurrent use.
//
// The tokenizer sees the text in segments of about 16 kB, cut just before a space that starts a word (or after a
// line break, or at worst between two characters), where tiktoken's pre-tokenizer splits anyway: the tokens are
// those of the whole text but for a pathological text with no such place in 16 kB.
type Writer struct {
	s      Strategy
	emit   func(Chunk) error
	segLen int

	pending []byte // written, not yet tokenized

	buf      []byte // tokenized text from byte bufStart on
	bufStart int64
	toks     []tok // tokens from number tokBase on
	tokBase  int
	tokEnd   int64 // bytes tokenized
	chars    int64 // code points in the bytes tokenized

	next    int // number of the token where the next chunk starts
	lastEnd int // number of the token after the last chunk emitted
	index   int
	closed  bool
	err     error
}

// tok is where a token starts: its byte offset and how many code points begin before it.
type tok struct {
	start int64
	char  int64
}

// NewWriter returns a Writer cutting by s (which must be valid) and handing chunks to emit.
func NewWriter(s Strategy, emit func(Chunk) error) (*Writer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &Writer{s: s, emit: emit, segLen: defaultSegLen}, nil
}

// Write takes more text.
func (w *Writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("chunk: write after close")
	}
	n := len(p)
	for len(p) > 0 && w.err == nil {
		k := min(2*w.segLen-len(w.pending), len(p))
		w.pending = append(w.pending, p[:k]...)
		p = p[k:]
		for len(w.pending) >= w.segLen && w.err == nil {
			cut := cutPoint(w.pending[:w.segLen])
			w.tokenize(w.pending[:cut])
			w.pending = w.pending[:copy(w.pending, w.pending[cut:])]
			w.emitReady()
		}
	}
	if w.err != nil {
		return 0, w.err
	}
	return n, nil
}

// WriteString takes more text without copying all of it at once.
func (w *Writer) WriteString(s string) (int, error) {
	for i := 0; i < len(s); i += w.segLen {
		if _, err := w.Write([]byte(s[i:min(i+w.segLen, len(s))])); err != nil {
			return i, err
		}
	}
	return len(s), nil
}

// Close tokenizes what is left and hands out the last chunks.
func (w *Writer) Close() error {
	if w.closed || w.err != nil {
		return w.err
	}
	w.closed = true
	w.tokenize(w.pending)
	w.pending = nil
	w.emitReady()
	return w.err
}

// cutPoint is where a segment is cut: just before a space that starts a word, else just after a line break, else
// at the last character boundary. Only the segment's last 4 kB are looked at, to keep segments near their size.
func cutPoint(b []byte) int {
	lo := max(1, len(b)-4096)
	for i := len(b) - 2; i >= lo; i-- {
		if b[i] == ' ' && !isSpace(b[i-1]) && !isSpace(b[i+1]) {
			return i
		}
	}
	for i := len(b) - 1; i >= lo; i-- {
		if b[i-1] == '\n' && !isSpace(b[i]) {
			return i
		}
	}
	for i := len(b) - 1; i >= 1; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b)
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

func (w *Writer) tokenize(seg []byte) {
	if w.err != nil || len(seg) == 0 {
		return
	}
	if !utf8.Valid(seg) {
		w.err = fmt.Errorf("chunk: the text is not valid UTF-8 near byte %d", w.tokEnd)
		return
	}
	toks, err := tokens.Split(Encoding, string(seg))
	if err != nil {
		w.err = fmt.Errorf("chunk: %w", err)
		return
	}
	pos := w.tokEnd
	for _, t := range toks {
		w.toks = append(w.toks, tok{start: pos, char: w.chars})
		for i := 0; i < len(t); i++ {
			if utf8.RuneStart(t[i]) {
				w.chars++
			}
		}
		pos += int64(len(t))
	}
	if pos != w.tokEnd+int64(len(seg)) {
		// tiktoken's tokens are slices of valid UTF-8 input; anything else is a bug in the tokenizer library.
		w.err = fmt.Errorf("chunk: the tokenizer's tokens cover %d bytes of a %d-byte segment", pos-w.tokEnd, len(seg))
		return
	}
	w.buf = append(w.buf, seg...)
	w.tokEnd = pos
}

// emitReady hands out every chunk whose tokens are all known: while writing, the chunks that are full; on close,
// the rest, stopping once a chunk has reached the end of the text.
func (w *Writer) emitReady() {
	total := w.tokBase + len(w.toks)
	for w.err == nil {
		end := w.next + w.s.MaxTokens
		if end > total {
			if !w.closed || w.next >= total || (w.index > 0 && w.lastEnd >= total) {
				return
			}
			end = total
		}
		w.emitChunk(w.next, end, total)
		if end == total && w.closed {
			return
		}
	}
}

func (w *Writer) emitChunk(from, to, total int) {
	start, startChar := w.toks[from-w.tokBase].start, w.toks[from-w.tokBase].char
	if s := w.runeStart(start); s != start {
		start, startChar = s, startChar-1 // the token began inside a character: take the whole character
	}
	end, endChar := w.tokEnd, w.chars
	if to < total {
		end, endChar = w.toks[to-w.tokBase].start, w.toks[to-w.tokBase].char
		for end < w.tokEnd && !utf8.RuneStart(w.buf[end-w.bufStart]) {
			end++ // the next token begins inside a character: this chunk ends after it
		}
	}
	c := Chunk{Index: w.index, Text: string(w.buf[start-w.bufStart : end-w.bufStart]), Start: start, End: end,
		StartChar: startChar, EndChar: endChar, Tokens: to - from}
	if err := w.emit(c); err != nil {
		w.err = err
		return
	}
	w.index++
	w.lastEnd = to
	w.next = from + w.s.MaxTokens - w.s.OverlapTokens
	w.drop(min(w.next, total))
}

// drop forgets the tokens before number n, and their text.
func (w *Writer) drop(n int) {
	k := n - w.tokBase
	if k <= 0 {
		return
	}
	newStart := w.tokEnd
	if k < len(w.toks) {
		newStart = w.runeStart(w.toks[k].start)
	}
	w.toks = w.toks[k:]
	w.tokBase = n
	w.buf = w.buf[newStart-w.bufStart:]
	w.bufStart = newStart
}

// runeStart is the start of the character holding byte offset off.
func (w *Writer) runeStart(off int64) int64 {
	for off > w.bufStart && off < w.tokEnd && !utf8.RuneStart(w.buf[off-w.bufStart]) {
		off--
	}
	return off
}
