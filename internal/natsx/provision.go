package natsx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// BucketSpec describes a KV bucket a component needs.
type BucketSpec struct {
	Name        string // without the prefix
	Description string
	History     uint8
	// TTL expires every key after this long (0 = never). Counters that reset use per-key TTLs instead.
	TTL time.Duration
	// MaxValueSize bounds one value (0 = server default).
	MaxValueSize int32
	// PerKeyTTL allows per-key TTLs (leases, counters).
	PerKeyTTL bool
}

// Layout is everything Contrail needs to exist on the NATS side.
type Layout struct {
	Names    Names
	Replicas int
	// DuplicateWindow is how long JetStream remembers event IDs for dedupe. Handlers also check the aggregate's
	// state, so this is a first line, not the only one.
	DuplicateWindow time.Duration
	Buckets         []BucketSpec
	// ObjectMaxBytes bounds the blob store (0 = unlimited).
	ObjectMaxBytes int64
}

// EventsConfig is the stream that holds the log: file storage, nothing ever deleted.
func (l Layout) EventsConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              l.Names.EventsStream(),
		Description:       "Contrail event log",
		Subjects:          []string{l.Names.EventsWildcard()},
		Storage:           jetstream.FileStorage,
		Replicas:          l.Replicas,
		Retention:         jetstream.LimitsPolicy,
		MaxMsgsPerSubject: -1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		Discard:           jetstream.DiscardOld,
		Duplicates:        l.DuplicateWindow,
		DenyDelete:        true,
		DenyPurge:         true,
		AllowDirect:       true,
	}
}

// DLQConfig keeps poison events. Deletes are allowed so that a re-driven entry can be removed.
func (l Layout) DLQConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        l.Names.DLQStream(),
		Description: "Contrail poison events, kept for inspection and re-drive",
		Subjects:    []string{l.Names.DLQWildcard()},
		Storage:     jetstream.FileStorage,
		Replicas:    l.Replicas,
		Retention:   jetstream.LimitsPolicy,
		MaxAge:      30 * 24 * time.Hour,
		Discard:     jetstream.DiscardOld,
		AllowDirect: true,
	}
}

// RedriveConfig is a work queue: a re-driven event is removed once its handler has acknowledged it.
func (l Layout) RedriveConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:        l.Names.RedriveStream(),
		Description: "Contrail re-driven events waiting for their handler",
		Subjects:    []string{l.Names.RedriveWildcard()},
		Storage:     jetstream.FileStorage,
		Replicas:    l.Replicas,
		Retention:   jetstream.WorkQueuePolicy,
		Discard:     jetstream.DiscardOld,
	}
}

// AutoReplicas picks the replica count from what the connection sees: 1 on a single server, up to 3 in a cluster.
func AutoReplicas(nc *nats.Conn) int {
	if nc.ConnectedClusterName() == "" {
		return 1
	}
	return min(3, len(nc.Servers()))
}

// Provision makes sure every stream, bucket and the object store exist with the layout's settings. It is safe to
// run on every start of every node: what already exists as configured is left untouched; what differs in a setting
// Contrail owns is updated (and logged).
func Provision(ctx context.Context, js jetstream.JetStream, l Layout, logger *slog.Logger) error {
	for _, cfg := range []jetstream.StreamConfig{l.EventsConfig(), l.DLQConfig(), l.RedriveConfig()} {
		if err := ensureStream(ctx, js, cfg, logger); err != nil {
			return err
		}
	}
	for _, b := range l.Buckets {
		if err := EnsureBucket(ctx, js, l, b); err != nil {
			return err
		}
	}
	if _, err := js.ObjectStore(ctx, l.Names.ObjectStore()); err != nil {
		if !errors.Is(err, jetstream.ErrBucketNotFound) {
			return fmt.Errorf("look up object store %s: %w", l.Names.ObjectStore(), err)
		}
		_, err := js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      l.Names.ObjectStore(),
			Description: "Contrail blobs: files, embeds, generated images",
			Storage:     jetstream.FileStorage,
			Replicas:    l.Replicas,
			MaxBytes:    l.ObjectMaxBytes,
		})
		if err != nil && !errors.Is(err, jetstream.ErrBucketExists) {
			return fmt.Errorf("create object store %s: %w", l.Names.ObjectStore(), err)
		}
	}
	return nil
}

func ensureStream(ctx context.Context, js jetstream.JetStream, want jetstream.StreamConfig, logger *slog.Logger) error {
	s, err := js.Stream(ctx, want.Name)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		if _, err := js.CreateStream(ctx, want); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			return fmt.Errorf("create stream %s: %w", want.Name, err)
		}
		logger.Info("created stream", "stream", want.Name, "replicas", want.Replicas)
		return waitStream(ctx, js, want.Name)
	}
	if err != nil {
		return fmt.Errorf("look up stream %s: %w", want.Name, err)
	}
	have := s.CachedInfo().Config
	if streamMatches(have, want) {
		return nil
	}
	// Replicas are never lowered by a node that sees fewer servers than the one that created the stream.
	if have.Replicas > want.Replicas {
		want.Replicas = have.Replicas
	}
	if streamMatches(have, want) {
		return nil
	}
	if _, err := js.UpdateStream(ctx, want); err != nil {
		return fmt.Errorf("update stream %s: %w", want.Name, err)
	}
	logger.Info("updated stream settings", "stream", want.Name)
	return nil
}

func streamMatches(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) &&
		have.Replicas == want.Replicas &&
		have.Retention == want.Retention &&
		have.MaxMsgsPerSubject == want.MaxMsgsPerSubject &&
		(want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		have.DenyDelete == want.DenyDelete &&
		have.DenyPurge == want.DenyPurge &&
		have.MaxAge == want.MaxAge &&
		have.AllowDirect == want.AllowDirect
}

// EnsureBucket creates a KV bucket unless it exists. Existing buckets are left as they are: their settings are
// part of their data.
func EnsureBucket(ctx context.Context, js jetstream.JetStream, l Layout, b BucketSpec) error {
	name := l.Names.Bucket(b.Name)
	if _, err := js.KeyValue(ctx, name); err == nil {
		return nil
	} else if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return fmt.Errorf("look up bucket %s: %w", name, err)
	}
	history := b.History
	if history == 0 {
		history = 1
	}
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:         name,
		Description:    b.Description,
		History:        history,
		TTL:            b.TTL,
		MaxValueSize:   b.MaxValueSize,
		Storage:        jetstream.FileStorage,
		Replicas:       l.Replicas,
		LimitMarkerTTL: limitMarker(b),
	})
	if errors.Is(err, jetstream.ErrBucketExists) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	return WaitBucket(ctx, kv)
}

// WaitBucket waits until a new bucket answers reads. On a cluster, a replicated bucket exists before its stream has
// elected a leader, and reads in between find "no responders".
func WaitBucket(ctx context.Context, kv jetstream.KeyValue) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := kv.Get(ctx, "_ready")
		if err == nil || errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("bucket %s not answering: %w", kv.Bucket(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitStream waits until a new stream has a leader (on a cluster, it answers only then).
func waitStream(ctx context.Context, js jetstream.JetStream, name string) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, err := js.Stream(ctx, name)
		if err == nil {
			info := s.CachedInfo()
			if info.Cluster == nil || info.Cluster.Leader != "" {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("stream %s has no leader: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// limitMarker enables per-key TTLs; the server requires a marker TTL for that.
func limitMarker(b BucketSpec) time.Duration {
	if b.PerKeyTTL {
		return time.Second
	}
	return 0
}
