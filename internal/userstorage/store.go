package userstorage

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Bucket is the KV bucket (without the deployment prefix) that holds user storage.
const Bucket = "user_storage"

// MaxValueSize bounds one stored value (the JSON of "data").
const MaxValueSize = 1 << 20

// Limits of the names a caller chooses.
const (
	MaxKeyLength   = 512
	MaxAgentLength = 256
)

// chunkSize is the most one KV message carries. A value of MaxValueSize does not fit in one message of a
// server with the default max_payload (1 MiB, which the KV headers also count against), so larger values are
// stored in chunks.
const chunkSize = 256 << 10

// Buckets are the KV buckets user storage needs; the platform provisions them.
func Buckets() []natsx.BucketSpec {
	return []natsx.BucketSpec{{Name: Bucket, Description: "Fixie user storage: one value per (user, agent, key)"}}
}

// Scope is whose storage a call reads or writes: one user's values for one agent. No call reaches outside it.
type Scope struct {
	Account string
	AgentID string
}

// Store is user storage over a KV bucket. Keys in the bucket are
//
//	v.<account>.<agent>.<key>                value, or where its chunks are
//	c.<account>.<agent>.<key>.<version>.<n>  chunk n of a large value
//
// with the agent ID and key base64url-encoded: callers choose them, and KV keys allow few characters. The account
// comes first from the caller's principal, so a scope cannot name another account's values.
type Store struct {
	kv jetstream.KeyValue
}

// head is the document at v.<...>: the value itself, or where its chunks are.
type head struct {
	Data    json.RawMessage `json:"data,omitempty"`
	Version string          `json:"version,omitempty"`
	Chunks  int             `json:"chunks,omitempty"`
	Size    int             `json:"size,omitempty"`
}

// Open connects to the provisioned bucket.
func Open(ctx context.Context, js jetstream.JetStream, names natsx.Names) (*Store, error) {
	kv, err := js.KeyValue(ctx, names.Bucket(Bucket))
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", Bucket, err)
	}
	return &Store{kv: kv}, nil
}

var enc = base64.RawURLEncoding

func (sc Scope) validate() error {
	if sc.Account == "" || !natsx.ValidToken(sc.Account) {
		return errs.E(errs.Unauthorized, "user storage needs a user")
	}
	return ids.CheckName("agentId", sc.AgentID, MaxAgentLength)
}

func (sc Scope) prefix() string { return sc.Account + "." + enc.EncodeToString([]byte(sc.AgentID)) }

func (sc Scope) headKey(key string) string {
	return "v." + sc.prefix() + "." + enc.EncodeToString([]byte(key))
}

func (sc Scope) chunkKey(key, version string, n int) string {
	return "c." + sc.prefix() + "." + enc.EncodeToString([]byte(key)) + "." + version + "." + strconv.Itoa(n)
}

func (sc Scope) check(key string) error {
	if err := sc.validate(); err != nil {
		return err
	}
	return ids.CheckName("key", key, MaxKeyLength)
}

// Put stores value (JSON) under key, replacing what was there.
func (s *Store) Put(ctx context.Context, sc Scope, key string, value json.RawMessage) error {
	if err := sc.check(key); err != nil {
		return err
	}
	if len(value) > MaxValueSize {
		return errs.E(errs.TooLarge, "the value is %d bytes; user storage keeps values of up to %d bytes (1 MiB)", len(value), MaxValueSize)
	}
	h := head{Data: value}
	if len(value) > chunkSize {
		h = head{Version: events.RandomToken(8), Size: len(value)}
		for off := 0; off < len(value); off += chunkSize {
			part := value[off:min(off+chunkSize, len(value))]
			if _, err := s.kv.Put(ctx, sc.chunkKey(key, h.Version, h.Chunks), part); err != nil {
				return fmt.Errorf("user storage: store chunk %d: %w", h.Chunks, err)
			}
			h.Chunks++
		}
	}
	raw, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("user storage: encode: %w", err)
	}
	// Compare-and-set, so that of two writers each removes the chunks of the value it replaced, never the other's.
	for range 16 {
		old, rev, found, err := s.head(ctx, sc, key)
		if err != nil {
			return err
		}
		if found {
			_, err = s.kv.Update(ctx, sc.headKey(key), raw, rev)
		} else {
			_, err = s.kv.Create(ctx, sc.headKey(key), raw)
		}
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
			continue
		}
		if err != nil {
			return fmt.Errorf("user storage: store: %w", err)
		}
		if found {
			s.dropChunks(ctx, sc, key, old)
		}
		return nil
	}
	return errs.E(errs.Conflict, "key %q is being written by others; try again", key)
}

