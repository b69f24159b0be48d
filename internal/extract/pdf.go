package extract

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/ledongthuc/pdf"
)

// extractPDF writes the text of each page, pages apart by a blank line. Text is laid out in the order the page
// draws it, with a line break where the baseline moves and a space where a gap is wider than a space. A PDF that
// cannot be opened is invalid_file; a page that cannot be read is skipped, and a PDF none of whose pages could be
// read is invalid_file. ledongthuc/pdf panics on some malformed input: that is recovered here, never a crash.
func extractPDF(ctx context.Context, r io.ReaderAt, size int64, s *sink) error {
	pr, err := openPDF(r, size)
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) {
			return invalid(err, "the PDF is encrypted")
		}
		return invalid(err, "the PDF is corrupt")
	}
	pages, err := numPages(pr)
	if err != nil || pages == 0 {
		return invalid(err, "the PDF has no pages")
	}
	var failed []error
	for i := 1; i <= pages; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		texts, err := pageTexts(pr, i)
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if i > 1 {
			if _, err := s.WriteString("\n\n"); err != nil {
				return err
			}
		}
		if _, err := s.WriteString(layout(texts)); err != nil {
			return err
		}
	}
	if len(failed) == pages {
		return invalid(failed[0], "the PDF is corrupt: no page could be read")
	}
	return nil
}

func openPDF(r io.ReaderAt, size int64) (pr *pdf.Reader, err error) {
	defer recoverTo(&err)
	return pdf.NewReader(r, size)
}

func numPages(pr *pdf.Reader) (n int, err error) {
	defer recoverTo(&err)
	return pr.NumPage(), nil
}

func pageTexts(pr *pdf.Reader, i int) (texts []pdf.Text, err error) {
	defer recoverTo(&err)
	p := pr.Page(i)
	if p.V.IsNull() {
		return nil, fmt.Errorf("page %d: missing", i)
	}
	return p.Content().Text, nil
}

func recoverTo(err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("malformed PDF: %v", p)
	}
}

// layout joins a page's glyphs in drawing order. Widths are known only for fonts that declare them; without them
// every glyph of a string sits at the string's start, which keeps it together.
func layout(texts []pdf.Text) string {
	var b strings.Builder
	var prev *pdf.Text
	var prevEnd float64
	for i := range texts {
		t := &texts[i]
		if t.S == "" {
			continue
		}
		if prev != nil {
			size := math.Max(math.Max(t.FontSize, prev.FontSize), 1)
			switch {
			case math.Abs(t.Y-prev.Y) > size/2:
				b.WriteByte('\n')
			case t.X > prevEnd+size/5 || t.X < prev.X-size:
				if !strings.HasSuffix(b.String(), " ") && !strings.HasPrefix(t.S, " ") {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteString(t.S)
		prev, prevEnd = t, t.X+t.W
	}
	return b.String()
}
