package turn

import (
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/events"
)

// Stripper takes out of a text, streamed in pieces, the markers that cite a search result, and keeps each as a
// Citation at the place it was (Start = End, in characters of the text without them). That is how the Responses API
// gives a cited answer: its text carries no markers, and each file_citation annotation has the index where one was.
// (The Assistants API keeps the markers in the text: see Citations.)
//
// What it gives out does not depend on how the text was split into pieces: a piece that may begin a marker is held
// until the marker ends or cannot be one (maxMarker bytes without its end), so a stream's pieces and the whole text
// stripped at once agree, and a stream replayed from the recorded pieces is the one sent live.
type Stripper struct {
	results func(key string) []events.FileSearchResult
	held    string
	out     int // characters given out so far
	cited   []Citation
}

const (
	markerOpen  = "【"
	markerClose = "】"
	// maxMarker bounds a marker in bytes: the key (a call's place or an item's ID), the index and a file name.
	maxMarker = 512
)

// NewStripper strips the markers that name a result the caller's searches found (results gives a call's results
// by its key, as in Citations); any other marker stays as text.
func NewStripper(results func(key string) []events.FileSearchResult) *Stripper {
	return &Stripper{results: results}
}

// Write takes the next piece of the text and returns what of the text may be given out now ("" while a possible
// marker is held).
func (s *Stripper) Write(piece string) string {
	s.held += piece
	var b strings.Builder
	for s.held != "" {
		i := strings.Index(s.held, markerOpen)
		if i < 0 {
			// A piece may end within the 【's bytes: those are held with the rest of it to come.
			s.emit(&b, len(s.held)-openPrefix(s.held))
			break
		}
		s.emit(&b, i)
		// A marker ends within maxMarker bytes of its 【: nothing further is looked at (a text of many 【 is then
		// stripped in time linear in its length, not in its square).
		end := strings.Index(s.held[:min(len(s.held), maxMarker)], markerClose)
		if end < 0 {
			if len(s.held) < maxMarker {
				break // more may come
			}
			s.emit(&b, len(markerOpen)) // too long to be a marker
			continue
		}
		n := end + len(markerClose)
		if c, ok := s.cite(s.held[:n]); ok {
			c.Start, c.End = s.out, s.out
			s.cited = append(s.cited, c)
			s.held = s.held[n:]
			continue
		}
		s.emit(&b, len(markerOpen))
	}
	return b.String()
}

// Flush returns what is still held, once the text has ended.
func (s *Stripper) Flush() string {
	var b strings.Builder
	s.emit(&b, len(s.held))
	return b.String()
}

// openPrefix is how many bytes at the end of text begin a 【 (0: none).
func openPrefix(text string) int {
	for n := len(markerOpen) - 1; n > 0; n-- {
		if strings.HasSuffix(text, markerOpen[:n]) {
			return n
		}
	}
	return 0
}

// Citations are the markers taken out so far.
func (s *Stripper) Citations() []Citation { return s.cited }

func (s *Stripper) emit(b *strings.Builder, n int) {
	b.WriteString(s.held[:n])
	s.out += utf8.RuneCountInString(s.held[:n])
	s.held = s.held[n:]
}

// cite reports whether text is a whole marker that names a result the searches found.
func (s *Stripper) cite(text string) (Citation, bool) {
	m := marker.FindStringSubmatchIndex(text)
	if m == nil || m[0] != 0 || m[1] != len(text) {
		return Citation{}, false
	}
	result, ok := resultOf(text, m, s.results)
	return Citation{Text: text, Result: result}, ok
}

// StripCitations is a whole text with its markers taken out, and their citations (a Stripper given it at once).
func StripCitations(text string, results func(key string) []events.FileSearchResult) (string, []Citation) {
	s := NewStripper(results)
	out := s.Write(text) + s.Flush()
	return out, s.Citations()
}