// head reads the head document of key.
func (s *Store) head(ctx context.Context, sc Scope, key string) (head, uint64, bool, error) {
	e, err := s.kv.Get(ctx, sc.headKey(key))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return head{}, 0, false, nil
	}
	if err != nil {
		return head{}, 0, false, fmt.Errorf("user storage: read: %w", err)
	}
	var h head
	if err := json.Unmarshal(e.Value(), &h); err != nil {
		return head{}, 0, false, fmt.Errorf("user storage: decode: %w", err)
	}
	return h, e.Revision(), true, nil
}

// dropChunks removes the chunks of a replaced or deleted value. A failure leaves unreachable chunks behind,
// which costs space but never shows: only a head names chunks.
func (s *Store) dropChunks(ctx context.Context, sc Scope, key string, h head) {
	for n := range h.Chunks {
		_ = s.kv.Purge(ctx, sc.chunkKey(key, h.Version, n))
	}
}

// Get returns the value under key, and whether there is one.
func (s *Store) Get(ctx context.Context, sc Scope, key string) (json.RawMessage, bool, error) {
	if err := sc.check(key); err != nil {
		return nil, false, err
	}
	for range 16 {
		h, _, found, err := s.head(ctx, sc, key)
		if err != nil || !found {
			return nil, false, err
		}
		if h.Chunks == 0 {
			return h.Data, true, nil
		}
		value := make([]byte, 0, h.Size)
		complete := true
		for n := range h.Chunks {
			e, err := s.kv.Get(ctx, sc.chunkKey(key, h.Version, n))
			if errors.Is(err, jetstream.ErrKeyNotFound) {
				complete = false // replaced while we read: read the new head
				break
			}
			if err != nil {
				return nil, false, fmt.Errorf("user storage: read chunk %d: %w", n, err)
			}
			value = append(value, e.Value()...)
		}
		if complete {
			return value, true, nil
		}
	}
	return nil, false, errs.E(errs.Conflict, "key %q is being written by others; try again", key)
}

// Exists reports whether key holds a value.
func (s *Store) Exists(ctx context.Context, sc Scope, key string) (bool, error) {
	if err := sc.check(key); err != nil {
		return false, err
	}
	_, _, found, err := s.head(ctx, sc, key)
	return found, err
}

// Delete removes key and reports whether it held a value.
func (s *Store) Delete(ctx context.Context, sc Scope, key string) (bool, error) {
	if err := sc.check(key); err != nil {
		return false, err
	}
	for range 16 {
		h, rev, found, err := s.head(ctx, sc, key)
		if err != nil || !found {
			return false, err
		}
		err = s.kv.Purge(ctx, sc.headKey(key), jetstream.LastRevision(rev))
		if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			continue // rewritten meanwhile: delete what is there now
		}
		if err != nil {
			return false, fmt.Errorf("user storage: delete: %w", err)
		}
		s.dropChunks(ctx, sc, key, h)
		return true, nil
	}
	return false, errs.E(errs.Conflict, "key %q is being written by others; try again", key)
}

// Keys lists the keys of a scope, sorted.
func (s *Store) Keys(ctx context.Context, sc Scope) ([]string, error) {
	if err := sc.validate(); err != nil {
		return nil, err
	}
	lister, err := s.kv.ListKeysFiltered(ctx, "v."+sc.prefix()+".*")
	if err != nil {
		return nil, fmt.Errorf("user storage: list: %w", err)
	}
	out := []string{}
	prefix := "v." + sc.prefix() + "."
	for k := range lister.Keys() {
		name, err := enc.DecodeString(k[len(prefix):])
		if err != nil {
			continue // not ours to show
		}
		out = append(out, string(name))
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("user storage: list: %w", err) // the lister stops early, silently, when ctx ends
	}
	slices.Sort(out)
	return out, nil
}
