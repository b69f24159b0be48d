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
	"golang.org/x/sync/errgroup"
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
		// The events of one decision are appended all or none (events.WithAtomicBatches).
		AllowAtomicPublish: true,
		// Followers of one aggregate (a run's stream, a session's subscription) listen here rather than open a
		// consumer each: see eventstore.Store.Watch.
		RePublish: &jetstream.RePublish{Source: l.Names.EventsWildcard(), Destination: l.Names.CommittedWildcard()},
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

// TimersConfig keeps durable timers: message schedules (nats-server 2.12+) whose fired messages a consumer turns
// into events. A timer may be set 31 days ahead, so nothing ages out before 40; fired messages are small and age
// out after that.
func (l Layout) TimersConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              l.Names.TimersStream(),
		Description:       "Contrail durable timers (task sleeps)",
		Subjects:          []string{l.Names.TimersWildcard()},
		Storage:           jetstream.FileStorage,
		Replicas:          l.Replicas,
		Retention:         jetstream.LimitsPolicy,
		MaxAge:            40 * 24 * time.Hour,
		Discard:           jetstream.DiscardOld,
		Duplicates:        l.DuplicateWindow,
		AllowMsgSchedules: true,
		// The server requires roll-ups on a stream with schedules (a fired one-shot schedule is purged).
		AllowRollup: true,
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
//
// Nodes may provision at the same moment, while a fresh cluster is still electing its leaders: a step that meets
// "no responders", a timeout or a 503 is tried again with backoff until provisionWait has passed, and only then
// reported (with the last error).
func Provision(ctx context.Context, js jetstream.JetStream, l Layout, logger *slog.Logger) error {
	return Retry(ctx, logger, "provision streams and buckets", func(ctx context.Context) error {
		return provisionOnce(ctx, js, l, logger)
	})
}

// provisionWait bounds how long a starting node waits for the cluster to accept its streams and buckets: a fresh
// three-node cluster elects its meta leader and then one leader per stream, a few seconds in all.
const provisionWait = 90 * time.Second

// provisionAttempt bounds one pass over every stream and bucket.
const provisionAttempt = 20 * time.Second

// retryable reports whether a provisioning error may pass once the cluster settles: anything but the server
// refusing the configuration itself.
func retryable(err error) bool {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code != 400
	}
	return true
}

func provisionOnce(ctx context.Context, js jetstream.JetStream, l Layout, logger *slog.Logger) error {
	// Streams and buckets are made side by side: on a new data dir each is a store the server creates and syncs to
	// disk, and made one after the other they were most of a node's first start.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for _, cfg := range []jetstream.StreamConfig{l.EventsConfig(), l.DLQConfig(), l.RedriveConfig(), l.TimersConfig()} {
		g.Go(func() error { return ensureStream(gctx, js, cfg, logger) })
	}
	for _, b := range l.Buckets {
		g.Go(func() error { return EnsureBucket(gctx, js, l, b) })
	}
	g.Go(func() error { return ensureObjectStore(gctx, js, l) })
	return g.Wait()
}

// ensureObjectStore makes the blobs' object store unless it exists.
func ensureObjectStore(ctx context.Context, js jetstream.JetStream, l Layout) error {
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

// streamMatches compares the settings Contrail owns, as the server normalises them: it stores "no limit" as -1
// whether it was asked for 0 or -1, so asking for 0 again is no change.
func streamMatches(have, want jetstream.StreamConfig) bool {
	return slices.Equal(have.Subjects, want.Subjects) &&
		have.Replicas == want.Replicas &&
		have.Retention == want.Retention &&
		unlimited(have.MaxMsgsPerSubject) == unlimited(want.MaxMsgsPerSubject) &&
		unlimited(have.MaxMsgs) == unlimited(want.MaxMsgs) &&
		unlimited(have.MaxBytes) == unlimited(want.MaxBytes) &&
		(want.Duplicates == 0 || have.Duplicates == want.Duplicates) &&
		have.DenyDelete == want.DenyDelete &&
		have.DenyPurge == want.DenyPurge &&
		have.MaxAge == want.MaxAge &&
		have.AllowDirect == want.AllowDirect &&
		have.AllowMsgSchedules == want.AllowMsgSchedules &&
		have.AllowRollup == want.AllowRollup &&
		have.AllowAtomicPublish == want.AllowAtomicPublish &&
		samePublish(have.RePublish, want.RePublish)
}

func samePublish(have, want *jetstream.RePublish) bool {
	if have == nil || want == nil {
		return have == want
	}
	return *have == *want
}

// unlimited maps the two spellings of "no limit" (0 and -1) to one.
func unlimited(n int64) int64 {
	if n <= 0 {
		return -1
	}
	return n
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

// Retry runs fn until it succeeds, ctx ends, or provisionWait passes, backing off between attempts: for the steps of
// a node's start that read or create JetStream resources while a fresh cluster may still be electing leaders.
func Retry(ctx context.Context, logger *slog.Logger, what string, fn func(context.Context) error) error {
	deadline := time.Now().Add(provisionWait)
	for attempt := 0; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, provisionAttempt)
		err := fn(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || !retryable(err) || time.Now().After(deadline) {
			return fmt.Errorf("%s (still failing after %d attempts): %w", what, attempt+1, err)
		}
		logger.Info("the cluster is not ready yet; trying again", "step", what, "attempt", attempt+1, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(100*time.Millisecond<<min(attempt, 4), 2*time.Second)):
		}
	}
}
