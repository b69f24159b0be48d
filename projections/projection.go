package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Projection folds events into one read model.
type Projection interface {
	// Name names the read model and its bucket ("accounts").
	Name() string
	// EventTypes lists what it folds: full types ("account.created") or a whole aggregate ("account.*").
	EventTypes() []string
	// Apply folds one event. It reads and writes documents through tx only. An error is a bug in the fold: the event
	// is logged and skipped so that one bad event cannot stop every read of the model.
	Apply(tx *Tx, e events.Envelope) error
}

// Versioned is a projection whose documents changed shape since its first version. Each version keeps buckets,
// a generation record and a lease of its own, and a new version starts empty and folds the whole log: a node of the
// new build never reads documents of the old shape, and during a rolling upgrade the nodes of the old build keep
// reading and writing theirs. (The old version's buckets stay until an operator deletes them.)
//
// Raise the version whenever a change to Apply or to the document types would make documents already written read
// differently from what the new Apply would write.
type Versioned interface {
	Version() int
}

// storageKey names where a projection keeps its documents: its name, and from version 2 on its version too
// ("runs_v2").
func storageKey(p Projection) string {
	if v, ok := p.(Versioned); ok && v.Version() > 1 {
		return p.Name() + "_v" + strconv.Itoa(v.Version())
	}
	return p.Name()
}

// doc is how a document is stored: its value and the sequence of the last event applied to it. A deleted document
// keeps its sequence as a tombstone, so a replayed older event cannot bring it back.
type doc struct {
	Seq     uint64          `json:"seq"`
	Deleted bool            `json:"deleted,omitempty"`
	V       json.RawMessage `json:"v,omitempty"`
}

// checkpointKey holds the sequence of the last event the projection has applied. Projections may not use keys
// starting with "_".
const checkpointKey = "_checkpoint"

// Tx is a projection's view of its bucket while it applies one event.
type Tx struct {
	ctx context.Context
	w   *writer
	seq uint64
}

// Seq is the stream sequence of the event being applied.
func (tx *Tx) Seq() uint64 { return tx.seq }

// Get reads a document into v. It reports false when there is none (or it was deleted).
func (tx *Tx) Get(key string, v any) (bool, error) {
	d, err := tx.w.doc(tx.ctx, key)
	if err != nil {
		return false, err
	}
	if d.Seq == 0 || d.Deleted {
		return false, nil
	}
	if err := json.Unmarshal(d.V, v); err != nil {
		return false, fmt.Errorf("decode %s: %w", key, err)
	}
	return true, nil
}

// Keys lists the keys of the documents that match filter (a NATS subject filter over keys: "msg.a.s1.*") as the
// bucket and this batch hold them, deleted ones left out, sorted. It reads the bucket's key list: for what is rare
// (a session deleted with its messages), not for every event.
func (tx *Tx) Keys(filter string) ([]string, error) {
	candidates := map[string]bool{}
	if tx.w.kv != nil { // nil when folding in memory (FoldAggregate): the batch is all there is
		lister, err := tx.w.kv.ListKeysFiltered(tx.ctx, filter)
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", filter, err)
		}
		for k := range lister.Keys() {
			candidates[k] = true
		}
	}
	match := natsx.NewSubjectFilter(filter)
	for k := range tx.w.staged {
		if match.Match(k) {
			candidates[k] = true
		}
	}
	var out []string
	for k := range candidates {
		d, err := tx.w.doc(tx.ctx, k)
		if err != nil {
			return nil, err
		}
		if d.Seq != 0 && !d.Deleted {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Put writes a document, unless the event was already applied to it.
func (tx *Tx) Put(key string, v any) error {
	_, err := tx.put(key, v)
	return err
}

// put stages v at key and returns the bytes it staged.
func (tx *Tx) put(key string, v any) ([]byte, error) {
	if err := validKey(key); err != nil {
		return nil, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", key, err)
	}
	return raw, tx.w.stage(tx.ctx, key, doc{Seq: tx.seq, V: raw})
}

// Delete removes a document (leaving a tombstone), unless the event was already applied to it.
func (tx *Tx) Delete(key string) error {
	if err := validKey(key); err != nil {
		return err
	}
	return tx.w.stage(tx.ctx, key, doc{Seq: tx.seq, Deleted: true})
}

// Modify reads the document at key into a T (the zero T when absent), lets fn change it, and writes it back.
// fn reports whether the document exists; returning ErrSkip leaves it unchanged. An event already applied to the
// document is not applied again: fn is not called.
//
// The value Modify last wrote to a key is kept decoded, and handed to the next Modify of the key while the
// document is still what it wrote: a document many events change (a session's message list) is then decoded
// once, not once per event. fn gets a shallow copy of that value; what it changes in place (a map, a slice's
// spare capacity) is only safe because the copy it returns replaces the kept value, so any other exit of fn
// forgets it.
func Modify[T any](tx *Tx, key string, fn func(v *T, exists bool) error) error {
	if err := validKey(key); err != nil { // before the read, which would put the key in a subject
		return err
	}
	d, err := tx.w.doc(tx.ctx, key)
	if err != nil {
		return err
	}
	if d.Seq >= tx.seq {
		return nil
	}
	exists := d.Seq != 0 && !d.Deleted
	var v T
	if exists {
		kept, ok := tx.w.kept(key, d.V).(T)
		if ok {
			v = kept
		} else if err := json.Unmarshal(d.V, &v); err != nil {
			return fmt.Errorf("decode %s: %w", key, err)
		}
	}
	if err := fn(&v, exists); err != nil {
		tx.w.forget(key)
		if errors.Is(err, ErrSkip) {
			return nil
		}
		return err
	}
	raw, err := tx.put(key, v)
	if err != nil {
		tx.w.forget(key)
		return err
	}
	tx.w.keep(key, raw, v)
	return nil
}

// ErrSkip tells Modify to leave the document as it is.
var ErrSkip = errors.New("skip")

// maxKeyLen bounds a read model key. A key is part of a NATS subject, and a subject past the server's control-line
// limit (4 KiB with the rest of the line) closes the connection it is sent on.
const maxKeyLen = 1024

func validKey(key string) error {
	if len(key) > maxKeyLen {
		return fmt.Errorf("read model key of %d bytes: at most %d", len(key), maxKeyLen)
	}
	if key == "" || strings.HasPrefix(key, "_") || strings.HasPrefix(key, ".") || strings.HasSuffix(key, ".") {
		return fmt.Errorf("read model key %q: not empty, no leading '_' or '.', no trailing '.'", key)
	}
	for _, r := range key {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=', r == '/', r == '.':
		default:
			return fmt.Errorf("read model key %q: character %q not allowed", key, r)
		}
	}
	return nil
}

// KeyPart makes an arbitrary string safe as one dot-separated part of a key (handles, names). It is reversible only
// for strings that were already safe; use IDs for keys where possible.
func KeyPart(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "=%X", r)
		}
	}
	if b.Len() == 0 {
		return "="
	}
	return b.String()
}
