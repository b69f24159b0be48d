package account

import (
	"testing"

	"github.com/contrailhq/contrail/events"
)

func TestAnAccountsKeysAndLimits(t *testing.T) {
	var a State
	for _, ev := range []events.Event{
		events.AccountCreated{Name: "alice", DailyQueryLimit: 10},
		events.AccountKeyIssued{KeyID: "key_1", Hash: "h1"},
		events.AccountKeyIssued{KeyID: "key_2", Hash: "h2"},
		events.AccountKeyRevoked{KeyID: "key_1"},
		events.AccountKeyRevoked{KeyID: "key_nope"},
		events.AccountLimitsChanged{RequestsPerMinute: 60}, // 0 leaves the daily limit as it is
	} {
		a.Apply(events.Envelope{AggregateID: "acct_1", Event: ev})
	}
	if !a.Exists || a.Name != "alice" || a.DailyQueryLimit != 10 || a.RequestsPerMinute != 60 {
		t.Fatalf("account: %+v", a)
	}
	if !a.Keys["key_1"].Revoked || a.Keys["key_2"].Revoked || len(a.Keys) != 2 {
		t.Fatalf("keys: %+v %+v", a.Keys["key_1"], a.Keys["key_2"])
	}
}
