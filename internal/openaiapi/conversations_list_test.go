package openaiapi_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3/conversations"
	"github.com/openai/openai-go/v3/responses"

	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/waittest"
	"github.com/contrailhq/contrail/projections"
)

// conversationPage is GET /v1/conversations's answer as the test reads it.
type conversationPage struct {
	Object string `json:"object"`
	Data   []struct {
		ID        string            `json:"id"`
		Object    string            `json:"object"`
		CreatedAt int64             `json:"created_at"`
		Metadata  map[string]string `json:"metadata"`
		Preview   string            `json:"preview"`
	} `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// TestConversationsList: GET /v1/conversations (an extension) lists an account's conversations from its index
// (projections.Conversations), newest first unless asked, a page at a time with limit and after, each with its
// metadata and the first words of its first user message; a deleted one leaves it, another account's never
// shows (nor serves as a cursor), and a query parameter the list does not apply is refused, naming it.
func TestConversationsList(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := ctxFor(t)
	me, key := e.node.NewAccount(t, "lister")
	client := sdk(e.node, key)
	var made []string
	for i, text := range []string{"alpha", "bravo", "charlie", "delta one two three four five six seven eight nine ten eleven twelve"} {
		c, err := client.Conversations.New(ctx, conversations.ConversationNewParams{
			Items:    []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage(text, responses.EasyInputMessageRoleUser)},
			Metadata: map[string]string{"n": fmt.Sprint(i)},
		})
		if err != nil {
			t.Fatalf("create %s: %v", text, apiErr(err))
		}
		made = append(made, c.ID)
	}
	theirs, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{
		Items: []responses.ResponseInputItemUnionParam{responses.ResponseInputItemParamOfMessage("theirs", responses.EasyInputMessageRoleUser)},
	})
	if err != nil {
		t.Fatalf("another account's create: %v", apiErr(err))
	}
	if _, err := client.Conversations.Delete(ctx, made[2]); err != nil {
		t.Fatalf("delete: %v", apiErr(err))
	}
	list := func(query string) (string, conversationPage) {
		t.Helper()
		r := e.node.Do(t, key, http.MethodGet, "/v1/conversations"+query, nil)
		if r.Status != http.StatusOK {
			t.Fatalf("list %s: %d %s", query, r.Status, r.Body)
		}
		var p conversationPage
		r.JSON(t, &p)
		var out []string
		for _, c := range p.Data {
			if c.Object != "conversation" || c.CreatedAt == 0 {
				t.Fatalf("list %s: not a conversation: %s", query, r.Body)
			}
			out = append(out, c.Preview)
		}
		return strings.Join(out, ","), p
	}
	got, p := list("")
	if want := "delta one two three four five six seven eight nine ten eleven…,bravo,alpha"; got != want || p.HasMore || p.Object != "list" {
		t.Fatalf("list: %q (more %v), want %q", got, p.HasMore, want)
	}
	if p.Data[0].ID != made[3] || p.Data[0].Metadata["n"] != "3" || *p.FirstID != made[3] || *p.LastID != made[0] {
		t.Fatalf("newest first, with its metadata and cursors: %+v", p)
	}
	if got, p := list("?limit=2&order=asc"); got != "alpha,bravo" || !p.HasMore {
		t.Fatalf("first page ascending: %s (more %v)", got, p.HasMore)
	}
	if got, p := list("?limit=2&order=asc&after=" + made[1]); got != "delta one two three four five six seven eight nine ten eleven…" || p.HasMore {
		t.Fatalf("after bravo ascending: %s (more %v)", got, p.HasMore)
	}
	if got, p := list("?limit=1&after=" + made[3]); got != "bravo" || !p.HasMore {
		t.Fatalf("after delta, newest first: %s (more %v)", got, p.HasMore)
	}
	if got, _ := list("?after=" + theirs.ID); got != "" {
		t.Fatalf("after another account's conversation: %s", got)
	}
	// The other account lists its own only.
	r := e.node.Do(t, e.key, http.MethodGet, "/v1/conversations", nil)
	var other conversationPage
	r.JSON(t, &other)
	if r.Status != http.StatusOK || len(other.Data) != 1 || other.Data[0].ID != theirs.ID || other.Data[0].Preview != "theirs" {
		t.Fatalf("the other account's list: %d %s", r.Status, r.Body)
	}
	for _, bad := range []struct{ query, param string }{{"?status=active", "status"}, {"?limit=0", "limit"}, {"?order=up", "order"}} {
		r := e.node.Do(t, key, http.MethodGet, "/v1/conversations"+bad.query, nil)
		if e := checkErrorBody(t, r.Status, r.Body); r.Status != http.StatusBadRequest || string(e.Error.Param) != `"`+bad.param+`"` {
			t.Fatalf("%s: want a 400 naming %s, got %d %s", bad.query, bad.param, r.Status, r.Body)
		}
	}
	// The index holds the account's conversations under its own keys, and (once it folds the deletion, which the
	// listing did not wait for) not the one deleted.
	waittest.Until(t, "the conversations in the read model", func() bool {
		for i, id := range made {
			_, ok, err := projections.Get[projections.Listed[projections.ConversationView]](ctx, e.node.Views, "conversations",
				projections.OwnedKey(me.AccountID, id))
			if err != nil {
				t.Fatalf("the index holds %s: %v", id, err)
			}
			if ok != (i != 2) {
				return false
			}
		}
		return true
	})
}

// TestConversationsListWhoseIndexStandsStillIsA503: past the read wait, a listing whose index stands still is a 503
// saying the read model is behind, not a listing without the conversation just made; once the index goes on, the
// listing has it.
func TestConversationsListWhoseIndexStandsStillIsA503(t *testing.T) {
	t.Parallel()
	e := newEnv(t, platformtest.WithShortReadWait())
	ctx := ctxFor(t)
	release := e.node.HoldLease(t, "projection.conversations")
	c, err := e.client.Conversations.New(ctx, conversations.ConversationNewParams{})
	if err != nil {
		t.Fatalf("create: %v", apiErr(err))
	}
	var page conversationPage
	err = e.client.Get(ctx, "conversations", nil, &page)
	wantBehind(t, "list conversations", err)

	release()
	waittest.Until(t, "the conversation in the list", func() bool {
		page = conversationPage{}
		err := e.client.Get(ctx, "conversations", nil, &page)
		return err == nil && len(page.Data) == 1 && page.Data[0].ID == c.ID
	})
}
