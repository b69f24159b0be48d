package projections

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

type noFold struct{}

func (noFold) Name() string                     { return "nofold" }
func (noFold) EventTypes() []string             { return nil }
func (noFold) Apply(*Tx, events.Envelope) error { return nil }

// testWriter is a writer of p over a fresh bucket on an embedded server.
func testWriter(t *testing.T, p Projection) (*writer, jetstream.KeyValue) {
	t.Helper()
	srv := natstest.Start(t)
	kv, err := srv.JS.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: p.Name()})
	if err != nil {
		t.Fatal(err)
	}
	return newWriter(srv.JS, kv, p, slog.New(slog.DiscardHandler)), kv
}

// TestTheCheckpointWaitsForEveryDocument: when another writer moved a document's revision (a lease changing
// hands), the flush fails on it and writes no checkpoint; a reader that saw the checkpoint would look for a
// document that is not there.
func TestTheCheckpointWaitsForEveryDocument(t *testing.T) {
	ctx := context.Background()
	w, kv := testWriter(t, noFold{})
	if _, err := w.load(ctx, "a"); err != nil { // the writer remembers "a" as missing...
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "a", []byte(`{"seq":1}`)); err != nil { // ...and another writer puts it
		t.Fatal(err)
	}
	w.staged, w.order = map[string]doc{"a": {Seq: 5}, "b": {Seq: 5}}, []string{"a", "b"}
	if err := w.flush(ctx, 5); !errors.Is(err, errRevisionMoved) {
		t.Fatalf("flush over a moved revision: %v", err)
	}
	if _, err := kv.Get(ctx, checkpointKey); !errors.Is(err, jetstream.ErrKeyNotFound) {
		t.Fatalf("a checkpoint was written although a document was not: %v", err)
	}
	// Folded again on fresh documents, the batch goes in whole, checkpoint last.
	clear(w.cache)
	w.staged, w.order = map[string]doc{"a": {Seq: 5}, "b": {Seq: 5}}, []string{"a", "b"}
	if err := w.flush(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if cp, err := w.checkpoint(ctx); err != nil || cp != 5 {
		t.Fatalf("checkpoint after the retry: %d %v", cp, err)
	}
}

// tally counts words in place (a map, a slice), the way folds change the value Modify hands them; a word starting
// with "skip" or "fail" makes the fold give up after changing it.
type tally struct{}

type tallyDoc struct {
	Words map[string]int `json:"words"`
	List  []string       `json:"list"`
}

func (tally) Name() string         { return "tally" }
func (tally) EventTypes() []string { return nil }
func (tally) Apply(tx *Tx, e events.Envelope) error {
	word := e.Event.(events.SessionMessagePosted).Text
	return Modify(tx, "t", func(v *tallyDoc, _ bool) error {
		if v.Words == nil {
			v.Words = map[string]int{}
		}
		v.Words[word]++
		v.List = append(v.List, word)
		switch {
		case strings.HasPrefix(word, "skip"):
			return ErrSkip
		case strings.HasPrefix(word, "fail"):
			return errors.New("the fold failed")
		}
		return nil
	})
}

// TestAFoldThatGivesUpLeavesNoTraceInTheNextOne: Modify hands a fold the value it last wrote, not a fresh decode;
// what a fold changed in place before it skipped or failed must not reach the next event's fold, and an event
// delivered again is not folded twice.
func TestAFoldThatGivesUpLeavesNoTraceInTheNextOne(t *testing.T) {
	ctx := context.Background()
	w, kv := testWriter(t, tally{})
	word := func(seq uint64, text string) events.Envelope {
		return events.Envelope{Sequence: seq, Event: events.SessionMessagePosted{Text: text}}
	}
	for _, batch := range [][]events.Envelope{
		{word(1, "a"), word(2, "b")},
		{word(3, "skip-me"), word(4, "a"), word(5, "fail-me"), word(6, "c")},
		{word(4, "a"), word(7, "d")}, // 4 again, as a reader restarted behind the checkpoint would deliver it
	} {
		if err := w.apply(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	e, err := kv.Get(ctx, "t")
	if err != nil {
		t.Fatal(err)
	}
	var d struct{ V tallyDoc }
	if err := json.Unmarshal(e.Value(), &d); err != nil {
		t.Fatal(err)
	}
	want := tallyDoc{Words: map[string]int{"a": 2, "b": 1, "c": 1, "d": 1}, List: []string{"a", "b", "a", "c", "d"}}
	if !reflect.DeepEqual(d.V, want) {
		t.Fatalf("stored %+v, want %+v", d.V, want)
	}
}
