package queries

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// sent collects what a liveStream publishes.
type sent struct {
	mu      sync.Mutex
	texts   []string
	indexes []int
}

func (s *sent) publish(text string, index int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.texts = append(s.texts, text)
	s.indexes = append(s.indexes, index)
}

func (s *sent) joined() (string, []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.texts, ""), append([]int(nil), s.indexes...)
}

// A model's pieces that come together go out joined, in order, with indexes that count what was sent.
func TestLiveStreamJoinsPiecesThatComeTogether(t *testing.T) {
	var got sent
	l := &liveStream{publish: got.publish}
	words := strings.Fields("a reply that a model streams one word at a time to the session")
	want := ""
	for _, w := range words {
		l.Write(w + " ")
		want += w + " "
	}
	l.Flush()
	text, indexes := got.joined()
	if text != want {
		t.Fatalf("sent %q, want %q", text, want)
	}
	for i, n := range indexes {
		if n != i {
			t.Fatalf("indexes %v, want 0, 1, 2, ...", indexes)
		}
	}
	if len(indexes) >= len(words) {
		t.Fatalf("%d pieces written at once went out as %d, want them joined", len(words), len(indexes))
	}
	if len(indexes) == 0 || got.texts[0] != words[0]+" " {
		t.Fatalf("the first piece went out as %q, want it at once and alone", got.texts)
	}
}

// A piece kept to be joined goes out on its own when nothing follows it, without a Flush.
func TestLiveStreamSendsWhatWaitsWhenNothingFollows(t *testing.T) {
	var got sent
	l := &liveStream{publish: got.publish}
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
	if text, indexes := got.joined(); text != "first second" || len(indexes) != 2 {
		t.Fatalf("after the flush: %q in %d pieces, want nothing sent twice", text, len(indexes))
	}
}
