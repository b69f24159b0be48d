// Package lease elects one holder of a named job across every Contrail node (a projection's writer, the timeout
// sweeper) with a key in a KV bucket whose values expire: the holder renews the key; when it dies, the key expires and
// another node takes it. A clean stop releases it at once.
//
// It imports nothing of Contrail's but natsx.
package lease

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/internal/natsx"
)

// Bucket is the KV bucket spec name for leases; its TTL is the lease time.
const Bucket = "leases"

// DefaultTTL is how long a dead holder keeps a lease.
const DefaultTTL = 3 * time.Second

// Run competes for the lease `name` in kv (a bucket whose TTL is ttl) and runs work while it holds it, with a
// context that ends when the lease is lost or ctx ends. It returns when ctx ends. work may return early; Run then
// releases the lease and competes again after a pause.
func Run(ctx context.Context, kv jetstream.KeyValue, name, holder string, ttl time.Duration, logger *slog.Logger, work func(ctx context.Context)) {
	renew := ttl / 3
	for ctx.Err() == nil {
		rev, err := kv.Create(ctx, name, []byte(holder))
		if err != nil {
			if !errors.Is(err, jetstream.ErrKeyExists) && ctx.Err() == nil {
				logger.Warn("lease: acquire", "lease", name, "err", err)
			}
			sleep(ctx, renew)
			continue
		}
		logger.Debug("lease acquired", "lease", name, "holder", holder)
		held, lost := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			work(held)
		}()
		rev = keep(held, kv, name, holder, rev, renew, ttl, logger)
		lost()
		<-done
		release(kv, name, holder, rev)
		if ctx.Err() == nil {
			sleep(ctx, renew)
		}
	}
}

// keep renews the lease until ctx ends or the lease is lost: another holder took it, or no renewal went in for a
// whole ttl and the bucket answered something else than silence (by then the key has expired and another node may
// hold it), or the bucket stayed silent longer than maxSilence. It returns the last revision it wrote.
//
// A renewal that fails for want of an answer (the bucket's server died and its stream elects a leader) is not a
// lost lease: the key expires only ttl after the last renewal that went in, and until then nobody else can take
// it. Giving the lease up at the first failed renewal stopped the work (a projection's writer) until the key expired
// and a node took it again, seconds after the bucket was back. Each renewal is bounded by `every`, so a server that
// never answers costs one period, not the client's default timeout.
func keep(ctx context.Context, kv jetstream.KeyValue, name, holder string, rev uint64, every, ttl time.Duration, logger *slog.Logger) uint64 {
	t := time.NewTimer(every)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-ctx.Done():
			return rev
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		next, err := Renew(rctx, kv, name, holder, rev)
		if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
			// The key expired while its bucket elected a leader (the new leader expires what is older than the
			// TTL): nobody holds the lease, and this holder takes it again rather than stop its work.
			next, err = kv.Create(rctx, name, []byte(holder))
		}
		cancel()
		switch {
		case err == nil:
			rev, renewed = next, time.Now()
			t.Reset(every)
		case ctx.Err() != nil:
			return rev
		case IsWrongRevision(err) || time.Since(renewed) >= maxSilence(ttl) ||
			(time.Since(renewed) >= ttl && !natsx.Transient(err)):
			logger.Warn("lease lost", "lease", name, "err", err)
			return 0
		default:
			// Sooner than the period: the first renewal answered after an election should be this holder's, before
			// the nodes waiting for the lease try to take the key.
			logger.Warn("lease: renewal failed; trying again", "lease", name, "err", err)
			t.Reset(every / 5)
		}
	}
}

// Renew writes holder's key again over revision rev, the last it wrote, and returns the revision it writes. A
// renewal refused for a wrong revision is written again at the key's own revision if the key still names holder: a
// renewal that went in but whose answer was lost (its context ended first) left rev behind the key, and giving the
// key up then gave up what was still the holder's. Another holder's key is not touched (the error wraps
// jetstream.ErrKeyExists), nor is a key that is gone written again (jetstream.ErrKeyNotFound): whether a holder may
// take an expired key again is its caller's to say. Both are IsWrongRevision.
//
// It is the rule of every key held this way, the leases and the run locks (handlers/runworker/lock.go). holder must
// tell apart every taking of the key that may still be renewing it, or an earlier taking would renew a later one's
// key as its own: a node's name does for a lease, which Run takes once at a time, but not for a run's lock, which a
// node's worker may take again while the driver that lost it still unwinds.
func Renew(ctx context.Context, kv jetstream.KeyValue, key, holder string, rev uint64) (uint64, error) {
	next, err := kv.Update(ctx, key, []byte(holder), rev)
	if err == nil || !IsWrongRevision(err) {
		return next, err
	}
	e, err := kv.Get(ctx, key)
	if err != nil {
		return 0, err
	}
	if string(e.Value()) != holder {
		return 0, fmt.Errorf("%s is %s's: %w", key, e.Value(), jetstream.ErrKeyExists)
	}
	return kv.Update(ctx, key, []byte(holder), e.Revision())
}

// maxSilence is how long a holder keeps a lease whose bucket answers nothing at all. While the bucket has no leader
// (its server died), nobody can take the lease or write the key: the first renewal answered after the election
// says whether the key is still this holder's (the stream's new leader expires it only once it runs). A cluster
// elects a stream's leader in 5-13 s after a kill -9; given up at the TTL (3 s), a projection's lease moved to
// another node in the middle of every such failover, which then started the projection afresh. Should another node
// reach the bucket meanwhile and take the expired key, the two write for a moment, compare-and-set, until this one's
// next renewal is refused.
func maxSilence(ttl time.Duration) time.Duration { return max(10*ttl, 30*time.Second) }

// IsWrongRevision says the key is not at the revision last written: another holder wrote it, or it expired.
func IsWrongRevision(err error) bool {
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) ||
		errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted)
}

// release deletes the lease if this holder still has it, so that another node need not wait for it to expire.
func release(kv jetstream.KeyValue, name, holder string, rev uint64) {
	if rev == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = Release(ctx, kv, name, holder, rev)
}

// Release deletes holder's key, last written at revision rev, so that the next holder need not wait for it to expire.
//
// The key may be holder's at a later revision than rev: a renewal on its way when the holder stopped went in, but
// its answer was dropped with the holder's context, so rev is the revision before it. Deleting only at rev then
// deleted nothing, and the stopped holder kept the key until it expired: the node taking over (a projection's writer
// on a rolling restart) waited up to a TTL for it. As in Renew, the key is deleted at its own revision if it still
// names holder; another holder's key is not touched.
func Release(ctx context.Context, kv jetstream.KeyValue, key, holder string, rev uint64) error {
	err := kv.Delete(ctx, key, jetstream.LastRevision(rev))
	if err == nil || !IsWrongRevision(err) {
		return err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return nil
	}
	if err != nil {
		return err
	}
	if string(e.Value()) != holder {
		return nil
	}
	return kv.Delete(ctx, key, jetstream.LastRevision(e.Revision()))
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// Holder returns who holds a lease now, or "" when nobody does.
func Holder(ctx context.Context, kv jetstream.KeyValue, name string) (string, error) {
	e, err := kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s: %w", name, err)
	}
	return string(e.Value()), nil
}
