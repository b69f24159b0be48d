package livejoin

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// sent collects what a Joiner sends.
type sent struct {
	mu    sync.Mutex
	texts []string
}

func (s *sent) send(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
}

func (s *sent) joined() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.texts, ""), len(s.texts)
}

// A model's pieces that come together go out joined, in order.
func TestPiecesThatComeTogetherGoOutJoined(t *testing.T) {
	var got sent
	l := New(got.send)
	words := strings.Fields("a reply that a model streams one word at a time to the session")
	want := ""
	for _, w := range words {
		l.Write(w + " ")
		want += w + " "
	}
	l.Flush()
	text, pieces := got.joined()
	if text != want {
		t.Fatalf("sent %q, want %q", text, want)
	}
	if pieces >= len(words) {
		t.Fatalf("%d pieces written at once went out as %d, want them joined", len(words), pieces)
	}
	if pieces == 0 || got.texts[0] != words[0]+" " {
		t.Fatalf("the first piece went out as %q, want it at once and alone", got.texts)
	}
}

// A piece kept to be joined goes out on its own when nothing follows it, without a Flush.
func TestWhatWaitsGoesOutWhenNothingFollows(t *testing.T) {
	var got sent
	l := New(got.send)
	l.Write("first ")
	l.Write("second")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if text, _ := got.joined(); text == "first second" {
			break
		}
		if time.Now().After(deadline) {
			text, _ := got.joined()
			t.Fatalf("sent %q, want %q without a flush", text, "first second")
		}
		time.Sleep(5 * time.Millisecond)
	}
	l.Flush()
	if text, pieces := got.joined(); text != "first second" || pieces != 2 {
		t.Fatalf("after the flush: %q in %d pieces, want nothing sent twice", text, pieces)
	}
}
