package commands_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

// quota is a QueryCounter with a fixed daily limit, standing in for the security issue's limits package.
type quota struct {
	mu    sync.Mutex
	limit int
	used  map[string]int
}

func (q *quota) CountQuery(_ context.Context, p auth.Principal) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.used[p.AccountID] >= q.limit {
		return errs.Limit(time.Hour, "daily query limit of %d reached", q.limit)
	}
	q.used[p.AccountID]++
	return nil
}

func (q *quota) DailyUsage(_ context.Context, account string) (int, int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.limit, q.used[account], nil
}

// TestPostingCountsAQuery: a posted message counts against the daily quota; past it the post fails as rate
// limited and appends nothing; bad input is refused before it is counted.
func TestPostingCountsAQuery(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	q := &quota{limit: 2, used: map[string]int{}}
	c := commands.New(commands.Config{Store: n.Store, Views: n.Views, Agents: n.Agents, Blobs: n.Blobs, Queries: q})
	sc := commands.NewSessions(n.Sessions, n.Agents, q, c.Embeds, nil)
	p, _ := n.NewAccount(t, "ada")
	ctx := context.Background()
	s, err := sc.Create(ctx, p, commands.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: ""}); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("empty text: %v", err)
	}
	for i := range 2 {
		if _, err := sc.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: "hello"}); err != nil {
			t.Fatalf("query %d: %v", i, err)
		}
	}
	_, err = sc.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: "one too many"})
	if e := errs.As(err); e == nil || e.Code != errs.RateLimited || e.RetryAfter != time.Hour {
		t.Fatalf("third query: %v, want rate limited", err)
	}
	limit, used, _ := c.Accounts.DailyUsage(ctx, p.AccountID)
	if limit != 2 || used != 2 {
		t.Fatalf("usage %d/%d, want 2/2", used, limit)
	}
	history, _, err := n.Store.Load(ctx, events.Ref{Type: "session", ID: s.ID})
	if err != nil {
		t.Fatal(err)
	}
	posted := 0
	for _, e := range history {
		if e.Type == "session.message_posted" {
			posted++
		}
	}
	if posted != 2 {
		t.Fatalf("%d messages posted, want 2", posted)
	}
}
