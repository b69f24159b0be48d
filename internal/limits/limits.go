// Package limits enforces usage limits: a daily query quota per account (seed 000: 1,000 a day unless the
// account says otherwise) and a request rate per API key (and per agent acting for a user). The counters live in
// NATS KV buckets, so every node counts against the same numbers and a restart forgets nothing.
//
// It reads the accounts read model for each account's limits. It must not import the faces.
package limits

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/account"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// The buckets, without the deployment prefix.
const (
	// RateBucket counts requests per key per minute. Its TTL removes the counters of past minutes.
	RateBucket = "rate_limits"
	// QuotaBucket counts queries per account per UTC day.
	QuotaBucket = "query_quota"
)

// Buckets are the KV buckets the limits need; the platform provisions them.
func Buckets() []natsx.BucketSpec {
	return []natsx.BucketSpec{
		{Name: RateBucket, Description: "Requests per API key (or agent) per minute", TTL: 2 * time.Minute},
		// Two days, so that a counter outlives its day in every time zone a client may think in.
		{Name: QuotaBucket, Description: "Queries per account per UTC day", TTL: 48 * time.Hour},
	}
}

// Config wires Limits.
type Config struct {
	JS    jetstream.JetStream
	Names natsx.Names
	// Accounts is where each account's own limits are read (the accounts read model); nil gives every account the
	// defaults.
	Accounts Accounts
	// Now is the clock that decides the minute and the day (tests inject one).
	Now func() time.Time
	// DailyQueries is the quota of an account that sets none (default account.DefaultDailyQueryLimit).
	DailyQueries int
	// RequestsPerMinute is the rate of a key whose account sets none (default account.DefaultRequestsPerMinute).
	RequestsPerMinute int
	Logger            *slog.Logger
}

// Accounts reads an account's own limits. The accounts read model implements it (projections.AccountLimits), so
// that limits depends on no read model.
type Accounts interface {
	// Limits returns what the account sets itself (0: the default) and whether it exists.
	Limits(ctx context.Context, accountID string) (dailyQueries, requestsPerMinute int, found bool, err error)
}

// Own is what an account sets itself: 0 means "the platform's default" (the read model keeps 0 for it).
type Own struct {
	DailyQueryLimit   int
	RequestsPerMinute int
}

// Limits counts and enforces usage. It implements httpapi.Limiter.
type Limits struct {
	cfg   Config
	rate  *counter
	quota *counter
	kvQ   jetstream.KeyValue
}

// Open connects to the provisioned buckets.
func Open(ctx context.Context, cfg Config) (*Limits, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.DailyQueries <= 0 {
		cfg.DailyQueries = account.DefaultDailyQueryLimit
	}
	if cfg.RequestsPerMinute <= 0 {
		cfg.RequestsPerMinute = account.DefaultRequestsPerMinute
	}
	rate, err := cfg.JS.KeyValue(ctx, cfg.Names.Bucket(RateBucket))
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", RateBucket, err)
	}
	quota, err := cfg.JS.KeyValue(ctx, cfg.Names.Bucket(QuotaBucket))
	if err != nil {
		return nil, fmt.Errorf("open bucket %s: %w", QuotaBucket, err)
	}
	return &Limits{cfg: cfg, rate: newCounter(rate), quota: newCounter(quota), kvQ: quota}, nil
}

// AllowRequest counts one request of p against its per-minute rate, or refuses it with errs.RateLimited (429)
// and a Retry-After until the next minute. API keys are counted each on their own; an agent calling back with its
// token is counted per (user, agent). The platform itself is never limited.
func (l *Limits) AllowRequest(ctx context.Context, p auth.Principal) error {
	if p.System() || p.AccountID == "" {
		return nil
	}
	limit := p.RequestsPerMinute
	if limit <= 0 {
		limit = l.cfg.RequestsPerMinute
	}
	now := l.cfg.Now().UTC()
	minute := now.Truncate(time.Minute)
	window := strconv.FormatInt(minute.Unix()/60, 10)
	cctx, cancel := context.WithTimeout(ctx, countWait)
	_, ok, err := l.rate.take(cctx, window, rateSubject(p)+"."+window, uint64(limit))
	cancel()
	if err != nil {
		if l.unavailable(ctx, err, "rate limit") {
			return nil
		}
		return fmt.Errorf("rate limit: %w", err)
	}
	if !ok {
		// A script that meets the limit learns what it is and how it is raised, not only that it was hit.
		return errs.Limit(minute.Add(time.Minute).Sub(now),
			"rate limit of %d requests per minute per key reached; retry after the minute ends. An admin can raise "+
				"the account's limit: contrail accounts limits %s --rate N (POST /admin/accounts/%s/limits "+
				`{"requests_per_minute": N})`, limit, p.AccountID, p.AccountID)
	}
	return nil
}

// countWait bounds counting one request or query. The counters live in KV buckets; while one's stream elects a
// leader (a NATS server died) counting cannot be done, and the request is let through rather than held up or
// refused: limits protect the platform from abuse, and a few seconds uncounted are a smaller harm than a cluster
// that refuses every request until its election is over.
const countWait = time.Second

// unavailable reports (and logs) that a count could not be made because NATS is between leaders: the request goes
// on uncounted.
func (l *Limits) unavailable(ctx context.Context, err error, what string) bool {
	if ctx.Err() != nil || !natsx.Transient(err) {
		return false
	}
	l.cfg.Logger.Warn("usage not counted: NATS is not answering; letting the request through", "limit", what, "err", err)
	return true
}

