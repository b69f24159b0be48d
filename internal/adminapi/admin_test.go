package adminapi_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/runtime"
	"github.com/contrailhq/contrail/internal/adminapi"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/deadletter"
	"github.com/contrailhq/contrail/internal/limits"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
)

func TestDeadLettersAreListedAndRedrivenThroughTheAdminFace(t *testing.T) {
	t.Parallel()
	var broken atomic.Bool
	broken.Store(true)
	var handled atomic.Int32
	n := platformtest.Start(t, platformtest.WithHandlers(runtime.Handler{
		Name: "greeter", EventTypes: []string{"account.created"}, MaxAttempts: 2,
		Handle: func(_ context.Context, e events.Envelope) error {
			if broken.Load() && e.Event.(events.AccountCreated).Name == "poison" {
				return errors.New("greeter cannot greet poison")
			}
			handled.Add(1)
			return nil
		},
	}))
	_, key := n.NewAccount(t, "alice")
	n.NewAccount(t, "poison")

	var list struct {
		DeadLetters []deadletter.DeadLetter `json:"dead_letters"`
	}
	deadline := time.Now().Add(15 * time.Second)
	for len(list.DeadLetters) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no dead letter listed")
		}
		time.Sleep(20 * time.Millisecond)
		n.Do(t, n.AdminKey, "GET", "/admin/dlq", nil).JSON(t, &list)
	}
	d := list.DeadLetters[0]
	if d.Handler != "greeter" || d.EventType != "account.created" || d.Reason == "" {
		t.Fatalf("dead letter: %+v", d)
	}
	if r := n.Do(t, key, "GET", "/admin/dlq", nil); r.Status != 403 {
		t.Fatalf("a non-admin listing dead letters: %d", r.Status)
	}
	if r := n.Do(t, n.AdminKey, "POST", "/admin/dlq/abc/redrive", nil); r.Status != 400 {
		t.Fatalf("re-drive of a non-number: %d %s", r.Status, r.Body)
	}
	if r := n.Do(t, n.AdminKey, "POST", "/admin/dlq/999999/redrive", nil); r.Status != 404 {
		t.Fatalf("re-drive of an unknown entry: %d %s", r.Status, r.Body)
	}
	before := handled.Load()
	broken.Store(false)
	if r := n.Do(t, n.AdminKey, "POST", fmt.Sprintf("/admin/dlq/%d/redrive", d.Seq), nil); r.Status != 200 {
		t.Fatalf("re-drive: %d %s", r.Status, r.Body)
	}
	for handled.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("the re-driven event was not handled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	n.Do(t, n.AdminKey, "GET", "/admin/dlq", nil).JSON(t, &list)
	if len(list.DeadLetters) != 0 {
		t.Fatalf("dead letters after re-drive: %+v", list.DeadLetters)
	}
}

// An admin reads and changes an account's limits over HTTP; what comes back is what applies (the defaults where
// the account sets none), and a request that would change nothing is refused rather than answered 200.
func TestAccountLimitsAreReadAndChangedThroughTheAdminFace(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	p, key := n.NewAccount(t, "script")
	var u limits.Usage
	r := n.Do(t, n.AdminKey, "GET", "/admin/accounts/"+p.AccountID+"/limits", nil)
	r.JSON(t, &u)
	if r.Status != 200 || u != (limits.Usage{AccountID: p.AccountID, DailyQueryLimit: commands.DefaultDailyQueryLimit, RequestsPerMinute: commands.DefaultRequestsPerMinute}) {
		t.Fatalf("a new account's limits: %d %s", r.Status, r.Body)
	}
	var list struct {
		Accounts []struct {
			ID                         string `json:"id"`
			DailyQueryLimit            int    `json:"daily_query_limit"`
			EffectiveDailyQueryLimit   int    `json:"effective_daily_query_limit"`
			EffectiveRequestsPerMinute int    `json:"effective_requests_per_minute"`
		} `json:"accounts"`
	}
	n.Do(t, n.AdminKey, "GET", "/admin/accounts", nil).JSON(t, &list)
	found := false
	for _, a := range list.Accounts {
		if a.ID == p.AccountID {
			found = true
			if a.EffectiveDailyQueryLimit != commands.DefaultDailyQueryLimit || a.EffectiveRequestsPerMinute != commands.DefaultRequestsPerMinute {
				t.Fatalf("the account list shows %+v, want the defaults as its effective limits", a)
			}
		}
	}
	if !found {
		t.Fatalf("the account is not listed: %+v", list)
	}

	r = n.Do(t, n.AdminKey, "POST", "/admin/accounts/"+p.AccountID+"/limits", map[string]int{"requests_per_minute": 5000})
	r.JSON(t, &u)
	if r.Status != 200 || u.RequestsPerMinute != 5000 || !u.OwnRequestsPerMinute || u.DailyQueryLimit != commands.DefaultDailyQueryLimit || u.OwnDailyQueryLimit {
		t.Fatalf("after raising the rate: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"/admin/accounts/" + p.AccountID + "/limits", map[string]int{}, ""},
		{"/admin/accounts/" + p.AccountID + "/limits", map[string]int{"requests_per_minute": -1}, "requests_per_minute"},
		{"/admin/accounts/acct*/limits", map[string]int{"requests_per_minute": 1}, "accountID"},
	} {
		r := n.Do(t, n.AdminKey, "POST", c.path, c.body)
		if r.Status != 400 || !strings.Contains(string(r.Body), c.field) {
			t.Errorf("POST %s %v: %d %s, want 400 naming %q", c.path, c.body, r.Status, r.Body, c.field)
		}
	}
	if r := n.Do(t, n.AdminKey, "GET", "/admin/accounts/acct_nobody/limits", nil); r.Status != 404 {
		t.Fatalf("limits of an unknown account: %d %s", r.Status, r.Body)
	}
	if r := n.Do(t, key, "GET", "/admin/accounts/"+p.AccountID+"/limits", nil); r.Status != 403 {
		t.Fatalf("a non-admin reading limits: %d %s", r.Status, r.Body)
	}
}

func TestUsageReportsEachAccountsQueriesAgainstItsQuota(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ada, key := n.NewAccount(t, "ada")
	if r := n.Do(t, n.AdminKey, "POST", "/admin/accounts/"+ada.AccountID+"/limits", map[string]int{"daily_query_limit": 5}); r.Status != 200 {
		t.Fatalf("set limits: %d %s", r.Status, r.Body)
	}
	ctx := context.Background()
	for range 2 {
		if err := n.Limits.CountQuery(ctx, ada); err != nil {
			t.Fatal(err)
		}
	}
	var report struct {
		Day      string
		Accounts []adminapi.AccountUsage
	}
	n.Do(t, n.AdminKey, "GET", "/admin/usage", nil).JSON(t, &report)
	if report.Day != time.Now().UTC().Format(time.DateOnly) {
		t.Fatalf("day %q", report.Day)
	}
	found := false
	for _, a := range report.Accounts {
		if a.AccountID == ada.AccountID {
			found = true
			if a.Name != "ada" || a.DailyQueryLimit != 5 || a.DailyUsedQueries != 2 {
				t.Fatalf("ada's usage: %+v", a)
			}
		}
	}
	if !found || len(report.Accounts) != 2 {
		t.Fatalf("the report lists %+v, want the admin and ada", report.Accounts)
	}
	if r := n.Do(t, key, "GET", "/admin/usage", nil); r.Status != 403 {
		t.Fatalf("a non-admin reading usage: %d %s", r.Status, r.Body)
	}
}
