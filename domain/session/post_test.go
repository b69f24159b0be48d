package session_test

import (
	"reflect"
	"testing"

	"github.com/contrailhq/contrail/domain/session"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

func newFixieSession(t *testing.T) *sessionLog {
	t.Helper()
	l := &sessionLog{}
	evs, err := session.Create(&l.s, "s1", events.SessionCreated{FrontendAgentID: "fixie", FrontendAgentHandle: "fixie"})
	if err != nil {
		t.Fatal(err)
	}
	l.add(t, evs...)
	return l
}

var fixieFront = session.Target{ID: "fixie", Handle: "fixie", Kind: session.KindFront}

func query(id string) events.SessionMessagePosted {
	return events.SessionMessagePosted{MessageID: id, Text: "hello " + id, SentBy: "ada", Type: events.MessageQuery}
}

// A query goes with its post only when every query before it is answered, and only when its front agent is known;
// otherwise the post carries no dispatch and the session runner decides.
func TestAQueryGoesWithItsPostOnlyToAnIdleSession(t *testing.T) {
	front := fixieFront
	cases := []struct {
		name string
		// before posts queries (and answers the first `answered` of them) before the post under test.
		before, answered int
		front            *session.Target
		dispatched       bool
	}{
		{name: "new session", front: &front, dispatched: true},
		{name: "every query answered", before: 2, answered: 2, front: &front, dispatched: true},
		{name: "a query in flight", before: 1, front: &front},
		{name: "a query waiting behind one in flight", before: 2, answered: 1, front: &front},
		{name: "front agent not usable", front: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := newFixieSession(t)
			for i := range c.before {
				evs, err := session.Post(&l.s, "acct_a", query(string(rune('a'+i))), &front)
				if err != nil {
					t.Fatal(err)
				}
				l.add(t, evs...)
				if q := l.s.Next(); q != nil {
					l.add(t, session.Dispatch(&l.s, q, front)...)
				}
				if i < c.answered {
					q := l.s.Queries[i]
					l.add(t, session.Reply(&l.s, q, front, "re", nil)...)
				}
			}
			evs, err := session.Post(&l.s, "acct_a", query("z"), c.front)
			if err != nil {
				t.Fatal(err)
			}
			l.add(t, evs...)
			last := l.envs[len(l.envs)-1]
			d, ok := session.DispatchOf(last)
			if ok != c.dispatched {
				t.Fatalf("post carries a dispatch: %v, want %v (%+v)", ok, c.dispatched, last.Event)
			}
			q, _ := l.s.Query("z")
			if q.Dispatched != c.dispatched {
				t.Fatalf("query dispatched: %v, want %v", q.Dispatched, c.dispatched)
			}
			if ok && (d.AgentID != "fixie" || d.Kind != session.KindFront || d.Path != "fixie" || d.MessageID != "z" || d.ReplyID != q.ReplyID) {
				t.Fatalf("dispatch %+v for query %+v", d, q)
			}
			if ok && l.s.Next() != nil {
				t.Fatal("a query that went with its post is offered to the session runner again")
			}
		})
	}
}

// A post refused leaves nothing to dispatch: another account's session, a deleted one, a Julep session.
func TestAPostRefusedDispatchesNothing(t *testing.T) {
	l := newFixieSession(t)
	if _, err := session.Post(&l.s, "acct_b", query("x"), &fixieFront); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another account's session: %v", err)
	}
	l.add(t, events.SessionDeleted{})
	if _, err := session.Post(&l.s, "acct_a", query("x"), &fixieFront); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("deleted session: %v", err)
	}
}

// A query that went with its post is folded as if a session.query_dispatched had followed the post: the same top
// path, the same dispatch, the same IDs for what is recorded on it, so the handlers cannot tell them apart.
func TestADispatchInThePostFoldsAsADispatchEvent(t *testing.T) {
	withPost := newFixieSession(t)
	evs, err := session.Post(&withPost.s, "acct_a", query("q"), &fixieFront)
	if err != nil {
		t.Fatal(err)
	}
	id := events.NewID()
	withPost.add(t, events.WithID(id, evs[0]))

	apart := newFixieSession(t)
	evs, err = session.Post(&apart.s, "acct_a", query("q"), nil)
	if err != nil {
		t.Fatal(err)
	}
	apart.add(t, events.WithID(id, evs[0]))
	apart.add(t, session.Dispatch(&apart.s, apart.s.Next(), fixieFront)...)

	a, b := withPost.s.Queries[0], apart.s.Queries[0]
	if !a.Dispatched || !reflect.DeepEqual(a.Paths, b.Paths) {
		t.Fatalf("with the post: %+v\napart: %+v", *a.Paths["fixie"], *b.Paths["fixie"])
	}
	step := events.SessionAgentStep{Kind: session.StepAnswer, Text: "hi"}
	x := session.Record(&withPost.s, a, a.Top(), 0, step)
	y := session.Record(&apart.s, b, b.Top(), 0, step)
	xid, _ := events.Unwrap(x[0])
	yid, _ := events.Unwrap(y[0])
	if xid == "" || xid != yid {
		t.Fatalf("a step on the path gets ID %q with the post's dispatch and %q with a dispatch event", xid, yid)
	}
}

// A query is answered in the chat log as it is now: the replies to earlier queries (though appended after it was
// posted), but neither the query itself nor the queries posted after it.
func TestAQuerysContextIsTheLogWithoutItselfAndLaterQueries(t *testing.T) {
	l := newFixieSession(t)
	post := func(id string) *session.Query {
		evs, err := session.Post(&l.s, "acct_a", query(id), nil)
		if err != nil {
			t.Fatal(err)
		}
		l.add(t, evs...)
		q, _ := l.s.Query(id)
		return q
	}
	a, b := post("a"), post("b")
	post("c")
	l.add(t, session.Dispatch(&l.s, l.s.Next(), fixieFront)...)
	l.add(t, session.Reply(&l.s, a, fixieFront, "re a", nil)...)

	history, q := l.s.Context(b)
	if q.ID != "b" || q.Text != "hello b" {
		t.Fatalf("the query as a message: %+v", q)
	}
	var got []string
	for _, m := range history {
		got = append(got, m.Type+":"+m.Text)
	}
	want := []string{"query:hello a", "response:re a"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("history %q, want %q", got, want)
	}
	history, q = l.s.Context(a)
	if q.ID != "a" || len(history) != 1 || history[0].Text != "re a" {
		t.Fatalf("the first query's context: %+v, %+v", history, q)
	}
}