// rateSubject is what a principal's requests are counted under. Key IDs and account IDs are KV-safe tokens; an
// agent ID is whatever the registry chose, so it is hashed unless it already is one.
func rateSubject(p auth.Principal) string {
	if p.AgentID == "" {
		return p.KeyID
	}
	aid := p.AgentID
	if !natsx.ValidToken(aid) {
		sum := sha256.Sum256([]byte(aid))
		aid = hex.EncodeToString(sum[:16])
	}
	return "agent_" + p.AccountID + "_" + aid
}

// CountQuery counts one query of p's account against its daily quota, or refuses it with errs.RateLimited and a
// Retry-After until midnight UTC, when the quota resets. Call it once per user query (a session message, a run),
// before doing the work.
func (l *Limits) CountQuery(ctx context.Context, p auth.Principal) error {
	if p.AccountID == "" {
		return nil
	}
	limit, err := l.queryLimit(ctx, p)
	if err != nil {
		return err
	}
	now := l.cfg.Now().UTC()
	day := now.Format("20060102")
	cctx, cancel := context.WithTimeout(ctx, countWait)
	_, ok, err := l.quota.take(cctx, day, p.AccountID+"."+day, uint64(limit))
	cancel()
	if err != nil {
		if l.unavailable(ctx, err, "daily quota") {
			return nil
		}
		return fmt.Errorf("daily quota: %w", err)
	}
	if !ok {
		midnight := time.Date(now.Year(), now.Month(), now.Day()+1, 0, 0, 0, 0, time.UTC)
		return errs.Limit(midnight.Sub(now), "daily query limit of %d reached; it resets at 00:00 UTC", limit)
	}
	return nil
}

// DailyUsage returns an account's daily quota and how much of it today (UTC) has used: what GraphQL's
// `user { dailyQueryLimit dailyUsedQueries }` shows.
func (l *Limits) DailyUsage(ctx context.Context, accountID string) (limit, used int, err error) {
	limit, err = l.dailyLimit(ctx, accountID)
	if err != nil {
		return 0, 0, err
	}
	day := l.cfg.Now().UTC().Format("20060102")
	e, err := l.kvQ.Get(ctx, accountID+"."+day)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return limit, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("daily usage of %s: %w", accountID, err)
	}
	n, err := strconv.Atoi(string(e.Value()))
	if err != nil {
		return 0, 0, fmt.Errorf("daily usage of %s: value %q is not a count", accountID, e.Value())
	}
	return limit, n, nil
}

// queryLimit is the daily quota of p's account: as authentication found it with the principal, or else as the
// accounts read model has it.
func (l *Limits) queryLimit(ctx context.Context, p auth.Principal) (int, error) {
	if !p.LimitsFound {
		return l.dailyLimit(ctx, p.AccountID)
	}
	daily, _ := l.Effective(Own{DailyQueryLimit: p.DailyQueryLimit})
	return daily, nil
}

// dailyLimit is the account's own quota, or the default.
func (l *Limits) dailyLimit(ctx context.Context, accountID string) (int, error) {
	if l.cfg.Accounts == nil {
		return l.cfg.DailyQueries, nil
	}
	own, _, _, err := l.cfg.Accounts.Limits(ctx, accountID)
	if err != nil {
		return 0, fmt.Errorf("daily quota of %s: %w", accountID, err)
	}
	daily, _ := l.Effective(Own{DailyQueryLimit: own})
	return daily, nil
}

// Effective returns the limits that apply to an account: its own, or the platform's defaults where it sets none
// (the read model keeps 0 for "the default", which is not what a person reading a list of accounts should see).
func (l *Limits) Effective(acct Own) (dailyQueries, requestsPerMinute int) {
	dailyQueries, requestsPerMinute = l.cfg.DailyQueries, l.cfg.RequestsPerMinute
	if acct.DailyQueryLimit > 0 {
		dailyQueries = acct.DailyQueryLimit
	}
	if acct.RequestsPerMinute > 0 {
		requestsPerMinute = acct.RequestsPerMinute
	}
	return dailyQueries, requestsPerMinute
}

// Usage is an account's limits as they apply, and today's use of its quota.
type Usage struct {
	AccountID         string `json:"account_id"`
	DailyQueryLimit   int    `json:"daily_query_limit"`
	DailyQueriesUsed  int    `json:"daily_queries_used"`
	RequestsPerMinute int    `json:"requests_per_minute"`
	// OwnDailyQueryLimit and OwnRequestsPerMinute say whether the account sets the limit itself (false: the
	// platform's default applies).
	OwnDailyQueryLimit   bool `json:"own_daily_query_limit"`
	OwnRequestsPerMinute bool `json:"own_requests_per_minute"`
}

// Of returns an account's limits and today's use of its quota, or errs.NotFound when there is no such account.
func (l *Limits) Of(ctx context.Context, accountID string) (Usage, error) {
	if l.cfg.Accounts == nil {
		return Usage{}, errors.New("limits: no accounts read model")
	}
	daily, perMinute, ok, err := l.cfg.Accounts.Limits(ctx, accountID)
	acct := Own{DailyQueryLimit: daily, RequestsPerMinute: perMinute}
	if err != nil {
		return Usage{}, fmt.Errorf("limits of %s: %w", accountID, err)
	}
	if !ok {
		return Usage{}, errs.NotFoundf("account", accountID)
	}
	_, used, err := l.DailyUsage(ctx, accountID)
	if err != nil {
		return Usage{}, err
	}
	u := Usage{AccountID: accountID, DailyQueriesUsed: used,
		OwnDailyQueryLimit: acct.DailyQueryLimit > 0, OwnRequestsPerMinute: acct.RequestsPerMinute > 0}
	u.DailyQueryLimit, u.RequestsPerMinute = l.Effective(acct)
	return u, nil
}
