package turn_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
)

// TestStripperTakesOutTheMarkersThatCite: the markers that name a result found are taken out, each a citation at
// the place it was, in characters of the text without them; a marker naming nothing found, a 【 that never closes
// and one too long to be a marker stay as text; and however the text is split into pieces, what is given out is
// the same as for the whole text at once.
func TestStripperTakesOutTheMarkersThatCite(t *testing.T) {
	found := map[string][]events.FileSearchResult{
		"0":     {{FileID: "file-a", FileName: "a.pdf"}, {FileID: "file-b", FileName: "b.pdf"}},
		"fs_x1": {{FileID: "file-c", FileName: "c.pdf"}},
	}
	results := func(key string) []events.FileSearchResult { return found[key] }
	long := "【" + strings.Repeat("x", 600) + ":0†a】"
	text := "Entkälken【0:1†b.pdf】 alle drei Monate【fs_x1:0†c.pdf】; not【0:2†b.pdf】【9:0†z】, " + long + " and 【open"
	want := "Entkälken alle drei Monate; not【0:2†b.pdf】【9:0†z】, " + long + " and 【open"

	got, cited := turn.StripCitations(text, results)
	if got != want {
		t.Fatalf("stripped:\n%q\nwant\n%q", got, want)
	}
	if len(cited) != 2 || cited[0].Result.FileID != "file-b" || cited[0].Start != len([]rune("Entkälken")) ||
		cited[1].Result.FileID != "file-c" || cited[1].Start != len([]rune("Entkälken alle drei Monate")) {
		t.Fatalf("citations: %+v", cited)
	}
	if cited[0].End != cited[0].Start || cited[0].Text != "【0:1†b.pdf】" {
		t.Errorf("a stripped marker's citation: %+v", cited[0])
	}

	// Every split into two pieces (within a character's bytes too), and a character at a time, as a model streams.
	for i := 1; i < len(text); i++ {
		s := turn.NewStripper(results)
		if out := s.Write(text[:i]) + s.Write(text[i:]) + s.Flush(); out != want || len(s.Citations()) != 2 {
			t.Fatalf("split at %d: %q (%d citations)", i, out, len(s.Citations()))
		}
	}
	s := turn.NewStripper(results)
	var b strings.Builder
	for _, r := range text {
		b.WriteString(s.Write(string(r)))
	}
	b.WriteString(s.Flush())
	if b.String() != want || len(s.Citations()) != 2 || s.Citations()[1].Start != cited[1].Start {
		t.Fatalf("a character at a time: %q, %+v", b.String(), s.Citations())
	}

	// Many 【 and one 】 (BenchmarkStripCitationsManyOpens times it): no marker, the text left as it is.
	many := strings.Repeat("【", 2000) + "】"
	if got, cited := turn.StripCitations(many, results); got != many || len(cited) != 0 {
		t.Errorf("many 【 and one 】: %d bytes out of %d, %d citations", len(got), len(many), len(cited))
	}
}

// BenchmarkStripCitationsManyOpens: an answer of many 【 and one 】 at the end (what a prompt can make a model write)
// is stripped in time linear in its length: a 【 is looked at only as far as a marker can reach.
func BenchmarkStripCitationsManyOpens(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		text := strings.Repeat("【", n) + "】"
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				turn.StripCitations(text, func(string) []events.FileSearchResult { return nil })
			}
		})
	}
}
