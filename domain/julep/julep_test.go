package julep_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/contrailhq/contrail/domain/julep"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/errs"
)

const acct = "acct_a"

// fold applies events to a state as the log would, numbering them.
func fold[S any, P interface {
	*S
	eventstore.State
}](s P, id string, evs ...events.Event) {
	for i, ev := range evs {
		s.Apply(events.Envelope{AggregateID: events.JulepAggregateID(acct, id), Account: acct, Version: uint64(i + 1),
			Time: time.Unix(int64(i), 0), Event: ev})
	}
}

const agentID = "6f1c5d2a-1111-4e2b-9d3c-0123456789ab"

func TestAgentLifecycle(t *testing.T) {
	spec := events.JulepAgentSpec{Name: "Ada", About: "a", Metadata: json.RawMessage(`{"a":1,"b":2}`)}
	var s julep.AgentState
	evs, err := julep.CreateAgent(&s, acct, spec)
	if err != nil || len(evs) != 1 {
		t.Fatalf("create: %v %v", evs, err)
	}
	fold(&s, agentID, evs...)
	if s.ID != agentID || s.Account != acct || !s.Owned(acct) {
		t.Fatalf("state after create: %+v", s)
	}
	// The same request again (its ID derives from the request): nothing.
	if evs, err := julep.CreateAgent(&s, acct, spec); err != nil || len(evs) != 0 {
		t.Fatalf("create again: %v %v", evs, err)
	}
	name := "Ada II"
	evs, err = julep.PatchAgent(&s, acct, agentID, julep.AgentPatch{Name: &name, Metadata: json.RawMessage(`{"b":3,"c":4}`)})
	if err != nil {
		t.Fatal(err)
	}
	got := evs[0].(events.JulepAgentUpdated).Spec
	var md map[string]int
	_ = json.Unmarshal(got.Metadata, &md)
	if got.Name != "Ada II" || got.About != "a" || md["a"] != 1 || md["b"] != 3 || md["c"] != 4 {
		t.Fatalf("patch: %+v %s", got, got.Metadata)
	}
	if _, err := julep.PatchAgent(&s, "acct_b", agentID, julep.AgentPatch{}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("another account's patch: %v", err)
	}
	evs, _ = julep.DeleteAgent(&s, acct, agentID, false)
	fold(&s, agentID, append([]events.Event{events.JulepAgentCreated{Spec: spec}}, evs...)...)
	if s.Owned(acct) || !s.Deleted {
		t.Fatalf("after delete: %+v", s)
	}
	if _, err := julep.DeleteAgent(&s, acct, agentID, false); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("delete a deleted agent: %v", err)
	}
	if evs, err := julep.DeleteAgent(&s, acct, agentID, true); err != nil || len(evs) != 0 {
		t.Fatalf("a retried delete of a deleted agent: %v %v", evs, err)
	}
	// Create-or-update at a deleted agent's UUID makes it again.
	if evs, err := julep.CreateOrUpdateAgent(&s, acct, spec); err != nil || evs[0].EventType() != "jagent.created" {
		t.Fatalf("create-or-update at a deleted agent: %v %v", evs, err)
	}
}

func TestAgentTools(t *testing.T) {
	var s julep.AgentState
	fold(&s, agentID, events.JulepAgentCreated{Spec: events.JulepAgentSpec{Name: "x"}})
	fn := events.JulepTool{Name: "f", Type: "function", Function: &events.JulepFunctionDef{}}
	evs, err := julep.AddTool(&s, acct, agentID, "t1", fn)
	if err != nil {
		t.Fatal(err)
	}
	fold(&s, agentID, append([]events.Event{events.JulepAgentCreated{Spec: events.JulepAgentSpec{Name: "x"}}}, evs...)...)
	if evs, _ := julep.AddTool(&s, acct, agentID, "t1", fn); len(evs) != 0 {
		t.Fatalf("the same tool request again added %v", evs)
	}
	if _, err := julep.AddTool(&s, acct, agentID, "t2", events.JulepTool{Name: "F", Type: "function"}); errs.CodeOf(err) != errs.Invalid {
		t.Fatalf("a second tool of the same name: %v", err)
	}
	if _, err := julep.ReplaceTool(&s, acct, agentID, "nope", fn); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("replace a missing tool: %v", err)
	}
	evs, _ = julep.DeleteTool(&s, acct, agentID, "t1")
	s.Apply(events.Envelope{Event: evs[0]})
	if len(s.Tools) != 0 {
		t.Fatalf("tools after delete: %v", s.Tools)
	}
}

func TestDocOwner(t *testing.T) {
	owner := events.DocOwner{Role: "agent", ID: agentID}
	var s julep.DocState
	fold(&s, "d", events.DocCreated{Owner: owner, Title: "t", Content: json.RawMessage(`["a","b"]`)})
	if got := s.Texts(); len(got) != 2 || got[1] != "b" {
		t.Fatalf("texts: %v", got)
	}
	other := events.DocOwner{Role: "user", ID: agentID}
	if _, err := julep.DeleteDoc(&s, acct, "d", other, false); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("delete through another owner: %v", err)
	}
	if evs, err := julep.DeleteDoc(&s, acct, "d", owner, false); err != nil || len(evs) != 1 {
		t.Fatalf("delete: %v %v", evs, err)
	}
	if got := julep.ContentStrings(json.RawMessage(`"one"`)); len(got) != 1 || got[0] != "one" {
		t.Fatalf("a string content: %v", got)
	}
}

func TestMergeObjects(t *testing.T) {
	cases := []struct{ old, patch, want string }{
		{`{"a":1}`, `{"b":2}`, `{"a":1,"b":2}`},
		{`{"a":1}`, `{"a":null}`, `{"a":null}`},
		{``, `{"a":1}`, `{"a":1}`},
		{`{"a":1}`, ``, `{"a":1}`},
		{`{"a":1}`, `null`, `{"a":1}`},
		{`{"a":1}`, `[1]`, `[1]`},
	}
	for _, c := range cases {
		got := events.MergeObjects(json.RawMessage(c.old), json.RawMessage(c.patch))
		if string(got) != c.want {
			t.Errorf("merge %s with %s: %s, want %s", c.old, c.patch, got, c.want)
		}
	}
}
