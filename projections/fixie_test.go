package projections_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/commands"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/projections"
)

// TestFixieReadModelsRebuildEqualLive: the agents, sessions, embeds and accounts read models rebuilt from sequence 0 equal
// the live ones, after renames, unpublishing, deletions and replies.
func TestFixieReadModelsRebuildEqualLive(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	p, _ := n.NewAccount(t, "ada")
	q, _ := n.NewAccount(t, "bob")
	yes, no, url, newHandle := true, false, "http://127.0.0.1:9/", "renamed"
	for _, h := range []string{"one", "two", "three"} {
		if _, err := n.RegisterAgent(ctx, p, commands.AgentInput{Handle: h, QueryURL: &url, Published: &yes}); err != nil {
			t.Fatal(err)
		}
	}
	n.UpdateAgent(t, p, commands.AgentInput{Handle: "one", NewHandle: &newHandle})
	n.UpdateAgent(t, p, commands.AgentInput{Handle: "two", Published: &no})
	n.DeleteAgent(t, p, "three")
	var sessions []string
	for _, who := range []struct {
		name string
		acct commands.NewSession
	}{{"ada", commands.NewSession{}}, {"bob", commands.NewSession{Name: "bob's"}}} {
		actor := p
		if who.name == "bob" {
			actor = q
		}
		s, err := n.SessionCommands.Create(ctx, actor, who.acct)
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s.ID)
		if _, _, err := n.Commands.Embeds.Upload(ctx, actor, "text/plain", "", strings.NewReader("note of "+who.name)); err != nil {
			t.Fatal(err)
		}
		if _, err := n.SessionCommands.Post(ctx, actor, commands.NewSessionMessage{Session: s.ID, Text: "hello",
			Embeds: map[string]commands.EmbedSource{"a": {URI: "data:,inline"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.SessionCommands.Delete(ctx, q, sessions[1]); err != nil {
		t.Fatal(err)
	}
	// Let the runner answer ada's query, then let every read model catch up with the log.
	deadline := time.Now().Add(20 * time.Second)
	for {
		s, _, err := n.Sessions.Get(ctx, sessions[0], eventstore.Fresh)
		if err != nil {
			t.Fatal(err)
		}
		if s.AnsweredCount() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no reply after 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for {
		ok, _, err := n.Views.CaughtUp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("read models not caught up after 20s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, name := range []string{"agents", "sessions", "embeds", "accounts"} {
		live, err := n.Views.Dump(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Views.Rebuild(ctx, name, nil); err != nil {
			t.Fatalf("rebuild %s: %v", name, err)
		}
		rebuilt, err := n.Views.Dump(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) == 0 || len(rebuilt) != len(live) {
			t.Fatalf("%s: rebuilt has %d documents, live had %d", name, len(rebuilt), len(live))
		}
		for k, v := range live {
			if !jsonEqual(v, rebuilt[k]) {
				t.Fatalf("%s document %s: live %s, rebuilt %s", name, k, v, rebuilt[k])
			}
		}
	}
}

// TestAKeysDocumentCarriesItsAccountsLimits: authentication reads one document per request, the key's, so the
// account's name, role and limits live in every live key's document and change there when the account's do.
func TestAKeysDocumentCarriesItsAccountsLimits(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	first := n.CreateAccount(t, commands.NewAccount{Name: "ada", DailyQueryLimit: 3})
	admin := auth.Principal{AccountID: commands.AdminAccountID}
	second := n.IssueKey(t, admin, first.AccountID, "second")
	n.SetLimits(t, first.AccountID, 7, 9)
	res, err := n.Commands.Accounts.RevokeKey(ctx, admin, first.AccountID, first.KeyID)
	n.Shown(t, "revoke the first key", res, err, projections.Accounts{})
	n.SetLimits(t, first.AccountID, 5, 0) // 0 keeps the rate of 9

	dir := projections.NewDirectory(n.Views)
	k, ok, err := dir.KeyByHash(ctx, auth.HashKey(second.Key))
	if err != nil || !ok {
		t.Fatalf("the live key: found %v, %v", ok, err)
	}
	want := auth.Account{ID: first.AccountID, Name: "ada", DailyQueryLimit: 5, RequestsPerMinute: 9}
	if k.ID != second.KeyID || k.Revoked || k.Account == nil || *k.Account != want {
		t.Fatalf("the live key reads %+v (account %+v), want key %s of %+v", k, k.Account, second.KeyID, want)
	}
	if _, ok, err := dir.KeyByHash(ctx, auth.HashKey(first.Key)); err != nil || ok {
		t.Fatalf("the revoked key: found %v, %v", ok, err)
	}
	p, err := auth.NewKeys(dir).Authenticate(ctx, second.Key)
	if err != nil {
		t.Fatal(err)
	}
	if p.AccountID != first.AccountID || p.Username != "ada" || p.DailyQueryLimit != 5 || p.RequestsPerMinute != 9 || !p.LimitsFound {
		t.Fatalf("principal %+v", p)
	}
}

// TestADirectoryForgetsTheKeysItFoundWhenAnAccountChanges: authentication remembers the keys it found while the
// accounts read model stands still (a key whose document went from the bucket behind the model's back still
// authenticates), and forgets them all once the model applies an account event, before the command that appended
// it answers: a key revoked is refused at once, and so is the key whose document went.
func TestADirectoryForgetsTheKeysItFoundWhenAnAccountChanges(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	first := n.CreateAccount(t, commands.NewAccount{Name: "ada"})
	admin := auth.Principal{AccountID: commands.AdminAccountID}
	second := n.IssueKey(t, admin, first.AccountID, "second")
	keys := auth.NewKeys(projections.NewDirectory(n.Views))
	for _, k := range []string{first.Key, second.Key} {
		if _, err := keys.Authenticate(ctx, k); err != nil {
			t.Fatalf("a live key: %v", err)
		}
	}

	var bucket string
	status, err := n.Views.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range status {
		if s.Name == "accounts" {
			bucket = s.Bucket
		}
	}
	kv, err := n.JS.KeyValue(ctx, bucket)
	if err != nil {
		t.Fatal(err)
	}
	if err := kv.Delete(ctx, projections.KeyHashKey(auth.HashKey(first.Key))); err != nil {
		t.Fatal(err)
	}
	if _, err := keys.Authenticate(ctx, first.Key); err != nil {
		t.Fatalf("a key found before its document went, the model standing still: %v, want it remembered", err)
	}

	res, err := n.Commands.Accounts.RevokeKey(ctx, admin, first.AccountID, second.KeyID)
	n.Shown(t, "revoke the second key", res, err, projections.Accounts{})
	if _, err := keys.Authenticate(ctx, second.Key); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("the key revoked: %v, want it refused at once", err)
	}
	if _, err := keys.Authenticate(ctx, first.Key); errs.CodeOf(err) != errs.Unauthorized {
		t.Fatalf("the key whose document went, after an account event: %v, want it read again and refused", err)
	}
}

// TestADeletedSessionTakesItsMessagesWithIt: a session's messages are documents of their own (the session's document
// lists none), ordered by the sequence of the event that made each; deleting the session deletes them.
func TestADeletedSessionTakesItsMessagesWithIt(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	ctx := context.Background()
	p, _ := n.NewAccount(t, "ada")
	s, err := n.SessionCommands.Create(ctx, p, commands.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.SessionCommands.Post(ctx, p, commands.NewSessionMessage{Session: s.ID, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var msgs []projections.MessageView
	for len(msgs) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the query and its reply in the read model after 20s: %+v", msgs)
		}
		time.Sleep(5 * time.Millisecond)
		if msgs, err = projections.ListAll[projections.MessageView](ctx, n.Views, "sessions", projections.SessionMessagesFilter(p.AccountID, s.ID)); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(msgs, func(a, b projections.MessageView) int { return cmp.Compare(a.Seq, b.Seq) })
	if msgs[0].Type != events.MessageQuery || msgs[0].Text != "hello" || msgs[1].InReplyTo != msgs[0].ID {
		t.Fatalf("the chat log by sequence: %+v", msgs)
	}
	seq, err := n.SessionCommands.Delete(ctx, p, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.Views.WaitFor(ctx, "sessions", seq); err != nil {
		t.Fatal(err)
	}
	if msgs, err = projections.ListAll[projections.MessageView](ctx, n.Views, "sessions", projections.SessionMessagesFilter(p.AccountID, s.ID)); err != nil || len(msgs) != 0 {
		t.Fatalf("the deleted session's messages: %+v, %v", msgs, err)
	}
	if _, ok, err := projections.Get[projections.SessionView](ctx, n.Views, "sessions", projections.SessionKey(p.AccountID, s.ID)); ok || err != nil {
		t.Fatalf("the deleted session's document: found %v, %v", ok, err)
	}
}
