package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Progress reports a rebuild's advance: events applied so far and how many the log held when it started (or, once
// more arrived, as many as applied).
type Progress func(done, total uint64)

// OldGenerationGrace is how long a replaced bucket stays readable after a swap, for reads already under way.
const OldGenerationGrace = 30 * time.Second

// Rebuild folds the whole log into a fresh bucket for one projection and, once it has caught up, makes it the
// current generation on every node. The previous bucket is deleted after a grace period. The live projection keeps
// serving reads throughout.
func (r *Runner) Rebuild(ctx context.Context, name string, progress Progress) (Status, error) {
	st, err := r.state(name)
	if err != nil {
		return Status{}, err
	}
	entry, err := r.meta.Get(ctx, st.key)
	if err != nil {
		return Status{}, fmt.Errorf("read generation of %s: %w", name, err)
	}
	var cur generation
	if err := json.Unmarshal(entry.Value(), &cur); err != nil {
		return Status{}, fmt.Errorf("decode generation of %s: %w", name, err)
	}
	next := cur.Generation + 1
	bucket := r.bucketName(st.key, next)
	// A bucket of this generation can only be left from a rebuild that did not finish: start it afresh.
	if err := r.cfg.JS.DeleteKeyValue(ctx, bucket); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
		return Status{}, fmt.Errorf("clear unfinished rebuild %s: %w", bucket, err)
	}
	kv, err := r.ensureGenerationBucket(ctx, st.key, next)
	if err != nil {
		return Status{}, err
	}
	w := newWriter(r.cfg.JS, kv, st.p, r.cfg.Logger.With("projection", name, "rebuild", next))
	// The total is counted once: a reader of the whole log (consume) knows only how many events of any type remain.
	total, err := r.pending(ctx, st, 0)
	if err != nil {
		return Status{}, err
	}
	var done uint64
	err = r.consume(ctx, st, w, func(applied, pending uint64, n int) {
		done += uint64(n)
		total = max(total, done)
		if progress != nil {
			progress(done, total)
		}
	}, true)
	if err != nil {
		return Status{}, fmt.Errorf("rebuild %s: %w", name, err)
	}
	body, _ := json.Marshal(generation{Generation: next})
	if _, err := r.meta.Update(ctx, st.key, body, entry.Revision()); err != nil {
		return Status{}, fmt.Errorf("swap in rebuilt %s (another rebuild finished first?): %w", name, err)
	}
	applied, _ := w.checkpoint(ctx)
	// Switch this node now rather than when the watch delivers, so the caller reads the new bucket at once.
	st.setGeneration(next, kv)
	st.resetApplied(applied)
	old := r.bucketName(st.key, cur.Generation)
	time.AfterFunc(OldGenerationGrace, func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.cfg.JS.DeleteKeyValue(dctx, old); err != nil && !errors.Is(err, jetstream.ErrBucketNotFound) {
			r.cfg.Logger.Warn("delete replaced read model", "bucket", old, "err", err)
		}
	})
	r.cfg.Logger.Info("projection rebuilt", "projection", name, "generation", next, "events", done)
	return Status{Name: name, Generation: next, Bucket: bucket, Applied: applied, CaughtUp: true}, nil
}

// Dump returns every live document of a read model, by key: for comparing a rebuilt model with the live one.
func (r *Runner) Dump(ctx context.Context, name string) (map[string]json.RawMessage, error) {
	out := map[string]json.RawMessage{}
	err := r.List(ctx, name, ">", func(key string, raw json.RawMessage) error {
		out[key] = append(json.RawMessage(nil), raw...)
		return nil
	})
	return out, err
}
