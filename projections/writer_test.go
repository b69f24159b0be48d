package projections

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx/natstest"
)

type noFold struct{}

func (noFold) Name() string                     { return "nofold" }
func (noFold) EventTypes() []string             { return nil }
func (noFold) Apply(*Tx, events.Envelope) error { return nil }

// TestTheCheckpointWaitsForEveryDocument: when another writer moved a document's revision (a lease changing
// hands), the flush fails on it and writes no checkpoint; a reader that saw the checkpoint would look for a
// document that is not there.
func TestTheCheckpointWaitsForEveryDocument(t *testing.T) {
	ctx := context.Background()
	srv := natstest.Start(t)
	kv, err := srv.JS.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "writer_test"})
	if err != nil {
		t.Fatal(err)
	}
	w := newWriter(srv.JS, kv, noFold{}, slog.New(slog.DiscardHandler))
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
