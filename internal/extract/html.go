package extract

import (
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// hidden elements hold no text a reader sees.
var hidden = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Svg: true,
	atom.Canvas: true, atom.Iframe: true, atom.Object: true,
}

// blocks start a new line; the ones marked 2 a new paragraph.
var blocks = map[atom.Atom]int{
	atom.Address: 1, atom.Article: 2, atom.Aside: 2, atom.Blockquote: 2, atom.Br: 1, atom.Caption: 1,
	atom.Dd: 1, atom.Details: 1, atom.Div: 1, atom.Dl: 1, atom.Dt: 1, atom.Fieldset: 1, atom.Figcaption: 1,
	atom.Figure: 1, atom.Footer: 1, atom.Form: 1, atom.H1: 2, atom.H2: 2, atom.H3: 2, atom.H4: 2, atom.H5: 2,
	atom.H6: 2, atom.Header: 1, atom.Hr: 1, atom.Li: 1, atom.Main: 1, atom.Nav: 1, atom.Ol: 1, atom.P: 2,
	atom.Pre: 2, atom.Section: 2, atom.Summary: 1, atom.Table: 2, atom.Title: 2, atom.Tr: 1, atom.Ul: 1,
}

// maxHTMLToken bounds the bytes the tokenizer buffers for one token (a text node or a tag).
const maxHTMLToken = 16 << 20

// extractHTML writes the text a reader of the page sees: no scripts, styles or markup, entities decoded, white
// space collapsed outside <pre>, block elements on their own lines and table cells apart.
func extractHTML(r io.Reader, s *sink) error {
	z := html.NewTokenizer(textReader(r))
	z.SetMaxBuf(maxHTMLToken)
	w := htmlWriter{s: s}
	hiddenDepth, preDepth := 0, 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			err := z.Err()
			if errors.Is(err, io.EOF) {
				return w.err
			}
			if w.err != nil {
				return w.err
			}
			if errors.Is(err, html.ErrBufferExceeded) {
				return invalid(err, "the HTML has an element over %d MB", maxHTMLToken>>20)
			}
			return err // a read error; HTML itself is never malformed to the tokenizer
		case html.TextToken:
			if hiddenDepth == 0 {
				w.text(z.Text(), preDepth > 0)
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			start, end := tt == html.StartTagToken, tt == html.EndTagToken
			if hidden[a] {
				if start {
					hiddenDepth++
				} else if end && hiddenDepth > 0 {
					hiddenDepth--
				}
				continue
			}
			if a == atom.Pre {
				if start {
					preDepth++
				} else if end && preDepth > 0 {
					preDepth--
				}
			}
			if n := blocks[a]; n > 0 {
				w.brk(n)
			} else if a == atom.Td || a == atom.Th {
				w.cell()
			}
		}
		if w.err != nil {
			return w.err
		}
	}
}

// htmlWriter writes text with collapsed white space: breaks and spaces wait until there is text to separate.
type htmlWriter struct {
	s       *sink
	written bool // anything on the page yet
	lines   int  // line breaks waiting
	space   bool // a space waiting
	tab     bool // a cell separator waiting
	err     error
}

func (w *htmlWriter) brk(n int) { w.lines = max(w.lines, n) }

func (w *htmlWriter) cell() { w.tab = true }

func (w *htmlWriter) text(b []byte, pre bool) {
	if w.err != nil {
		return
	}
	if pre {
		w.flush()
		_, w.err = w.s.Write(b)
		w.written = w.written || len(b) > 0
		return
	}
	str := string(b)
	for i, word := range strings.Fields(str) {
		if i > 0 || startsSpace(str) {
			w.space = true
		}
		w.flush()
		if _, err := w.s.WriteString(word); err != nil {
			w.err = err
			return
		}
		w.written = true
	}
	if endsSpace(str) {
		w.space = true
	}
}

// flush writes what separates the next text from the last.
func (w *htmlWriter) flush() {
	var sep string
	switch {
	case !w.written:
	case w.lines > 0:
		sep = strings.Repeat("\n", w.lines)
	case w.tab:
		sep = "\t"
	case w.space:
		sep = " "
	}
	w.lines, w.space, w.tab = 0, false, false
	if sep != "" && w.err == nil {
		_, w.err = w.s.WriteString(sep)
	}
}

// Collapsing uses Unicode's white space, so a no-break space separates words like a space (which it looks like).
func startsSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsSpace(r)
}

func endsSpace(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	return unicode.IsSpace(r)
}
