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
	if pieces != 1 {
		t.Fatalf("%d pieces written as the joiner started went out as %q, want them joined in one", len(words), got.texts)
	}
}

// A first piece that comes later than Every after the start (a remote model thinking) goes out at once and alone;
// what follows it closely is joined.
func TestAFirstPieceThatTookItsTimeGoesAtOnce(t *testing.T) {
	var got sent
	l := New(got.send)
	time.Sleep(Every + 10*time.Millisecond)
	l.Write("first ")
	if text, pieces := got.joined(); text != "first " || pieces != 1 {
		t.Fatalf("after the first piece: %q in %d pieces, want it sent at once", text, pieces)
	}
	l.Write("second ")
	l.Write("third")
	l.Flush()
	if text, pieces := got.joined(); text != "first second third" || pieces != 2 {
		t.Fatalf("after the flush: %q in %d pieces, want the first alone and the rest joined", got.texts, pieces)
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
	if text, pieces := got.joined(); text != "first second" || pieces != 1 {
		t.Fatalf("after the flush: %q in %d pieces, want nothing sent twice", text, pieces)
	}
}
