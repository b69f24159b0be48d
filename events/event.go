package events

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Event is a typed payload. Its type name is "<aggregate>.<name>", e.g. "session.message_posted"; the aggregate
// part must be the aggregate the event is appended to.
type Event interface {
	EventType() string
}

// Envelope is how an event is stored: the JSON fields are the log's format.
type Envelope struct {
	ID            string          `json:"id"`
	Type          string          `json:"type"`
	Aggregate     string          `json:"aggregate"`
	AggregateID   string          `json:"aggregate_id"`
	Version       uint64          `json:"version"`
	Time          time.Time       `json:"time"`
	Account       string          `json:"account,omitempty"`
	Actor         string          `json:"actor,omitempty"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	CausationID   string          `json:"causation_id,omitempty"`
	Data          json.RawMessage `json:"data"`

	// Sequence is the event's position in the stream; it is not part of the stored JSON (the stream assigns it).
	Sequence uint64 `json:"-"`
	// Event is the decoded payload, or nil when the type is unknown to this build (kept, skipped by readers).
	Event Event `json:"-"`
}

// Ref names one aggregate instance.
type Ref struct {
	Type string // "account", "session", ...
	ID   string
}

func (r Ref) String() string { return r.Type + "/" + r.ID }

// Version is where an aggregate's history ends: how many events it holds and the stream sequence of the last one.
// The zero Version means "no events yet", which is what appending the first event expects.
type Version struct {
	Count uint64 `json:"count"`
	Seq   uint64 `json:"seq"`
}

// Meta is what an append records about who and why.
type Meta struct {
	Account       string
	Actor         string
	CorrelationID string
	// CausationID is the event this append reacts to. A handler sets it; derived event IDs come from it.
	CausationID string
}

// identified lets a caller choose an event's ID (a handler derives it from the cause so that a redelivery appends
// nothing new).
type identified struct {
	id string
	Event
}

// WithID gives an event a chosen ID instead of a fresh one.
func WithID(id string, e Event) Event { return identified{id: id, Event: e} }

// Unwrap returns the ID a decision chose for an event (WithID), "" when it chose none, and the event itself: what a
// test that folds decisions without a log does with them.
func Unwrap(e Event) (string, Event) { return unwrap(e) }

func unwrap(e Event) (string, Event) {
	if w, ok := e.(identified); ok {
		return w.id, w.Event
	}
	return "", e
}

// NewID returns a fresh ULID: unique, and sorting by time of creation.
func NewID() string { return ulid.Make().String() }

// NewPrefixedID returns prefix + a fresh ULID, the form of every object ID Contrail hands out ("asst_01J...").
func NewPrefixedID(prefix string) string { return prefix + NewID() }

// DeriveID returns the ID of the event that `cause` leads to under `label`. The same cause and label always give
// the same ID, so an appended reaction is deduplicated when its cause is delivered twice. The ID keeps the cause's
// time, so it still sorts near its cause.
func DeriveID(cause, label string) string {
	var ms uint64
	if u, err := ulid.ParseStrict(cause); err == nil {
		ms = u.Time()
	}
	sum := sha256.Sum256([]byte(cause + "\x00" + label))
	var id ulid.ULID
	if err := id.SetTime(ms); err != nil {
		// Only a time beyond year 10889 fails; keep zero time rather than fail an append.
		_ = id.SetTime(0)
	}
	if err := id.SetEntropy(sum[:10]); err != nil {
		panic(fmt.Sprintf("derive id: %v", err)) // 10 bytes is always the right size
	}
	return id.String()
}

// tokenEncoding is lowercase Crockford-style base32: no padding, no look-alike letters, safe in URLs and subjects.
var tokenEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// RandomToken returns n random bytes, encoded for secrets and signed URLs.
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err)) // the kernel's random source does not fail
	}
	return tokenEncoding.EncodeToString(b)
}

// SplitType returns the aggregate and the name of an event type ("session", "message_posted").
func SplitType(eventType string) (aggregate, name string) {
	aggregate, name, _ = strings.Cut(eventType, ".")
	return aggregate, name
}

// InterruptedCallError is what a server tool call interrupted by a restart records, in a response's item and in a
// run's step alike, and what the model reads of it: it was started, the node died before its result was recorded,
// and it is not made again (it may have had effects).
const InterruptedCallError = "The call was interrupted by a restart of the server and was not run again: it may or may not have taken effect."
